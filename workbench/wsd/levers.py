"""Test-time levers of the bi-encoder's scores (no training): smoothing over WordNet's relations
and a sense prior.

Both change a candidate's score, ``g_s · q`` (``g_s``: its synset's gloss vector, ``q``: the
unit context vector; :mod:`workbench.wsd.biencoder`), by a weight given at test time:

* **smoothing** ``λ`` (SREF, Wang & Wang 2020, at test time only): the score plus ``λ`` times
  the mean score of its synset's neighbours' gloss vectors against the same context vector,
  ``g_s · q + λ · mean_n(g_n · q)``; the neighbours are those of
  :data:`~workbench.lexicon.wordnet.RELATION_SYMBOLS` (hypernyms, instance hypernyms,
  hyponyms, instance hyponyms, similar-to, verb group; :meth:`WordNet.related`). The score is
  linear in the gloss vector, so it is the score of the row ``g_s + λ · mean_n(g_n)``:
  :func:`smoothed_rows` makes those rows once per index and the search stays one dot product
  per candidate. A synset without neighbours keeps its row.
* **prior** ``λ``: the score plus ``λ · log p(sense | lemma, POS)``, ``p`` from a corpus's
  sense counts (SemCor's, :func:`workbench.wsd.builds.semcor_frequencies`) with add-one
  smoothing over the lemma's candidates in the index: ``(c(s) + 1) / (Σ_candidates c + n)``
  (:func:`log_prior`). :func:`with_prior` gives the index one more column, ``λ · log p``,
  which a :class:`PriorIndex` meets with a query column of 1.

A bi-encoder folder may record the levers it answers with when none are given
(:data:`LEVERS_FILE`, read by :func:`folder_levers`): the shipped one smooths by 0.25. A lever
given (``--smoothing 0``) overrides the folder's; one not given (None) takes it
(:meth:`TestTimeLevers.over`).

Example::

    levers = TestTimeLevers(smoothing=0.5).over(folder_levers(shipped_biencoder()))
    levers.label                                             # 'smoothing 0.5'
    levers = TestTimeLevers(smoothing=0.5, prior=0.0)
    rows = smoothed_rows(synsets, vectors, neighbours, neighbour_vectors, 0.5)
    index = with_prior(index, semcor_frequencies(), 0.1)     # a PriorIndex
    index.candidate_scores(vector, "bank", "NOUN")           # scores with the prior added
"""

from __future__ import annotations

import dataclasses
import json
import math
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

import numpy as np

from workbench.errors import InputError, ModelLoadError
from workbench.lexicon.wordnet import key_lemma_pos
from workbench.limits import read_json
from workbench.wsd.baselines import SenseCounts
from workbench.wsd.index import SenseIndex

#: The file of a bi-encoder folder that records the levers it answers with by default: a JSON
#: object with ``smoothing`` and ``prior`` (numbers, 0 and up) and any notes beside them.
LEVERS_FILE = "levers.json"

#: Largest weight a folder or a user may give (a weight past it swamps the score it adds to).
MAX_WEIGHT = 100.0


@dataclasses.dataclass(frozen=True)
class TestTimeLevers:
    """The test-time weights of the bi-encoder's scores (0: off; None: not given, the
    bi-encoder's own, :meth:`over`).

    Attributes:
        smoothing: ``λ`` of the relation smoothing.
        prior: ``λ`` of the SemCor sense prior.
    """

    __test__ = False  # not a pytest class

    smoothing: float | None = None
    prior: float | None = None

    def __post_init__(self) -> None:
        for name, value in self.given().items():
            if not math.isfinite(value) or not 0 <= value <= MAX_WEIGHT:
                raise InputError(f"--{name} {value}: give a weight from 0 to {MAX_WEIGHT:g}")

    def given(self) -> dict[str, float]:
        """The weights given (not None), by name."""
        return {k: float(v) for k, v in dataclasses.asdict(self).items() if v is not None}

    @property
    def active(self) -> bool:
        """Whether a weight above 0 is given."""
        return any(self.given().values())

    def over(self, own: TestTimeLevers) -> TestTimeLevers:
        """Every weight set: each one given here, else ``own``'s, else 0.

        Example::

            >>> TestTimeLevers(prior=0.1).over(TestTimeLevers(smoothing=0.25))
            TestTimeLevers(smoothing=0.25, prior=0.1)
        """
        mine, theirs = self.given(), own.given()
        return TestTimeLevers(
            **{k: mine.get(k, theirs.get(k, 0.0)) for k in ("smoothing", "prior")}
        )

    @property
    def label(self) -> str:
        """``smoothing 0.5, prior 0.1``; ``none`` with none above 0."""
        parts = [f"{k} {v:g}" for k, v in self.given().items() if v]
        return ", ".join(parts) or "none"

    def apart_from(self, own: TestTimeLevers) -> str:
        """The weights that differ from ``own``'s (a weight not given: 0), in words:
        ``smoothing 0``; "" where none does.

        Example::

            >>> NO_LEVERS.apart_from(TestTimeLevers(smoothing=0.25))
            'smoothing 0'
        """
        theirs = own.describe()
        return ", ".join(f"{k} {v:g}" for k, v in self.describe().items() if v != theirs[k])

    def describe(self) -> dict[str, float]:
        """Both weights, for reports (one not given: 0)."""
        return {"smoothing": 0.0, "prior": 0.0, **self.given()}


#: No lever given: the bi-encoder answers with its folder's (:func:`folder_levers`).
DEFAULT_LEVERS = TestTimeLevers()
#: Both levers off, whatever a folder records.
NO_LEVERS = TestTimeLevers(smoothing=0.0, prior=0.0)


def levers_in_words(levers: TestTimeLevers | None) -> str:
    """What ``levers`` add to a bi-encoder's score, as a clause to follow "the dot product of
    the word's vector and the sense's definition vector" ("" for none).

    Example::

        >>> levers_in_words(TestTimeLevers(smoothing=0.25, prior=0.0))[:45]
        ', plus 0.25 times the mean of its WordNet nei'
        >>> levers_in_words(NO_LEVERS)
        ''
    """
    weights = levers.describe() if levers is not None else {}
    parts = []
    if weights.get("smoothing"):
        parts.append(f", plus {weights['smoothing']:g} times the mean of its WordNet "
                     "neighbours' (hypernyms, hyponyms, similar, verb group)")  # fmt: skip
    if weights.get("prior"):
        parts.append(f", plus {weights['prior']:g} times the log of the sense's share in SemCor")
    return "".join(parts)


def _levers_file(directory: str | Path | None) -> dict | None:
    """The JSON object of ``directory``'s :data:`LEVERS_FILE`; None without one."""
    if directory is None:
        return None
    path = Path(directory) / LEVERS_FILE
    if not path.is_file():
        return None
    data = read_json(path, what=str(path), error=ModelLoadError)
    if not isinstance(data, dict):
        raise ModelLoadError(f"{path} is not a JSON object of the folder's levers")
    return data


def folder_f1(directory: str | Path | None) -> float | None:
    """The F1 on ALL the folder's :data:`LEVERS_FILE` records as measured with its levers
    (``f1_all``, a number from 0 to 100, rounded to one decimal: what the bi-encoder scores as
    it answers, where its training card's ``test`` is before them); None where none is
    recorded (or it is not such a number).

    Example::

        >>> folder_f1(None) is None
        True
    """
    value = (_levers_file(directory) or {}).get("f1_all")
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return round(float(value), 1) if math.isfinite(value) and 0 <= value <= 100 else None


def folder_levers(directory: str | Path | None) -> TestTimeLevers:
    """The levers a bi-encoder folder answers with by default: its :data:`LEVERS_FILE`, both
    weights set; :data:`NO_LEVERS` without the file (or for None).

    Raises:
        ModelLoadError: the file is not a JSON object whose ``smoothing`` and ``prior`` are
            numbers from 0 to :data:`MAX_WEIGHT` (it names the file and the value).

    Example::

        >>> folder_levers(None)
        TestTimeLevers(smoothing=0.0, prior=0.0)
    """
    data = _levers_file(directory)
    if data is None:
        return NO_LEVERS
    path = Path(str(directory)) / LEVERS_FILE
    weights = {}
    for name in ("smoothing", "prior"):
        value = data.get(name, 0.0)
        if (
            isinstance(value, bool)
            or not isinstance(value, (int, float))
            or not math.isfinite(value)
            or not 0 <= value <= MAX_WEIGHT
        ):
            raise ModelLoadError(
                f"{path}: {name} is {json.dumps(value)[:40]}, not a weight from 0 to {MAX_WEIGHT:g}"
            )
        weights[name] = float(value)
    return TestTimeLevers(**weights)


def smoothed_rows(
    synsets: Sequence[str],
    vectors: np.ndarray,
    neighbours: Callable[[str], Sequence[str]],
    neighbour_vectors: Callable[[Sequence[str]], np.ndarray],
    weight: float,
) -> np.ndarray:
    """Rows ``g_s + weight · mean_n(g_n)`` ``(len(synsets), dim)`` float32 (the module
    docstring): ``vectors[i]`` is the gloss vector of ``synsets[i]``; ``neighbours(s)`` the
    synsets related to ``s``; ``neighbour_vectors(names)`` their gloss vectors, asked once for
    all of them. A synset without neighbours keeps its row.

    Example::

        >>> v = np.eye(2, dtype=np.float32)
        >>> smoothed_rows(["a"], v[:1], lambda s: ["b"], lambda n: v[1:], 0.5).tolist()
        [[1.0, 0.5]]
    """
    rows = np.array(vectors, dtype=np.float32, copy=True)
    if weight == 0 or not len(synsets):
        return rows
    related = [tuple(neighbours(s)) for s in synsets]
    names = sorted({n for r in related for n in r})
    if not names:
        return rows
    found = np.asarray(neighbour_vectors(names), dtype=np.float32)
    at = {n: i for i, n in enumerate(names)}
    for i, r in enumerate(related):
        if r:
            rows[i] += weight * found[[at[n] for n in r]].mean(axis=0)
    return rows


def key_counts(counts: SenseCounts) -> Counter:
    """Occurrences per sense key of ``(lemma, POS) -> Counter`` counts (summed over the
    buckets a key is in)."""
    total: Counter = Counter()
    for bucket in counts.values():
        total.update(bucket)
    return total


def log_prior(keys: Sequence[str], counts: Mapping[str, float]) -> np.ndarray:
    """``log p(key | lemma, POS)`` ``(len(keys),)`` float32 with add-one smoothing over the keys
    of each ``(lemma, POS)`` among ``keys``: ``(c(k) + 1) / (Σ c + n)``.

    Example::

        >>> [round(float(x), 3) for x in log_prior(["a%1:0:0::", "a%1:0:1::"], {"a%1:0:0::": 2})]
        [-0.288, -1.386]
    """
    groups: dict[tuple[str, str], list[int]] = {}
    for i, key in enumerate(keys):
        groups.setdefault(key_lemma_pos(key), []).append(i)
    out = np.zeros(len(keys), dtype=np.float64)
    for rows in groups.values():
        c = np.array([float(counts.get(keys[i], 0.0)) for i in rows])
        out[rows] = np.log((c + 1) / (c.sum() + len(rows)))
    return out.astype(np.float32)


class PriorIndex(SenseIndex):
    """A :class:`SenseIndex` whose last column is ``λ · log p`` of each row's sense: every
    query gets a column of 1, so a row's score is its score without the column plus
    ``λ · log p`` (made by :func:`with_prior`)."""

    def transform_queries(self, vectors: np.ndarray) -> np.ndarray:
        """The unit query rows of :meth:`SenseIndex.transform_queries` ``(n, dim)`` and a
        column of 1: ``(n, dim + 1)``."""
        q = super().transform_queries(vectors)
        ones = np.ones((len(q), 1), dtype=np.float32)
        return np.ascontiguousarray(np.concatenate([q, ones], axis=1))


def with_prior(index: SenseIndex, counts: SenseCounts, weight: float) -> SenseIndex:
    """``index`` with ``weight · log p(sense | lemma, POS)`` added to each candidate's score
    (:func:`log_prior` of ``counts``, e.g. SemCor's): a :class:`PriorIndex` of the same keys,
    origins, counts, encoder and training; ``index`` itself for ``weight`` 0.

    Raises:
        InputError: ``index`` has a correction or concatenated glosses (its queries are not
            the plain unit context vectors the prior's column is meant for).
    """
    if weight == 0:
        return index
    if index.correction_ is not None or index.config.gloss == "concat":
        raise InputError("the sense prior goes with a gloss-only index without correction")
    prior = weight * log_prior(index.keys_, key_counts(counts))
    out = PriorIndex(index.config, device=index.device, search=index.search)
    rows = np.concatenate([index.vectors_, prior[:, None]], axis=1)
    out.set_rows(index.keys_, rows, index.origin_, index.counts_)
    out.correction_ = None
    out.encoder_ = index.encoder_
    out.training_ = index.training_
    return out
