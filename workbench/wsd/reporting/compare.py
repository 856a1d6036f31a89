"""Two WSD systems on the same instances: per-dataset and per-split deltas, paired p-values, and
the instances where they answer differently.

:func:`compare_tables` takes two :class:`~workbench.wsd.reporting.instances.InstanceTable` (two
saved eval JSONs read back with :func:`load_eval`, or two runs in hand), keeps the instances
both scored (matched by id, the gold keys compared), groups them as the report does
(:func:`~workbench.wsd.reporting.splits.split_groups`; the seen-count split by A's training
counts) and tests each group with the paired bootstrap
(:func:`~workbench.wsd.reporting.intervals.paired_bootstrap`). :func:`comparison_report` makes
it a :class:`~workbench.reports.writers.Report`; :func:`saved_of` takes a report in hand
(the app's two runs) instead of a saved JSON.

Example::

    a, b = load_eval("a/wsd-ALL.json"), load_eval("b/wsd-ALL.json")
    cmp = compare_tables(a.table, b.table, whole=a.corpus)
    [(g.group, round(g.delta, 1), g.p_value) for g in cmp.groups if g.split == "dataset"]
"""

from __future__ import annotations

import os
from dataclasses import dataclass

import numpy as np

from workbench.errors import DataError
from workbench.limits import read_json
from workbench.reports.tables import Table
from workbench.reports.writers import Report, Section
from workbench.wsd.reporting.document import EvalReport
from workbench.wsd.reporting.instances import InstanceTable, table_from_json
from workbench.wsd.reporting.intervals import N_BOOT, PAIRED_METHOD, SEED, paired_bootstrap
from workbench.wsd.reporting.splits import split_groups


@dataclass(frozen=True)
class SavedEval:
    """A saved eval JSON read back: its title, corpus, system name and per-instance table."""

    title: str
    corpus: str
    system: str
    table: InstanceTable


def load_eval(path: str | os.PathLike[str]) -> SavedEval:
    """Read an eval report's JSON (``workbench wsd eval --out`` or ``--json``).

    Raises:
        DataError: not JSON, or no per-instance table (an older report).
    """
    content = read_json(path, f"the eval report {path}")
    if not isinstance(content, dict):
        raise DataError(f"{path}: not an eval report (a JSON object is expected)")
    table = table_from_json(content, str(path))
    summary, system = (content.get(k) for k in ("summary", "system"))
    summary = summary if isinstance(summary, dict) else {}
    system = system if isinstance(system, dict) else {}
    corpus = str(summary.get("corpus") or (table.dataset[-1] if len(table) else ""))
    return SavedEval(str(content.get("title", path)), corpus, _system_label(system), table)


def _system_label(system: dict) -> str:
    """A report's system as its title names it: ``biencoder, smoothing 0.5`` (its name, and
    the settings that set the run apart, when it has any)."""
    name, settings = str(system.get("name", "")), str(system.get("settings") or "")
    return f"{name}, {settings}" if name and settings else name


def saved_of(doc: EvalReport) -> SavedEval:
    """A report in hand as :func:`load_eval` reads its JSON (what the app compares)."""
    if doc.table is None:
        raise DataError("this report keeps no per-instance table: it cannot be compared")
    summary, system = doc.report.data.get("summary", {}), doc.report.data.get("system", {})
    corpus = str(summary.get("corpus") or (doc.table.dataset[-1] if len(doc.table) else ""))
    return SavedEval(doc.report.title, corpus, _system_label(system), doc.table)


@dataclass(frozen=True)
class GroupDelta:
    """One group compared: F1 of A and B (percent), ``delta = A - B``, the paired p-value."""

    split: str
    group: str
    n: int
    f1_a: float
    f1_b: float
    delta: float
    p_value: float


@dataclass(frozen=True)
class Difference:
    """An instance the two answer differently: the keys and whether each is right."""

    id: str
    lemma: str
    gold: str
    a: str
    b: str
    a_right: bool
    b_right: bool


@dataclass(frozen=True)
class Comparison:
    """:func:`compare_tables`' result.

    Attributes:
        n_common: instances both scored; only_a, only_b: those scored by one only (left out).
        groups: every group of every split, with its delta and p-value.
        differences: the instances answered differently, in A's order.
        n_boot, seed: the bootstrap's.
    """

    n_common: int
    only_a: int
    only_b: int
    groups: tuple[GroupDelta, ...]
    differences: tuple[Difference, ...]
    n_boot: int
    seed: int


def _rows(table: InstanceTable, ids: list[str]) -> np.ndarray:
    where = {i: r for r, i in enumerate(table.ids)}
    return np.array([where[i] for i in ids], dtype=int)


def compare_tables(
    a: InstanceTable, b: InstanceTable, whole: str, n_boot: int = N_BOOT, seed: int = SEED
) -> Comparison:
    """Compare ``a`` and ``b`` on the instances both scored (see the module's docstring).

    Raises:
        DataError: no instance in common, or an instance whose gold keys differ (two
            different test sets).
    """
    ids_b = set(b.ids)
    common = [i for i in a.ids if i in ids_b]
    if not common:
        raise DataError("the two evaluations share no instance: were they run on the same data?")
    ra, rb = _rows(a, common), _rows(b, common)
    for i, j in zip(ra, rb):
        if set(a.gold[i]) != set(b.gold[j]):
            raise DataError(
                f"instance {a.ids[i]} has other gold keys in the two evaluations "
                f"({a.gold[i]} against {b.gold[j]}): not the same test data"
            )
    groups = split_groups(_subset(a, ra), whole)
    credit_a, credit_b = a.credit[ra], b.credit[rb]
    done_a, done_b = a.answered[ra], b.answered[rb]
    out = []
    for split, members in groups.items():
        for group, mask in members.items():
            t = paired_bootstrap(credit_a[mask], credit_b[mask], n_boot, seed, done_a[mask],
                                 done_b[mask])  # fmt: skip
            out.append(GroupDelta(split, group, int(mask.sum()), t.f1_a, t.f1_b, t.delta,
                                  t.p_value))  # fmt: skip
    differences = tuple(
        Difference(a.ids[i], f"{a.lemma[i]}.{a.pos[i]}", a.gold[i][0], a.predicted[i] or "-",
                   b.predicted[j] or "-", bool(a.credit[i] >= 1), bool(b.credit[j] >= 1))
        for i, j in zip(ra, rb)
        if a.predicted[i] != b.predicted[j]
    )  # fmt: skip
    return Comparison(len(common), len(a) - len(common), len(b) - len(common), tuple(out),
                      differences, n_boot, seed)  # fmt: skip


def _subset(table: InstanceTable, rows: np.ndarray) -> InstanceTable:
    pick = [int(r) for r in rows]

    def take(values: tuple) -> tuple:
        return tuple(values[r] for r in pick)

    return InstanceTable(
        ids=take(table.ids), dataset=take(table.dataset), lemma=take(table.lemma),
        pos=take(table.pos), gold=take(table.gold), predicted=take(table.predicted),
        credit=table.credit[rows], score=table.score[rows], margin=table.margin[rows],
        source=take(table.source), candidates=table.candidates[rows],
        wordnet_first=table.wordnet_first[rows],
        semcor_mfs=None if table.semcor_mfs is None else table.semcor_mfs[rows],
        seen=None if table.seen is None else table.seen[rows],
        baselines={k: take(v) for k, v in table.baselines.items()},
    )  # fmt: skip


def delta_table(cmp: Comparison, name_a: str = "A", name_b: str = "B") -> Table:
    """Every group's F1 of A and B, the delta and the p-value."""
    return Table(
        ("split", "group", "instances", f"F1 {name_a}", f"F1 {name_b}", "delta", "p (paired)"),
        tuple((g.split, g.group, g.n, g.f1_a, g.f1_b, g.delta, g.p_value) for g in cmp.groups),
        caption=f"F1 (%) of A and B on the instances both scored ({cmp.n_common:,}); delta = A "
        f"- B; p: {PAIRED_METHOD}, {cmp.n_boot} resamples, seed {cmp.seed}.",
        digits=3,
    )


def differences_table(cmp: Comparison, limit: int | None = None) -> Table:
    """The instances answered differently (the first ``limit``, all with None)."""
    shown = cmp.differences[:limit] if limit is not None else cmp.differences
    return Table(
        ("instance", "lemma", "gold", "A", "B", "A right", "B right"),
        tuple((d.id, d.lemma, d.gold, d.a, d.b, d.a_right, d.b_right) for d in shown),
        caption=f"Instances answered differently: {len(cmp.differences):,}"
        + (f" (the first {len(shown):,} shown)" if len(shown) < len(cmp.differences) else ""),
    )


def comparison_report(cmp: Comparison, a: SavedEval, b: SavedEval, command: str = "") -> Report:
    """The comparison as a report (every difference in its JSON ``data``)."""
    a_right = sum(d.a_right and not d.b_right for d in cmp.differences)
    b_right = sum(d.b_right and not d.a_right for d in cmp.differences)
    text = (
        f"A: {a.title}\n\nB: {b.title}\n\n{cmp.n_common:,} instances in common "
        f"({cmp.only_a} only in A, {cmp.only_b} only in B are left out); they answer "
        f"{len(cmp.differences):,} differently: A alone right on {a_right:,}, B alone on "
        f"{b_right:,}."
    )
    return Report(
        title=f"WSD comparison: {a.system or 'A'} against {b.system or 'B'}",
        config={"a": a.title, "b": b.title, "n_boot": cmp.n_boot, "seed": cmp.seed},
        sections=(
            Section("Deltas per dataset and split", text, tables=(delta_table(cmp),)),
            Section("Instances answered differently", tables=(differences_table(cmp, 200),)),
        ),
        data={"groups": cmp.groups, "differences": cmp.differences, "n_common": cmp.n_common},
        command=command,
    )
