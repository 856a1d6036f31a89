"""One row per scored instance: what the report's intervals, splits and comparisons are made of.

:func:`instance_table` gathers, for every test instance with gold keys, the system's answer and
its credit (the official scorer's, :mod:`workbench.wsd.scoring`), the score margin to the
runner-up, the baselines' answers, and the facts the splits group by: the dataset, the POS, the
number of WordNet candidates, whether a gold key is the lemma's WordNet first sense or its
SemCor most frequent sense, and how often the gold sense was seen in the system's training.
:meth:`InstanceTable.to_json` writes it as columns and rows (the report's JSON ``instances``);
:func:`table_from_json` reads it back (``workbench wsd compare``).

Example::

    table = instance_table(run.instances, run.evaluation, wordnet, seen=run.index.count_of)
    table.credit.mean(), table.dataset[:3]
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from workbench.errors import DataError
from workbench.lexicon.wordnet import WordNet
from workbench.wsd.evaluate import Evaluation
from workbench.wsd.predict import InstanceSet
from workbench.wsd.scoring import dataset_groups

#: The columns of the JSON ``instances`` entry, in order (see docs/reports.md).
COLUMNS = (
    "id",
    "dataset",
    "lemma",
    "pos",
    "gold",
    "predicted",
    "credit",
    "score",
    "margin",
    "source",
    "candidates",
    "wordnet_first",
    "semcor_mfs",
    "seen",
    "baselines",
)


@dataclass(frozen=True)
class InstanceTable:
    """Per-instance facts of one evaluation, aligned arrays of length ``n``.

    Attributes:
        ids, dataset, lemma, pos: the instance, its dataset (``senseval2`` ... or the corpus).
        gold: its gold keys; predicted: the system's key (None: unanswered).
        credit: ``(n,)`` float, the official credit of the answer (0 or 1 for one key).
        score, margin: ``(n,)`` float, the answer's score and its lead over the runner-up (NaN
            without a runner-up or for a back-off).
        source: how the answer was made (centroid, gloss, backoff, ...).
        candidates: ``(n,)`` int, WordNet's senses of the lemma and POS.
        wordnet_first: ``(n,)`` bool, a gold key is WordNet's first sense.
        semcor_mfs: ``(n,)`` bool, a gold key is SemCor's most frequent sense (None: no
            SemCor baseline in this run).
        seen: ``(n,)`` int, training occurrences of the gold sense (the most of its gold keys;
            None: the system does not know its training counts).
        baselines: baseline name -> its key per instance (None: unanswered).
    """

    ids: tuple[str, ...]
    dataset: tuple[str, ...]
    lemma: tuple[str, ...]
    pos: tuple[str, ...]
    gold: tuple[tuple[str, ...], ...]
    predicted: tuple[str | None, ...]
    credit: np.ndarray
    score: np.ndarray
    margin: np.ndarray
    source: tuple[str, ...]
    candidates: np.ndarray
    wordnet_first: np.ndarray
    semcor_mfs: np.ndarray | None
    seen: np.ndarray | None
    baselines: dict[str, tuple[str | None, ...]]

    def __len__(self) -> int:
        return len(self.ids)

    @property
    def answered(self) -> np.ndarray:
        """``(n,)`` bool: the system gave a key."""
        return np.array([p is not None for p in self.predicted], dtype=bool)

    def baseline_credit(self, name: str) -> tuple[np.ndarray, np.ndarray]:
        """A baseline's ``(credit, answered)`` per instance."""
        keys = self.baselines[name]
        return credit_of(self.gold, keys), np.array([k is not None for k in keys], dtype=bool)

    def to_json(self) -> dict[str, Any]:
        """``{"columns": COLUMNS, "rows": [[...], ...]}`` (NaN as null)."""
        names = list(self.baselines)
        rows = []
        for i in range(len(self)):
            rows.append([
                self.ids[i], self.dataset[i], self.lemma[i], self.pos[i], list(self.gold[i]),
                self.predicted[i], float(self.credit[i]), _num(self.score[i]),
                _num(self.margin[i]), self.source[i], int(self.candidates[i]),
                bool(self.wordnet_first[i]),
                None if self.semcor_mfs is None else bool(self.semcor_mfs[i]),
                None if self.seen is None else int(self.seen[i]),
                {b: self.baselines[b][i] for b in names},
            ])  # fmt: skip
        return {"columns": list(COLUMNS), "rows": rows}


def _num(value: float) -> float | None:
    return float(value) if np.isfinite(value) else None


def credit_of(gold: Sequence[Sequence[str]], keys: Sequence[str | None]) -> np.ndarray:
    """The official credit of one answered key per instance: 1 if it is a gold key, else 0."""
    return np.array([1.0 if k is not None and k in g else 0.0 for g, k in zip(gold, keys)])


def instance_table(
    test: InstanceSet,
    result: Evaluation,
    wordnet: WordNet,
    seen: Callable[[str], int] | None = None,
) -> InstanceTable:
    """The per-instance facts of ``result`` on ``test`` (instances with gold keys only).

    Args:
        test: the encoded test instances (ids, lemmas, POS, gold keys).
        result: the evaluation (predictions and the baselines' answers).
        wordnet: candidates and first senses.
        seen: sense key -> training occurrences, for a system that knows them
            (``SenseIndex.count_of``); None: no seen-count split.
    """
    parts = {d.name for d in result.datasets[:-1]}
    corpus = result.datasets[-1].name
    groups = dataset_groups(test.ids)
    mfs = result.baseline_answers.get("semcor_mfs")
    rows = [i for i, keys in enumerate(test.keys) if keys]
    ids = tuple(test.ids[i] for i in rows)
    gold = tuple(tuple(test.keys[i]) for i in rows)
    lemmas = tuple(test.lemmas[i] for i in rows)
    pos = tuple(test.pos[i] for i in rows)
    preds = [result.predictions.get(i) for i in ids]
    predicted = tuple(p.key if p is not None else None for p in preds)
    nan = float("nan")
    score = np.array([p.score if p is not None else nan for p in preds], dtype=float)
    runner = np.array([p.runner_up_score if p is not None else nan for p in preds], dtype=float)
    first = [wordnet.first_sense(lemma, p) for lemma, p in zip(lemmas, pos)]
    return InstanceTable(
        ids=ids,
        dataset=tuple(groups[i] if groups[i] in parts else corpus for i in ids),
        lemma=lemmas,
        pos=pos,
        gold=gold,
        predicted=predicted,
        credit=credit_of(gold, predicted),
        score=score,
        margin=score - runner,
        source=tuple(p.source if p is not None else "none" for p in preds),
        candidates=np.array([len(wordnet.candidates(lm, p)) for lm, p in zip(lemmas, pos)]),
        wordnet_first=np.array([f is not None and f in g for f, g in zip(first, gold)]),
        semcor_mfs=None if mfs is None else np.array([mfs.get(i) in g for i, g in zip(ids, gold)]),
        seen=None if seen is None else np.array([max(seen(k) for k in g) for g in gold]),
        baselines={b: tuple(a.get(i) for i in ids) for b, a in result.baseline_answers.items()},
    )


def table_from_json(content: Mapping[str, Any], where: str = "the report") -> InstanceTable:
    """Read back :meth:`InstanceTable.to_json`.

    Raises:
        DataError: no ``instances`` entry, or columns other than :data:`COLUMNS`.
    """
    entry = content.get("instances") if isinstance(content, Mapping) else None
    if not isinstance(entry, Mapping) or list(entry.get("columns", ())) != list(COLUMNS):
        raise DataError(
            f"{where} has no per-instance table of this workbench (an 'instances' entry with "
            f"the columns {', '.join(COLUMNS)}): write it again with `workbench wsd eval --out`"
        )
    try:
        rows = [dict(zip(COLUMNS, r, strict=True)) for r in entry["rows"]]
        names = list(rows[0]["baselines"]) if rows else []
        nan = float("nan")
        semcor = [r["semcor_mfs"] for r in rows]
        seen = [r["seen"] for r in rows]
        return InstanceTable(
            ids=tuple(str(r["id"]) for r in rows),
            dataset=tuple(str(r["dataset"]) for r in rows),
            lemma=tuple(str(r["lemma"]) for r in rows),
            pos=tuple(str(r["pos"]) for r in rows),
            gold=tuple(tuple(str(k) for k in r["gold"]) for r in rows),
            predicted=tuple(None if r["predicted"] is None else str(r["predicted"]) for r in rows),
            credit=np.array([float(r["credit"]) for r in rows], dtype=float),
            score=np.array([nan if r["score"] is None else float(r["score"]) for r in rows]),
            margin=np.array([nan if r["margin"] is None else float(r["margin"]) for r in rows]),
            source=tuple(str(r["source"]) for r in rows),
            candidates=np.array([int(r["candidates"]) for r in rows], dtype=int),
            wordnet_first=np.array([bool(r["wordnet_first"]) for r in rows], dtype=bool),
            semcor_mfs=None if None in semcor else np.array(semcor, dtype=bool),
            seen=None if None in seen else np.array(seen, dtype=int),
            baselines={b: tuple(r["baselines"].get(b) for r in rows) for b in names},
        )
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        raise DataError(f"{where}: a malformed per-instance table ({exc})") from exc
