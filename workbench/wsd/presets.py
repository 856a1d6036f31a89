"""The named WSD systems as data: their index presets, their recorded scores, and which of
them an index was built as.

The systems themselves (what each answers with, whether it is offered for a model, its label and
help) are objects of :mod:`workbench.wsd.systems`; this module holds what the index builds
(:mod:`workbench.wsd.builds`) and the answers (:mod:`workbench.wsd.disambiguate`) need below
them:

* :class:`IndexPreset`: a named system's index settings and training corpus (:data:`BEST`,
  :data:`PLAIN` on SemCor, :data:`WORDNET`: every sense by its gloss vector, no SemCor);
* the recorded F1 figures, read from :data:`RESULTS_FILE` when first asked for, not at import;
* :func:`system_of`, :func:`system_note`: which named system an index was built as, and what a
  user must know about its answers.

Example::

    BEST.config.propagate                                    # 'lexname'
    measured_f1_all()[("best", PACKAGED_FINGERPRINT, "float32")]   # 70.2
    system_of(index)                                         # 'best', or 'custom'
"""

from __future__ import annotations

import functools
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from workbench.wsd.biencoder import BIENCODER_CONFIG, BIENCODER_DESCRIPTION
from workbench.wsd.config import SenseIndexConfig
from workbench.wsd.index import SenseIndex

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
class IndexPreset:
    """A named system's sense index: what :mod:`workbench.wsd.builds` needs to build and cache it.

    Attributes:
        name: the system's name (``best``, ``plain``, ``wordnet``, ...).
        config: how its index is built (the bi-encoder's: gloss vectors only, trained).
        training: the training corpus (``semcor``; ``wordnet``: WordNet's glosses only).
        description: one line for a user (reports, the line before a long build).
    """

    name: str
    config: SenseIndexConfig
    training: str
    description: str


#: SemCor centroids at the last layer, LMMS propagation down to the lexicographer file,
#: definition gloss vectors weighted 0.2 (the best untrained system of docs/results.md).
BEST = IndexPreset(
    "best",
    SenseIndexConfig(layers="-1", propagate="lexname", gloss="concat", gloss_weight=0.2),
    "semcor",
    "SemCor centroids at the last layer + LMMS propagation (lexname) + definition gloss "
    "vectors (0.2)",
)
#: SemCor centroids at the last layer, nothing else (textbook 1-NN).
PLAIN = IndexPreset(
    "plain",
    SenseIndexConfig(layers="-1"),
    "semcor",
    "SemCor centroids at the last layer (plain 1-NN)",
)
#: What is used without SemCor: every sense's gloss vector (its definition and usage
#: examples), the same kind of vector for every candidate; chosen on SemEval-2007 (dev).
WORDNET = IndexPreset(
    "wordnet",
    SenseIndexConfig(layers="last4-sum", gloss="only", gloss_pooling="definition-examples"),
    "wordnet",
    "WordNet only: every sense's gloss vector (definition and usage examples)",
)
#: The gloss-informed bi-encoder (:mod:`workbench.wsd.biencoder`): its gloss vectors, trained
#: on SemCor.
BIENCODER = IndexPreset("biencoder", BIENCODER_CONFIG, "semcor", BIENCODER_DESCRIPTION)
#: Every preset by name, the bi-encoder's first.
PRESETS: dict[str, IndexPreset] = {p.name: p for p in (BIENCODER, BEST, PLAIN, WORDNET)}


def packaged_f1(name: str) -> float:
    """F1 on ALL of the system ``name`` with the packaged all-MiniLM-L6-v2 in float32, as
    recorded in :data:`RESULTS_FILE`; NaN where none is recorded (the bi-encoder, whose figure
    is its training card's)."""
    return measured_f1_all().get((name, PACKAGED_FINGERPRINT, "float32"), float("nan"))


def system_of(index: SenseIndex) -> str:
    """The name of the named system ``index`` was built as (``biencoder``, or the preset of the
    same settings and training corpus: ``best``, ``plain``, ``wordnet``), or ``custom`` for any
    other config or training corpus."""
    if index.config == BIENCODER.config:
        return BIENCODER.name
    corpus = "wordnet" if index.training_.corpus == WORDNET_CORPUS else index.training_.corpus
    for preset in (BEST, PLAIN, WORDNET):
        if index.config == preset.config and corpus == preset.training:
            return preset.name
    return "custom"


def system_note(index: SenseIndex) -> str:
    """What a user must know about the quality of ``index``'s answers ("" if nothing): the
    WordNet-only index loses to WordNet's first sense."""
    if index.training_.corpus != WORDNET_CORPUS:
        return ""
    f1 = packaged_f1(WORDNET.name)
    return (
        f"No SemCor here: the senses are represented by their WordNet glosses only, which scores "
        f"{f1:.1f} F1 on the benchmarks (ALL), below WordNet's first sense "
        f"({first_sense_f1_all()}). WordNet's first sense is shown as the back-off; "
        "`workbench data download` fetches SemCor for the best system."
    )
