"""The named WSD systems a user gets without choosing, and how each one is opened.

A *system* is a named way of answering (``workbench wsd ... --system NAME``; the first is the
default of the command line, the library and the app):

* ``biencoder``: the gloss-informed bi-encoder (:mod:`workbench.wsd.biencoder`): the trained
  context encoder's vector of the word against the gloss vector of each candidate
  sense. The package ships one for its default model; a directory trained by ``workbench
  finetune wsd`` answers the same way (``--model DIR``). Nothing is built ahead: the glosses an
  answer needs are encoded then and cached.
* ``best``: SemCor centroids at the last layer, LMMS propagation down to the lexicographer
  file, definition gloss vectors weighted 0.2 (the best untrained system of docs/results.md).
* ``plain``: SemCor centroids at the last layer, nothing else (textbook 1-NN).
* ``wordnet``: no SemCor, every sense represented the same way, by its gloss vector (its
  synset's definition and usage examples through the same encoder path), so the scores of any
  two candidates are comparable. It loses to WordNet's first sense on the benchmarks
  (:func:`system_note` says so, and the first sense is shown as the back-off).

:func:`open_system` gives the encoder a system reads and its index for the lemmas an input
needs; the bi-encoder, asked for a model it has not been trained on, hands over to ``best``
and says so. :func:`semcor_index` builds a SemCor system's index once per encoder (it encodes
SemCor's 226k tagged words and, for ``best``, the definitions of WordNet's 117k synsets;
:func:`build_minutes` estimates how long) and stores it in the cache dir, keyed by the system's
config, the encoder's identity and SemCor's checksum; later calls load it from there.
:func:`wordnet_index` builds the WordNet-only index, for some lemmas only when asked.

Example::

    opened = open_system()                          # the shipped bi-encoder
    index = opened.index_for([("bank", "NOUN")])    # bank's noun senses, glosses encoded once
    opened.name, opened.encoder.name                # ('biencoder', ...)
"""

from __future__ import annotations

import dataclasses
import functools
import json
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Literal, get_args

import numpy as np

from workbench.corpora.datasets import available_datasets, dataset_paths, load_dataset
from workbench.corpora.readers import Corpus
from workbench.encoding.cache import store_in_cache
from workbench.encoding.device import DtypeName
from workbench.encoding.encoder import Encoder
from workbench.encoding.models import default_cache_dir
from workbench.encoding.pooling import Pooling
from workbench.encoding.rows import Progress, progress_part
from workbench.errors import DataError, InputError, ModelLoadError
from workbench.fileio import sha256_bytes, sha256_files
from workbench.lexicon.wordnet import WORDNET_VERSION, WordNet, load_wordnet
from workbench.wsd.biencoder import (
    BIENCODER_CONFIG,
    CONTEXT_POOLING,
    BiEncoder,
    biencoder_dir,
    finished_card,
    is_biencoder_dir,
    load_biencoder,
    shipped_biencoder,
)
from workbench.wsd.config import EncoderInfo, SenseIndexConfig, TrainingInfo, cache_dtype_tag
from workbench.wsd.index import SenseIndex
from workbench.wsd.pos_probe import PosProbe
from workbench.wsd.predict import build_index, encode_instances
from workbench.wsd.sources import gloss_vectors
from workbench.wsd.store import FORMAT_VERSION, load_index, save_index

SystemName = Literal["biencoder", "best", "plain", "wordnet"]
#: The system names, the default first.
SYSTEM_NAMES: tuple[str, ...] = get_args(SystemName)
DEFAULT_SYSTEM: SystemName = "biencoder"
#: The system the bi-encoder hands over to for a model it was not trained on.
FALLBACK_SYSTEM: SystemName = "best"
#: Name of the training corpus of the WordNet-only index (stated with every result).
WORDNET_CORPUS = "wordnet-3.0 glosses"
#: A winning sense trained on fewer occurrences than this gets a warning (a centroid of one or
#: two sentences is an anecdote, not a sense).
FEW_OCCURRENCES = 5
SystemProgress = Callable[[str], None] | None
#: The recorded F1 on ALL of the systems per model fingerprint and compute dtype, and of
#: WordNet's first sense, each with the raw run record it is copied from and the command that
#: wrote that record (``python -m bench run wsd_systems_f1`` writes this file).
RESULTS_FILE = Path(__file__).with_name("results") / "systems_f1.json"
#: Weights fingerprint (``Encoder.fingerprint``) of the packaged all-MiniLM-L6-v2.
PACKAGED_FINGERPRINT = "f412054b280245dd"


@functools.cache
def recorded_results() -> dict[str, Any]:
    """The content of :data:`RESULTS_FILE`: ``runs`` (each with ``system``, ``fingerprint``,
    ``dtype``, ``f1_all``, ``source``, ``pointer``, ``command``) and ``baselines``."""
    return json.loads(RESULTS_FILE.read_text(encoding="utf-8"))


def _figure(f1: float) -> float:
    """A recorded F1 as it is shown: one decimal, as in docs/results.md."""
    return round(float(f1), 1)


#: F1 on ALL per (system, model fingerprint, compute dtype), as recorded in
#: :data:`RESULTS_FILE` (rounded to one decimal).
MEASURED_F1_ALL: dict[tuple[str, str, str], float] = {
    (run["system"], run["fingerprint"], run["dtype"]): _figure(run["f1_all"])
    for run in recorded_results()["runs"]
}
#: WordNet's first sense on ALL (:data:`RESULTS_FILE`): what the WordNet-only index is
#: compared with.
FIRST_SENSE_F1_ALL = _figure(recorded_results()["baselines"]["wordnet_first_sense"]["f1_all"])


def _packaged_f1(system: str) -> float:
    """The recorded F1 on ALL of ``system`` with the packaged model in float32 (NaN: none)."""
    return MEASURED_F1_ALL.get((system, PACKAGED_FINGERPRINT, "float32"), float("nan"))


@dataclass(frozen=True)
class System:
    """A named way of building a sense index, and what it scored.

    Attributes:
        name: ``biencoder``, ``best``, ``plain`` or ``wordnet``.
        config: how the index is built (the bi-encoder's: gloss vectors only, trained).
        training: the training corpus (``semcor``; ``wordnet``: WordNet's glosses only).
        description: one line for a user.
        f1_all: F1 on ALL with the packaged all-MiniLM-L6-v2 in float32, as recorded in
            :data:`RESULTS_FILE` (other models and dtypes: :data:`MEASURED_F1_ALL`; NaN for
            the bi-encoder, whose figure is its training card's, :func:`measured_f1`).
    """

    name: str
    config: SenseIndexConfig
    training: str
    description: str
    f1_all: float


SYSTEMS: dict[str, System] = {
    "biencoder": System(
        "biencoder",
        BIENCODER_CONFIG,
        "semcor",
        "gloss-informed bi-encoder: the trained context encoder's word vector against each "
        "candidate's gloss vector (its definition, read by the gloss encoder)",
        float("nan"),
    ),
    "best": System(
        "best",
        SenseIndexConfig(layers="-1", propagate="lexname", gloss="concat", gloss_weight=0.2),
        "semcor",
        "SemCor centroids at the last layer + LMMS propagation (lexname) + definition gloss "
        "vectors (0.2)",
        _packaged_f1("best"),
    ),
    "plain": System(
        "plain",
        SenseIndexConfig(layers="-1"),
        "semcor",
        "SemCor centroids at the last layer (plain 1-NN)",
        _packaged_f1("plain"),
    ),
    # what is used without SemCor: every sense's gloss vector (its definition and usage
    # examples), the same kind of vector for every candidate; chosen on SemEval-2007 (dev)
    "wordnet": System(
        "wordnet",
        SenseIndexConfig(layers="last4-sum", gloss="only", gloss_pooling="definition-examples"),
        "wordnet",
        "WordNet only: every sense's gloss vector (definition and usage examples)",
        _packaged_f1("wordnet"),
    ),
}
#: The index without SemCor (:func:`wordnet_index`).
WORDNET_SYSTEM = SYSTEMS["wordnet"]


def shipped_f1() -> float | None:
    """F1 on ALL of the shipped bi-encoder, as its training card records it (None: none
    shipped, or its card has no test score)."""
    directory = shipped_biencoder()
    if directory is None:
        return None
    try:
        test = finished_card(directory).get("test") or {}
        return round(100 * float(test["f1"]), 1)
    except (ModelLoadError, KeyError, TypeError, ValueError):
        return None


def measured_f1(system: str, fingerprint: str, dtype: str) -> float | None:
    """F1 on ALL recorded for ``system`` with the model of ``fingerprint`` computing in
    ``dtype`` (:data:`MEASURED_F1_ALL`); None where that combination was not measured (another
    model, say). The bi-encoder's is the shipped one's (its training card), for the packaged
    model."""
    if system == "biencoder":
        return shipped_f1() if fingerprint == PACKAGED_FINGERPRINT else None
    return MEASURED_F1_ALL.get((system, fingerprint, dtype))


def f1_phrase(system: str, fingerprint: str, dtype: str) -> str:
    """What a user is told ``system`` scores with this model: its own measured F1 on ALL, or
    the packaged model's with that said."""
    f1 = measured_f1(system, fingerprint, dtype)
    if f1 is not None and system == "biencoder":
        return f"{f1} F1 on ALL (its training card)"
    if f1 is not None:
        return f"{f1} F1 on ALL with this model in {dtype}"
    packaged = shipped_f1() if system == "biencoder" else SYSTEMS[system].f1_all
    if packaged is None or packaged != packaged:  # NaN: nothing recorded
        return "not measured"
    return f"{packaged} F1 on ALL with the packaged model; not measured for this one"


def get_system(name: str) -> System:
    """The system called ``name`` (:data:`SYSTEMS`)."""
    try:
        return SYSTEMS[name]
    except KeyError:
        raise InputError(f"unknown WSD system {name!r}; known: {', '.join(SYSTEMS)}") from None


def system_of(index: SenseIndex) -> str:
    """The name of the system ``index`` was built as (``biencoder``, ``best``, ``plain``,
    ``wordnet``), or ``custom`` for any other config or training corpus."""
    if index.config == BIENCODER_CONFIG:
        return "biencoder"
    corpus = "wordnet" if index.training_.corpus == WORDNET_CORPUS else index.training_.corpus
    for system in SYSTEMS.values():
        if index.config == system.config and corpus == system.training:
            return system.name
    return "custom"


def system_note(index: SenseIndex) -> str:
    """What a user must know about the quality of ``index``'s answers ("" if nothing): the
    WordNet-only index loses to WordNet's first sense."""
    if index.training_.corpus != WORDNET_CORPUS:
        return ""
    f1 = WORDNET_SYSTEM.f1_all
    return (
        f"No SemCor here: the senses are represented by their WordNet glosses only, which scores "
        f"{f1:.1f} F1 on the benchmarks (ALL), below WordNet's first sense ({FIRST_SENSE_F1_ALL}). "
        "WordNet's first sense is shown as the back-off; `workbench data download` fetches "
        "SemCor for the best system."
    )


# ---------------------------------------------------------------------- SemCor


def semcor_available() -> bool:
    """Whether SemCor is in the data dir (``workbench data download`` puts it there)."""
    try:
        return "semcor" in available_datasets()
    except DataError:
        return False


def semcor_sha256() -> str:
    """Checksum of SemCor's source files (the same as ``load_dataset("semcor").sha256``)."""
    xml, gold = dataset_paths("semcor")
    return sha256_files([p for p in (xml, gold) if p is not None])


def system_index_path(info: EncoderInfo, system: System, training_sha256: str) -> Path:
    """Where the index of ``system`` for the encoder ``info`` describes
    (``EncoderInfo.of(encoder)``) trained on the corpus with checksum ``training_sha256`` is
    cached: a name from everything that changes its rows (the config, the training corpus, the
    encoder's identity and compute dtype, the index format)."""
    identity = asdict(info)
    if tag := cache_dtype_tag(identity.pop("dtype")):
        identity["dtype"] = tag
    ident = json.dumps(
        {
            "config": asdict(system.config),
            "training": [system.training, training_sha256],
            "encoder": identity,
            "format": FORMAT_VERSION,
        },
        sort_keys=True,
    )
    tag = sha256_bytes(ident)[:16]
    return default_cache_dir() / "wsd-index" / f"{system.name}-{system.training}-{tag}"


#: The build estimate's base: minutes the packaged model (6 layers, 384 wide) takes to build the
#: ``best`` index in float32 on the CPU :func:`build_message` names (docs/benchmarks.md, "WSD");
#: other encoders scale with their compute per token.
PACKAGED_BUILD_MINUTES = 12.0
#: The part of a build with gloss vectors that encoding SemCor takes, the rest being WordNet's
#: definitions: where the progress of :func:`semcor_index` passes from one to the other
#: (docs/benchmarks.md, "The app's background builds").
SEMCOR_SHARE = 0.25
#: How much faster a CPU with bfloat16 instructions encodes in bfloat16 than in float32, as the
#: build estimate takes it (docs/benchmarks.md, "bfloat16 on the CPU").
CPU_BF16_SPEEDUP = 1.7


def build_minutes(info: EncoderInfo) -> float:
    """Roughly how many minutes building a SemCor index takes on a CPU with the encoder ``info``
    describes: :data:`PACKAGED_BUILD_MINUTES` scaled by its layers x width² against the
    packaged model's (all-mpnet-base-v2, 12 x 768: 8 times as much), and divided by
    :data:`CPU_BF16_SPEEDUP` when it computes in bfloat16."""
    minutes = PACKAGED_BUILD_MINUTES * (info.n_hidden - 1) * info.dim**2 / (6 * 384**2)
    return minutes / CPU_BF16_SPEEDUP if info.dtype == "bfloat16" else minutes


def build_message(info: EncoderInfo, system: System, path: Path) -> str:
    """The line shown before a system's index is built for the encoder ``info`` describes:
    what, and why it takes a while."""
    glosses = " and the definitions of WordNet's 117,659 synsets"
    minutes = build_minutes(info)
    if minutes < 20:
        cpu = f"about {max(2, round(minutes))} minutes"
    elif minutes < 90:
        cpu = f"about {5 * round(minutes / 5)} minutes"
    else:
        cpu = f"about {minutes / 60:.1f} hours"
    return (
        f"Building the '{system.name}' sense index for {info.name} ({system.description}). "
        f"It encodes SemCor's 226,036 sense-tagged words"
        f"{glosses if system.config.gloss != 'none' else ''} once: {cpu} on a 2-core CPU, a "
        f"few minutes on a GPU. Later runs load it from {path}."
    )


def semcor_index(
    encoder: Encoder,
    system: str = DEFAULT_SYSTEM,
    wordnet: WordNet | None = None,
    progress: Progress = None,
    say: SystemProgress = None,
    semcor: Corpus | None = None,
) -> SenseIndex:
    """The index of ``system`` trained on SemCor, loaded from the cache dir, else built and
    stored there.

    Args:
        encoder: the encoder.
        system: a name of :data:`SYSTEMS`.
        wordnet: default :func:`load_wordnet`.
        progress: passed to the encoder (a bar per step, or a ``fraction -> None`` callback
            that goes from 0 to 1 once over the whole build: :data:`SEMCOR_SHARE` of it for
            SemCor, the rest for the gloss vectors).
        say: called with a line before a build starts (what is built and why it takes long).
        semcor: the training corpus (default: SemCor from the data dir). Another corpus is
            cached under its own checksum.

    Raises:
        DataError: no SemCor in the data dir.
    """
    chosen = get_system(system)
    if chosen.training != "semcor" or chosen.config == BIENCODER_CONFIG:
        raise InputError(f"the {system} system has no SemCor index: use open_system")
    sha = semcor.sha256 if semcor is not None else semcor_sha256()
    info = EncoderInfo.of(encoder)
    path = system_index_path(info, chosen, sha)
    if (path / "meta.json").is_file():
        try:
            return load_index(path, info)
        except DataError:  # unreadable (e.g. cut off by a full disk): build it again
            pass
    if say is not None:
        say(build_message(info, chosen, path))
    corpus = semcor if semcor is not None else load_dataset("semcor")
    share = SEMCOR_SHARE if chosen.config.gloss != "none" else 1.0
    training = encode_instances(encoder, corpus, progress=progress_part(progress, 0.0, share))
    index = build_index(encoder, training, chosen.config, wordnet,
                        progress=progress_part(progress, share, 1.0))  # fmt: skip
    store_in_cache(lambda: save_index(index, path), f"{system} sense index")
    return index


# ---------------------------------------------------------------------- WordNet only


def wordnet_index_path(info: EncoderInfo, config: SenseIndexConfig = WORDNET_SYSTEM.config) -> Path:
    """Where the full WordNet-only index of the encoder ``info`` describes, built with
    ``config``, is cached (``workbench wsd train --corpus wordnet`` writes it there)."""
    system = dataclasses.replace(WORDNET_SYSTEM, config=config)
    return system_index_path(info, system, f"wordnet-{WORDNET_VERSION}")


def wordnet_index(
    encoder: Encoder,
    lemmas: Sequence[tuple[str, str]] | None = None,
    wordnet: WordNet | None = None,
    config: SenseIndexConfig = WORDNET_SYSTEM.config,
    progress: Progress = None,
) -> SenseIndex:
    """The WordNet-only index: one gloss vector per sense key, every sense the same way.

    Args:
        encoder: the encoder.
        lemmas: only the senses of these ``(lemma, POS)`` pairs; None: all
            206,941 sense keys (encodes the text of WordNet's 117,659 synsets once).
        wordnet: default :func:`load_wordnet`.
        config: layer spec and gloss pooling (``gloss`` must be ``only``).
        progress: passed to the encoder.
    """
    wordnet = wordnet or load_wordnet()
    if config.gloss != "only":
        raise InputError("a WordNet-only index is made of gloss vectors only (gloss='only')")
    keys = None
    if lemmas is not None:
        keys = sorted({k for lemma, pos in lemmas for k in wordnet.candidates(lemma, pos)})
    gloss = gloss_vectors(
        encoder, wordnet, config.layers, keys, pooling=config.gloss_pooling, progress=progress
    )
    info = EncoderInfo.of(encoder)
    restricted = tuple(f"{lemma}.{pos}" for lemma, pos in lemmas or ())
    training = TrainingInfo(WORDNET_CORPUS, f"wordnet-{wordnet.version}", 0, 0, restricted)
    empty = np.zeros((0, info.dim), np.float32)
    return SenseIndex(config).fit(empty, [], info=info, training=training, gloss=gloss)


# ---------------------------------------------------------------------- the default


def default_index(
    encoder: Encoder,
    system: str = FALLBACK_SYSTEM,
    lemmas: Sequence[tuple[str, str]] | None = None,
    wordnet: WordNet | None = None,
    progress: Progress = None,
    say: SystemProgress = None,
) -> SenseIndex:
    """The index of ``system`` for ``encoder``: a bi-encoder's own (its gloss vectors, for
    ``lemmas``) when the encoder is a bi-encoder's context encoder; else ``system`` trained on
    SemCor when SemCor is here (:func:`semcor_index`, built once); else, and for the
    ``wordnet`` system, the WordNet-only index (the full one when ``workbench wsd train
    --corpus wordnet`` has stored it, else one for ``lemmas``).

    Raises:
        InputError: ``biencoder`` for an encoder that is no bi-encoder's (:func:`open_system`
            finds the encoder a system reads).
    """
    get_system(system)
    location = encoder.source.location if encoder.source.is_local else None
    if is_biencoder_dir(location):
        bi = load_biencoder(location, str(encoder.device), encoder.dtype_name)  # type: ignore[arg-type]
        return bi.index(lemmas, wordnet, progress)
    if system == "biencoder":
        raise InputError(
            f"{encoder.name} is not a WSD bi-encoder: the biencoder system reads its own "
            "context encoder (open_system finds it)."
        )
    if get_system(system).training == "semcor" and semcor_available():
        return semcor_index(encoder, system, wordnet, progress, say)
    info = EncoderInfo.of(encoder)
    path = wordnet_index_path(info)
    if (path / "meta.json").is_file():
        return load_index(path, info)
    return wordnet_index(encoder, lemmas, wordnet, progress=progress)


#: An index for the ``(lemma, POS)`` pairs an input needs.
IndexFor = Callable[[Sequence[tuple[str, str]]], SenseIndex]


@dataclass(frozen=True)
class OpenedSystem:
    """A system ready to answer.

    Attributes:
        name: the system that answers (``biencoder``, ``best``, ...).
        encoder: the encoder whose word vectors it reads (the bi-encoder's context encoder).
        index_for: its index for the ``(lemma, POS)`` pairs an input needs.
        note: why another system answers than the one asked for ("" when it is that one).
        biencoder: the bi-encoder, when it answers.
    """

    name: str
    encoder: Encoder
    index_for: IndexFor
    note: str = ""
    biencoder: BiEncoder | None = None

    @property
    def pos_probe(self) -> PosProbe | None:
        """The POS probe that answers when no POS is given (the bi-encoder's), else None."""
        return self.biencoder.pos_probe if self.biencoder is not None else None

    def describe(self) -> dict[str, object]:
        """What answers, for reports: the system, its description, the model(s)."""
        model = self.biencoder.describe() if self.biencoder else self.encoder.describe()
        return {
            "name": self.name,
            "description": SYSTEMS[self.name].description,
            "model": model,
            **({"note": self.note} if self.note else {}),
        }


def fallback_note(model: str | None) -> str:
    """Why the :data:`FALLBACK_SYSTEM` answers where the bi-encoder was asked for."""
    what = "the packaged default model" if model is None else f"'{model}'"
    return (
        f"there is no trained WSD bi-encoder for {what}, so the '{FALLBACK_SYSTEM}' system "
        "answers (`workbench finetune wsd` trains one)"
    )


def open_system(
    system: str = DEFAULT_SYSTEM,
    model: str | None = None,
    *,
    device: str | None = None,
    dtype: DtypeName = "auto",
    pooling: Pooling = "mean",
    encoder: Encoder | None = None,
    wordnet: WordNet | None = None,
    progress: Progress = None,
    say: SystemProgress = None,
) -> OpenedSystem:
    """Open ``system`` on ``model`` (None: the packaged default model).

    ``biencoder`` loads the bi-encoder of ``model`` (:func:`workbench.wsd.biencoder.
    biencoder_dir`: a bi-encoder directory, or the one the package ships for that base); for
    a model without one the :data:`FALLBACK_SYSTEM` answers, and :attr:`OpenedSystem.note`
    says so. Any other system reads ``encoder`` (or a new ``Encoder(model, device, dtype,
    pooling)``) and builds or loads its index (:func:`default_index`).

    Raises:
        InputError: an unknown system; ``pooling`` other than the bi-encoder's for it.
        ModelLoadError: the model or the bi-encoder cannot be loaded.
    """
    get_system(system)
    note = ""
    if system == "biencoder":
        directory = biencoder_dir(model)
        if directory is not None:
            if pooling != CONTEXT_POOLING:
                raise InputError(
                    f"the bi-encoder pools a word's subwords as it was trained "
                    f"('{CONTEXT_POOLING}'), not '{pooling}': leave --pooling out"
                )
            bi = load_biencoder(str(directory), device, dtype)
            return OpenedSystem("biencoder", bi.encoder, bi.index_for(), "", bi)
        system, note = FALLBACK_SYSTEM, fallback_note(model)
    enc = encoder or Encoder(model=model, device=device, dtype=dtype, pooling=pooling)
    chosen = system

    def index_for(lemmas: Sequence[tuple[str, str]]) -> SenseIndex:
        return default_index(enc, chosen, lemmas, wordnet, progress, say)

    return OpenedSystem(chosen, enc, index_for, note)
