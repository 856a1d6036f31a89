"""The named WSD systems: their names, descriptions, labels and recorded scores.

A *system* is a named way of answering (``workbench wsd ... --system NAME``, the app's system
choice); :data:`DEFAULT_SYSTEM` is the default of the command line, the library and the app:

* ``biencoder``: the gloss-informed bi-encoder (:mod:`workbench.wsd.biencoder`): the trained
  context encoder's vector of the word against the gloss vector of each candidate sense. The
  package ships one for its default model; a directory trained by ``workbench finetune wsd``
  answers the same way. Nothing is built ahead.
* ``best``: SemCor centroids at the last layer, LMMS propagation down to the lexicographer
  file, definition gloss vectors weighted 0.2 (the best untrained system of docs/results.md).
* ``plain``: SemCor centroids at the last layer, nothing else (textbook 1-NN).
* ``wordnet``: no SemCor, every sense represented the same way, by its gloss vector (its
  synset's definition and usage examples through the same encoder path), so the scores of any
  two candidates are comparable. It loses to WordNet's first sense on the benchmarks
  (:func:`system_note` says so).

The recorded F1 figures are read from :data:`RESULTS_FILE` when first asked for, not at import.
How a system is opened: :func:`workbench.wsd.systems.open_system`; how its index is built:
:mod:`workbench.wsd.builds`.

Example::

    SYSTEMS["best"].config.propagate                         # 'lexname'
    SYSTEMS["best"].f1_all                                   # 70.2 (packaged model, float32)
    system_label("plain", PACKAGED_FINGERPRINT, "float32")   # 'plain 1-NN on SemCor (68.4 F1 ...)'
"""

from __future__ import annotations

import functools
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, get_args

from workbench.errors import InputError, ModelLoadError
from workbench.wsd.biencoder import BIENCODER_CONFIG, finished_card, shipped_biencoder
from workbench.wsd.config import SenseIndexConfig
from workbench.wsd.index import SenseIndex

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


def measured_f1_all() -> dict[tuple[str, str, str], float]:
    """F1 on ALL per (system, model fingerprint, compute dtype), as recorded in
    :data:`RESULTS_FILE` (rounded to one decimal)."""
    return {
        (run["system"], run["fingerprint"], run["dtype"]): _figure(run["f1_all"])
        for run in recorded_results()["runs"]
    }


def first_sense_f1_all() -> float:
    """WordNet's first sense on ALL (:data:`RESULTS_FILE`): what the WordNet-only index is
    compared with."""
    return _figure(recorded_results()["baselines"]["wordnet_first_sense"]["f1_all"])


@dataclass(frozen=True)
class System:
    """A named way of answering.

    Attributes:
        name: ``biencoder``, ``best``, ``plain`` or ``wordnet``.
        config: how its index is built (the bi-encoder's: gloss vectors only, trained).
        training: the training corpus (``semcor``; ``wordnet``: WordNet's glosses only).
        description: one line for a user.
        label: its name in the app's system choice (:func:`system_label` adds the F1).
    """

    name: str
    config: SenseIndexConfig
    training: str
    description: str
    label: str

    @property
    def f1_all(self) -> float:
        """F1 on ALL with the packaged all-MiniLM-L6-v2 in float32, as recorded in
        :data:`RESULTS_FILE` (other models and dtypes: :func:`measured_f1`); NaN for the
        bi-encoder, whose figure is its training card's (:func:`shipped_f1`)."""
        return measured_f1_all().get((self.name, PACKAGED_FINGERPRINT, "float32"), float("nan"))


SYSTEMS: dict[str, System] = {
    "biencoder": System(
        "biencoder",
        BIENCODER_CONFIG,
        "semcor",
        "gloss-informed bi-encoder: the trained context encoder's word vector against each "
        "candidate's gloss vector (its definition, read by the gloss encoder)",
        "bi-encoder: trained context vs. gloss vectors",
    ),
    "best": System(
        "best",
        SenseIndexConfig(layers="-1", propagate="lexname", gloss="concat", gloss_weight=0.2),
        "semcor",
        "SemCor centroids at the last layer + LMMS propagation (lexname) + definition gloss "
        "vectors (0.2)",
        "best: SemCor + propagation + glosses",
    ),
    "plain": System(
        "plain",
        SenseIndexConfig(layers="-1"),
        "semcor",
        "SemCor centroids at the last layer (plain 1-NN)",
        "plain 1-NN on SemCor",
    ),
    # what is used without SemCor: every sense's gloss vector (its definition and usage
    # examples), the same kind of vector for every candidate; chosen on SemEval-2007 (dev)
    "wordnet": System(
        "wordnet",
        SenseIndexConfig(layers="last4-sum", gloss="only", gloss_pooling="definition-examples"),
        "wordnet",
        "WordNet only: every sense's gloss vector (definition and usage examples)",
        "WordNet glosses only (no SemCor; below WordNet's first sense)",
    ),
}
#: The index without SemCor (:func:`workbench.wsd.builds.wordnet_index`).
WORDNET_SYSTEM = SYSTEMS["wordnet"]


def get_system(name: str) -> System:
    """The system called ``name`` (:data:`SYSTEMS`)."""
    try:
        return SYSTEMS[name]
    except KeyError:
        raise InputError(f"unknown WSD system {name!r}; known: {', '.join(SYSTEMS)}") from None


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
    ``dtype`` (:func:`measured_f1_all`); None where that combination was not measured (another
    model, say). The bi-encoder's is the shipped one's (its training card), for the packaged
    model."""
    if system == "biencoder":
        return shipped_f1() if fingerprint == PACKAGED_FINGERPRINT else None
    return measured_f1_all().get((system, fingerprint, dtype))


def f1_phrase(system: str, fingerprint: str, dtype: str) -> str:
    """What a user is told ``system`` scores with this model: its own measured F1 on ALL, or
    the packaged model's with that said."""
    f1 = measured_f1(system, fingerprint, dtype)
    if f1 is not None and system == "biencoder":
        return f"{f1} F1 on ALL, from its training card"
    if f1 is not None:
        return f"{f1} F1 on ALL with this model in {dtype}"
    packaged = shipped_f1() if system == "biencoder" else SYSTEMS[system].f1_all
    if packaged is None or packaged != packaged:  # NaN: nothing recorded
        return "not measured"
    return f"{packaged} F1 on ALL with the packaged model; not measured for this one"


def system_label(system: str, fingerprint: str, dtype: str) -> str:
    """The label of ``system`` in a choice of systems, with what it scores for the model of
    ``fingerprint`` in ``dtype`` (:func:`f1_phrase`); the WordNet-only system's says it is
    below WordNet's first sense instead."""
    chosen = get_system(system)
    if chosen.training == "wordnet":
        return chosen.label
    return f"{chosen.label} ({f1_phrase(system, fingerprint, dtype)})"


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
        f"{f1:.1f} F1 on the benchmarks (ALL), below WordNet's first sense "
        f"({first_sense_f1_all()}). WordNet's first sense is shown as the back-off; "
        "`workbench data download` fetches SemCor for the best system."
    )
