"""The one door to WSD: :func:`open_system` decides which system answers and opens it.

Every front end opens a system with one call (the command line's ``workbench wsd`` commands,
the app's WSD page and its caches); the rules of which system answers live here once:

* a saved index folder answers as it is, read with the model's encoder;
* ``biencoder`` answers with the bi-encoder of the model (a bi-encoder directory, or the one the
  package ships for that base model); for a model without one :data:`~workbench.wsd.registry.
  FALLBACK_SYSTEM` answers, and the opened system's note says so;
* a SemCor system (``best``, ``plain``) answers with its SemCor index, built once per encoder
  (:func:`workbench.wsd.builds.semcor_index`); without SemCor in the data dir the WordNet-only
  index answers (said in the note);
* ``wordnet`` (and any system trained on ``wordnet``) answers with WordNet's gloss vectors: the
  full index when ``workbench wsd train --corpus wordnet`` has stored it, else one for the
  lemmas an input needs;
* settings changed from the system's (``changes``) or another training corpus (``train``)
  build an index of those settings on that corpus, once.

Example::

    opened = open_system()                              # the shipped bi-encoder
    opened.name, opened.note                            # ('biencoder', '')
    open_system("biencoder", "bert-base-uncased").note  # "there is no trained WSD bi-encoder ..."
    disambiguate(opened, "He sat on the bank of the river", "bank")
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from workbench.encoding.device import DtypeName
from workbench.encoding.encoder import Encoder
from workbench.encoding.pooling import Pooling
from workbench.encoding.rows import Progress
from workbench.errors import InputError
from workbench.lexicon.wordnet import WordNet
from workbench.wsd.biencoder import (
    CONTEXT_POOLING,
    biencoder_dir,
    check_model_folder,
    load_biencoder,
)
from workbench.wsd.builds import (
    SystemProgress,
    semcor_available,
    semcor_frequencies,
    semcor_index,
    trained_index,
    wordnet_index,
    wordnet_index_path,
)
from workbench.wsd.config import EncoderInfo
from workbench.wsd.evaluate import load_corpus
from workbench.wsd.levers import DEFAULT_LEVERS, TestTimeLevers, with_prior
from workbench.wsd.opened import Lemmas, OpenedSystem
from workbench.wsd.registry import (
    FALLBACK_SYSTEM,
    SYSTEMS,
    WORDNET_SYSTEM,
    get_system,
)
from workbench.wsd.store import load_index

#: The note of a WordNet-only index answering where a SemCor system was asked for.
NO_SEMCOR_NOTE = (
    "no SemCor in the data dir: the WordNet-only index is used (--system wordnet), which scores "
    "below WordNet's first sense; `workbench data download` fetches SemCor"
)


def fallback_note(model: str | None) -> str:
    """Why the :data:`~workbench.wsd.registry.FALLBACK_SYSTEM` answers where the bi-encoder was
    asked for."""
    what = "the packaged default model" if model is None else f"'{model}'"
    return (
        f"there is no trained WSD bi-encoder for {what}, so the '{FALLBACK_SYSTEM}' system "
        "answers (`workbench finetune wsd` trains one)"
    )


def offered_systems(model: str | None = None) -> list[str]:
    """The systems that answer as themselves for ``model`` (None: the packaged default), the
    default first: the bi-encoder where the model has one, the SemCor systems where SemCor is
    here, and the WordNet-only one."""
    names = []
    for name, system in SYSTEMS.items():
        if name == "biencoder" and biencoder_dir(model) is None:
            continue
        if name != "biencoder" and system.training == "semcor" and not semcor_available():
            continue
        names.append(name)
    return names


def missing_systems(model: str | None = None) -> dict[str, str]:
    """The systems of the registry that :func:`offered_systems` leaves out for ``model``, each
    with why, in one line (what a front end says beside its choice of systems).

    Example::

        missing_systems("all-mpnet-base-v2")
        # {'biencoder': "no WSD bi-encoder was trained for 'all-mpnet-base-v2' ..."}
    """
    what = "the packaged default model" if model is None else f"'{model}'"
    out = {}
    for name, system in SYSTEMS.items():
        if name == "biencoder" and biencoder_dir(model) is None:
            out[name] = (
                f"no WSD bi-encoder was trained for {what} (the package ships one for "
                "all-MiniLM-L6-v2); `workbench finetune wsd` trains one"
            )
        elif name != "biencoder" and system.training == "semcor" and not semcor_available():
            out[name] = (
                "needs SemCor, which is not in the WSD data dir; `workbench data download` "
                "fetches it"
            )
    return out


def is_saved_index(system: str | Path) -> bool:
    """Whether ``system`` names a saved index folder rather than a system of the registry."""
    return isinstance(system, Path) or (system not in SYSTEMS and Path(system).is_dir())


def open_system(
    system: str | Path = "biencoder",
    model: str | None = None,
    *,
    device: str | None = None,
    dtype: DtypeName = "auto",
    pooling: Pooling = "mean",
    encoder: Encoder | None = None,
    wordnet: WordNet | None = None,
    changes: Mapping[str, Any] | None = None,
    train: str | None = None,
    gold: str | None = None,
    say: SystemProgress = None,
    levers: TestTimeLevers | None = None,
) -> OpenedSystem:
    """Open ``system`` on ``model``: which system answers, and how (the module docstring).

    Nothing heavy happens here: the model loads when the system first needs its encoder, an
    index when it first answers (:class:`~workbench.wsd.opened.OpenedSystem`).

    Args:
        system: a name of :data:`~workbench.wsd.registry.SYSTEMS`, or a saved index folder
            (a ``Path``, or a directory that is no system's name).
        model: HF id or local directory (None: the packaged default model).
        device, dtype, pooling: the encoder's (the bi-encoder pools as it was trained).
        encoder: the encoder to read with (default: a new ``Encoder(model, device, dtype,
            pooling)`` when first needed); a bi-encoder reads with its own.
        wordnet: WordNet, for the indexes built (default: loaded when needed).
        changes: settings of :class:`~workbench.wsd.config.SenseIndexConfig` that differ from
            the system's (``{"layers": "5"}``); not for the bi-encoder.
        train: the training corpus of the index (a dataset name, a ``*.data.xml`` path, either
            with ``+examples``, or ``wordnet``); None: the system's own, SemCor when it is here,
            else WordNet's glosses.
        gold: the gold key file of a ``train`` path.
        say: called with a line before a long build starts.
        levers: the bi-encoder's test-time weights (:mod:`workbench.wsd.levers`; None:
            :data:`~workbench.wsd.levers.DEFAULT_LEVERS`); the prior reads SemCor's counts
            (:func:`~workbench.wsd.builds.semcor_frequencies`) when its index is first made.

    Raises:
        InputError: an unknown system; settings changed for the bi-encoder; ``pooling``
            other than the bi-encoder's for it; levers other than the default for a system
            other than the bi-encoder.
        ModelLoadError: ``model`` is a damaged WSD bi-encoder folder (its ``head.json``
            missing or another task's beside a bi-encoder's files, no finished training card):
            refused before anything loads (:func:`~workbench.wsd.biencoder.check_model_folder`).
    """
    levers = DEFAULT_LEVERS if levers is None else levers
    wordnet_ = wordnet
    check_model_folder(model)  # a damaged bi-encoder never answers as a plain model
    if is_saved_index(system):
        path = Path(system)

        def saved(enc: Encoder, progress: Progress, said: SystemProgress) -> Any:
            return load_index(path, EncoderInfo.of(enc))

        return OpenedSystem("saved", _encoder_of(model, device, dtype, pooling, encoder),
                            whole=saved, pos_probe=None)  # fmt: skip
    name = str(system)
    get_system(name)
    if name != "biencoder" and levers != DEFAULT_LEVERS:
        raise InputError(
            f"{levers.label}: test-time levers of the bi-encoder, not of the {name} system"
        )
    notes = []
    if name == "biencoder":
        directory = biencoder_dir(model)
        if directory is not None:
            if changes:
                raise InputError(
                    f"{', '.join(changes)}: the bi-encoder has no index settings to change"
                )
            if pooling != CONTEXT_POOLING:
                raise InputError(
                    f"the bi-encoder pools a word's subwords as it was trained "
                    f"('{CONTEXT_POOLING}'), not '{pooling}': leave --pooling out"
                )

            def gloss_index(enc: Encoder, lemmas: Lemmas | None, progress: Progress) -> Any:
                assert opened.biencoder is not None
                index = opened.biencoder.index(lemmas, wordnet_, progress, levers.smoothing)
                if levers.prior:
                    index = with_prior(index, semcor_frequencies(), levers.prior)
                return index

            opened = OpenedSystem(
                "biencoder",
                for_lemmas=gloss_index,
                biencoder=lambda: load_biencoder(str(directory), device, dtype),
                levers=levers,
            )
            return opened
        name = FALLBACK_SYSTEM
        notes.append(fallback_note(model))
        if levers != DEFAULT_LEVERS:
            notes.append(f"the bi-encoder's test-time levers ({levers.label}) do not apply to it")
    corpus = train
    if name == WORDNET_SYSTEM.name:
        corpus = "wordnet"
    elif corpus is None:
        corpus = "semcor" if semcor_available() else "wordnet"
        if corpus == "wordnet":
            notes.append(NO_SEMCOR_NOTE)
    base = WORDNET_SYSTEM.config if corpus == "wordnet" else get_system(name).config
    config = dataclasses.replace(base, **(changes or {}))
    enc = _encoder_of(model, device, dtype, pooling, encoder)
    note = "; ".join(notes)
    # the system named (after the bi-encoder's hand-over); "custom" for settings of its own
    answering = name if not changes else "custom"
    if corpus == "wordnet":

        def glosses(enc: Encoder, lemmas: Lemmas | None, progress: Progress) -> Any:
            info = EncoderInfo.of(enc)
            stored = wordnet_index_path(info, config)
            if (stored / "meta.json").is_file():
                return load_index(stored, info)
            return wordnet_index(enc, lemmas, wordnet_, config, progress)

        return OpenedSystem(answering, enc, for_lemmas=glosses, note=note, pos_probe=None)
    if corpus == "semcor" and gold is None and config == get_system(name).config:

        def semcor(enc: Encoder, progress: Progress, said: SystemProgress) -> Any:
            return semcor_index(enc, name, wordnet_, progress, said)

        return OpenedSystem(name, enc, whole=semcor, note=note, pos_probe=None,
                            builds_ahead=True, inputs=((corpus, None),), say=say)  # fmt: skip

    def trained(enc: Encoder, progress: Progress, said: SystemProgress) -> Any:
        return trained_index(enc, load_corpus(corpus, gold), config, wordnet_, progress)

    return OpenedSystem(answering, enc, whole=trained, note=note, pos_probe=None,
                        inputs=((corpus, gold),), say=say)  # fmt: skip


def _encoder_of(
    model: str | None,
    device: str | None,
    dtype: DtypeName,
    pooling: Pooling,
    encoder: Encoder | None,
) -> Encoder | Any:
    """``encoder``, or a function making the encoder of these settings when first needed."""
    if encoder is not None:
        return encoder
    return lambda: Encoder(model=model, device=device, dtype=dtype, pooling=pooling)
