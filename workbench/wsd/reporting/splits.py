"""The splits WSD papers report, each F1 with its bootstrap interval.

:func:`split_groups` says which instances of an :class:`InstanceTable` each group holds:

* ``dataset``: each dataset and the whole corpus; ``POS``: each POS on the whole corpus;
  ``dataset x POS``;
* ``WordNet first sense``: MFS (a gold key is the lemma's first WordNet sense) against LFS;
  ``SemCor MFS``: the same against SemCor's most frequent sense, when the run had it;
* ``seen in training``: how often the gold sense occurred in the system's training,
  ``0 (zero-shot)``, ``1-2``, ``3-10``, ``>10``, for a system that knows its counts;
* ``candidates``: WordNet senses of the lemma, ``1``, ``2-3``, ``4-7``, ``8-15``, ``16+``.

:func:`score_splits` scores every group: the system's F1 with its interval
(:func:`~workbench.wsd.reporting.intervals.bootstrap_f1`) and each baseline's F1 on the same
instances.

Example::

    rows = score_splits(table, split_groups(table, whole="ALL"))
    [(r.group, round(r.f1, 1), r.lo, r.hi) for r in rows if r.split == "seen in training"]
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from workbench.wsd.reporting.instances import InstanceTable
from workbench.wsd.reporting.intervals import N_BOOT, SEED, bootstrap_f1, f1_of

#: Bins of ``seen in training``: label, lowest and highest count (inclusive).
SEEN_BINS = (("0 (zero-shot)", 0, 0), ("1-2", 1, 2), ("3-10", 3, 10), (">10", 11, None))
#: Bins of ``candidates``.
CANDIDATE_BINS = (("1", 1, 1), ("2-3", 2, 3), ("4-7", 4, 7), ("8-15", 8, 15), ("16+", 16, None))
#: The splits, in the report's order.
SPLITS = (
    "dataset",
    "POS",
    "dataset x POS",
    "WordNet first sense",
    "SemCor MFS",
    "seen in training",
    "candidates",
)


@dataclass(frozen=True)
class SplitScore:
    """One group of one split.

    Attributes:
        split, group: e.g. ``"seen in training"``, ``"0 (zero-shot)"``.
        n: instances in the group.
        f1, lo, hi: the system's F1 and its 95% interval, in percent.
        baselines: baseline name -> its F1 on the same instances.
    """

    split: str
    group: str
    n: int
    f1: float
    lo: float
    hi: float
    baselines: dict[str, float]


def _binned(
    values: np.ndarray, bins: Sequence[tuple[str, int, int | None]]
) -> dict[str, np.ndarray]:
    top = np.iinfo(np.int64).max
    return {label: (values >= low) & (values <= (top if high is None else high))
            for label, low, high in bins}  # fmt: skip


def split_groups(table: InstanceTable, whole: str) -> dict[str, dict[str, np.ndarray]]:
    """Split name -> group label -> ``(n,)`` bool mask, in the order of :data:`SPLITS`; a
    split the table cannot make (no SemCor MFS, no training counts) is left out, and so is an
    empty group. ``whole``: the label of the whole corpus (``ALL``)."""
    n = len(table)
    dataset = np.array(table.dataset, dtype=object)
    pos = np.array(table.pos, dtype=object)
    names = list(dict.fromkeys(table.dataset))
    out: dict[str, dict[str, np.ndarray]] = {}
    sets = {d: dataset == d for d in names if d != whole}
    out["dataset"] = {**sets, whole: np.ones(n, bool)}
    tags = sorted(set(table.pos))
    out["POS"] = {p: pos == p for p in tags}
    if len(sets) > 1:
        out["dataset x POS"] = {f"{d} {p}": m & (pos == p) for d, m in sets.items() for p in tags}
    first = table.wordnet_first
    out["WordNet first sense"] = {"MFS": first, "LFS": ~first}
    if table.semcor_mfs is not None:
        out["SemCor MFS"] = {"MFS": table.semcor_mfs, "LFS": ~table.semcor_mfs}
    if table.seen is not None:
        out["seen in training"] = _binned(table.seen, SEEN_BINS)
    out["candidates"] = _binned(table.candidates, CANDIDATE_BINS)
    return {s: {g: m for g, m in groups.items() if m.any()} for s, groups in out.items()}


def score_splits(
    table: InstanceTable,
    groups: dict[str, dict[str, np.ndarray]],
    n_boot: int = N_BOOT,
    seed: int = SEED,
) -> list[SplitScore]:
    """Every group of ``groups`` scored (see :class:`SplitScore`), in order."""
    answered = table.answered
    bases = {b: table.baseline_credit(b) for b in table.baselines}
    rows = []
    for split, members in groups.items():
        for group, mask in members.items():
            f1, lo, hi = bootstrap_f1(table.credit[mask], n_boot, seed, answered=answered[mask])
            base = {b: float(f1_of(c[mask], a[mask])) for b, (c, a) in bases.items()}
            rows.append(SplitScore(split, group, int(mask.sum()), f1, lo, hi, base))
    return rows
