"""The one door to WSD: :func:`open_system` decides which system answers and opens it.

Every front end opens a system with one call (the command line's ``workbench wsd`` commands,
the app's WSD page and its caches); the rules of which system answers live in this package,
each system's in its module, and the door dispatches through the registry
(:data:`~workbench.wsd.systems.registry.SYSTEMS`):

* a saved index folder answers as it is, read with the model's encoder
  (:mod:`~workbench.wsd.systems.saved`);
* ``biencoder`` answers with the bi-encoder of the model (a bi-encoder directory, or the one the
  package ships for that base model); for a model without one
  :data:`~workbench.wsd.systems.biencoder.FALLBACK_SYSTEM` answers, and the opened system's note
  says so (:mod:`~workbench.wsd.systems.biencoder`);
* a SemCor system (``best``, ``plain``) answers with its SemCor index, built once per encoder
  (:func:`workbench.wsd.builds.semcor_index`); without SemCor in the data dir the WordNet-only
  index answers (said in the note) (:mod:`~workbench.wsd.systems.centroids`);
* ``wordnet`` (and any system trained on ``wordnet``) answers with WordNet's gloss vectors: the
  full index when ``workbench wsd train --corpus wordnet`` has stored it, else one for the
  lemmas an input needs (:mod:`~workbench.wsd.systems.wordnet`);
* settings changed from the system's (``changes``) or another training corpus (``train``)
  build an index of those settings on that corpus, once.

Example::

    opened = open_system()                              # the shipped bi-encoder
    opened.name, opened.note                            # ('biencoder', '')
    open_system("biencoder", "bert-base-uncased").note  # "there is no trained WSD bi-encoder ..."
    disambiguate(opened, "He sat on the bank of the river", "bank")
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from workbench.encoding.device import DtypeName
from workbench.encoding.encoder import Encoder
from workbench.encoding.pooling import Pooling
from workbench.errors import InputError
from workbench.lexicon.wordnet import WordNet
from workbench.wsd.biencoder import check_model_folder
from workbench.wsd.builds import SystemProgress
from workbench.wsd.levers import DEFAULT_LEVERS, TestTimeLevers
from workbench.wsd.opened import OpenedSystem
from workbench.wsd.systems.base import Request
from workbench.wsd.systems.registry import DEFAULT_SYSTEM, SYSTEMS, get_system
from workbench.wsd.systems.saved import SavedIndex


def offered_systems(model: str | None = None) -> list[str]:
    """The systems that answer as themselves for ``model`` (None: the packaged default), the
    default first: those of the registry whose :meth:`~workbench.wsd.systems.base.System.
    missing` says nothing (the bi-encoder where the model has one, the SemCor systems where
    SemCor is here, and the WordNet-only one)."""
    return [name for name, system in SYSTEMS.items() if system.missing(model) is None]


def missing_systems(model: str | None = None) -> dict[str, str]:
    """The systems of the registry that :func:`offered_systems` leaves out for ``model``, each
    with why, in one line (what a front end says beside its choice of systems).

    Example::

        missing_systems("all-mpnet-base-v2")
        # {'biencoder': "no WSD bi-encoder was trained for 'all-mpnet-base-v2' ..."}
    """
    out = {}
    for name, system in SYSTEMS.items():
        why = system.missing(model)
        if why is not None:
            out[name] = why
    return out


def is_saved_index(system: str | Path) -> bool:
    """Whether ``system`` names a saved index folder rather than a system of the registry."""
    return isinstance(system, Path) or (system not in SYSTEMS and Path(system).is_dir())


def open_system(
    system: str | Path = DEFAULT_SYSTEM,
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
        system: a name of :data:`~workbench.wsd.systems.registry.SYSTEMS`, or a saved index
            folder (a ``Path``, or a directory that is no system's name).
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
        levers: the bi-encoder's test-time weights (:mod:`workbench.wsd.levers`); a weight
            not given (None, or ``levers`` None) is the bi-encoder folder's own
            (:func:`~workbench.wsd.levers.folder_levers`); the prior reads SemCor's counts
            (:func:`~workbench.wsd.builds.semcor_frequencies`) when its index is first made.

    Raises:
        InputError: an unknown system; settings changed for the bi-encoder; ``pooling``
            other than the bi-encoder's for it; a lever above 0 for a system that takes none
            (all but the bi-encoder).
        ModelLoadError: ``model`` is a damaged WSD bi-encoder folder (its ``head.json``
            missing or another task's beside a bi-encoder's files, no finished training card):
            refused before anything loads (:func:`~workbench.wsd.biencoder.check_model_folder`).
    """
    levers = DEFAULT_LEVERS if levers is None else levers
    check_model_folder(model)  # a damaged bi-encoder never answers as a plain model
    request = Request(model, device, dtype, pooling, encoder, wordnet, changes, train, gold,
                      say, levers)  # fmt: skip
    if is_saved_index(system):
        return SavedIndex(Path(system)).open(request)
    chosen = get_system(str(system))
    if not chosen.is_biencoder and levers.active:
        raise InputError(
            f"{levers.label}: test-time levers of the bi-encoder, not of the {chosen.name} system"
        )
    return chosen.open(request)
