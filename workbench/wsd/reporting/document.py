"""The WSD evaluation report: what a researcher reads first, then the splits, errors and method.

:func:`eval_report` turns one evaluation (:func:`workbench.wsd.evaluate.evaluate_corpus`) into an
:class:`EvalReport`: a :class:`~workbench.reports.writers.Report` whose title names the system,
the model, the training data and the F1 with its 95% interval, whose first section says the
result and the two baselines in one sentence and one table; then F1 per dataset with intervals,
the published systems' reported figures, MFS/LFS, the seen-count split (for a system that knows
its training counts), POS and dataset x POS, candidates, calibration, errors in words, the
prediction types and the method. Every table is also kept by name (for CSV), with the main
results as a LaTeX table, and the JSON content (``data``) holds every number and the
per-instance table. Each error links to the app's WSD page showing it
(:mod:`workbench.wsd.reporting.links`; ``app_url``). :mod:`workbench.wsd.reporting.files`
writes it; the app's WSD page shows it.

Example::

    doc = eval_report(run, corpus, wordnet, system_facts(opened, run.index), config)
    doc.report.title, doc.tables["datasets"].rows[-1], doc.latex
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, replace
from typing import Any

import plotly.graph_objects as go

from workbench.corpora.readers import Corpus
from workbench.escaping import plotly_text
from workbench.lexicon.wordnet import WordNet
from workbench.reports.tables import Link, Table, latex_table
from workbench.reports.writers import Report, Section
from workbench.wsd.evaluate import BASELINES, CorpusEvaluation, SweepPoint
from workbench.wsd.levers import NO_LEVERS, folder_levers
from workbench.wsd.opened import OpenedSystem
from workbench.wsd.presets import system_of
from workbench.wsd.report import BASELINE_TITLES, prf, source_table, sweep_figure, sweep_table
from workbench.wsd.reporting.calibration import NO_MARGIN, calibration_figure, margin_deciles
from workbench.wsd.reporting.error_examples import ErrorExample, error_examples
from workbench.wsd.reporting.instances import InstanceTable, instance_table
from workbench.wsd.reporting.intervals import (
    INTERVAL_METHOD,
    LEVEL,
    N_BOOT,
    PAIRED_METHOD,
    SEED,
    bootstrap_f1,
    mcnemar_exact,
    paired_bootstrap,
)
from workbench.wsd.reporting.links import APP_URL, error_link
from workbench.wsd.reporting.published import PUBLISHED, SETS, PublishedSystem
from workbench.wsd.reporting.splits import SplitScore, score_splits, split_groups
from workbench.wsd.systems.registry import SYSTEMS

#: The tables of a report by name, in the report's order (a CSV file each; a table a run
#: cannot make, such as ``seen`` without training counts, is absent).
TABLE_NAMES = (
    "summary",
    "datasets",
    "published",
    "mfs",
    "seen",
    "pos",
    "dataset_pos",
    "candidates",
    "calibration",
    "errors_by_lemma",
    "errors_sample",
    "sources",
    "sweep",
)


@dataclass(frozen=True)
class SystemFacts:
    """What the report's title says about the system.

    Attributes:
        name: the system (``biencoder``, ``best``, ...); description: one line about it.
        model: the model it reads (a bi-encoder: its name and base model).
        training: its training data; n_training: training occurrences (0: none known).
        knows_counts: it knows how often it saw each sense in training (seen-count split).
        settings: what sets this run apart from the named system's defaults, in words
            (``smoothing 0.5``: test-time levers other than the bi-encoder folder's own; a
            custom index: its settings), said in the title beside the name; "" for none.
    """

    name: str
    description: str
    model: str
    training: str
    n_training: int
    knows_counts: bool
    settings: str = ""

    @property
    def label(self) -> str:
        """The name, with the settings that set this run apart: ``biencoder, smoothing 0.5``."""
        return f"{self.name}, {self.settings}" if self.settings else self.name


def system_facts(opened: OpenedSystem, index: Any, name: str, description: str) -> SystemFacts:
    """The facts of the system ``opened`` that answered with ``index`` (a
    :class:`~workbench.wsd.index.SenseIndex`), named ``name`` (``presets.system_of``)."""
    bi = opened.biencoder
    if bi is not None:
        base = bi.card.get("base_model") or "its base model"
        model = f"{bi.name} on {base}"
    else:
        model = str(opened.encoder.name)
    training = index.training_
    corpus = str(training.corpus).split(", as ")[0]
    knows = bool(len(index) and int(index.counts_.sum()) > 0)
    levers = opened.levers
    own = folder_levers(bi.directory) if bi is not None else NO_LEVERS
    settings = levers.apart_from(own) if levers is not None else ""
    if name not in SYSTEMS:  # an index of settings of its own: say them
        settings = ", ".join(filter(None, (str(index.config.label), settings)))
    return SystemFacts(name, description, model, corpus, int(training.n_occurrences), knows,
                       settings)  # fmt: skip


def facts_of(opened: OpenedSystem, index: Any) -> SystemFacts:
    """:func:`system_facts` of the system that answered with ``index``, named and described
    by the registry (``custom``: an index of settings of its own)."""
    name = system_of(index)
    known = SYSTEMS.get(name)
    return system_facts(opened, index, name, known.description if known else "settings of its own")


@dataclass(frozen=True)
class EvalReport:
    """A built report: the :class:`Report` (its ``data`` is the JSON content beyond the
    sections), each table by name (:data:`TABLE_NAMES`), the LaTeX table of the main
    results, the per-instance table (what :mod:`workbench.wsd.reporting.compare` compares),
    the figures by name (``datasets``, ``calibration``) and the errors in words
    (``by_lemma``, ``sample``: :class:`ErrorExample` with their links into the app)."""

    report: Report
    tables: dict[str, Table]
    latex: str
    table: InstanceTable | None = None
    figures: Mapping[str, go.Figure] | None = None
    errors: Mapping[str, Sequence[ErrorExample]] | None = None


def _ci(f1: float, lo: float, hi: float) -> str:
    return f"{f1:.1f} [{lo:.1f}, {hi:.1f}]" if not math.isnan(f1) else "undefined"


def _p(p: float) -> str:
    """A p-value as text: ``= 0.0421``, ``< 0.001``."""
    return f"= {p:.3g}" if p >= 0.001 else "< 0.001"


def _baselines(table: InstanceTable) -> list[str]:
    return [b for b in BASELINES if b in table.baselines] + sorted(
        set(table.baselines) - set(BASELINES)
    )


def _split_table(rows: Sequence[SplitScore], bases: Sequence[str], caption: str,
                 with_split: bool = False, notes: tuple[str, ...] = ()) -> Table:  # fmt: skip
    cols = ("split",) * with_split + ("group", "instances", "F1", "95% low", "95% high")
    cols += tuple(f"{BASELINE_TITLES.get(b, b)} F1" for b in bases)
    body = [
        (r.split,) * with_split + (r.group, r.n, r.f1, r.lo, r.hi)
        + tuple(r.baselines.get(b) for b in bases)
        for r in rows
    ]  # fmt: skip
    return Table(cols, tuple(body), caption=caption, digits=1, notes=notes)


def _error_table(examples: Sequence[ErrorExample], caption: str) -> Table:
    rows = tuple(
        (e.id, e.lemma, f"{e.wrong}/{e.total}", e.sentence, e.gold, e.gold_definition,
         e.predicted or "-", e.predicted_definition, e.margin,
         Link("open", e.link) if e.link else "-")
        for e in examples
    )  # fmt: skip
    cols = ("instance", "lemma", "wrong/all", "sentence", "gold", "gold definition",
            "predicted", "predicted definition", "margin", "in the app")  # fmt: skip
    return Table(cols, rows, caption=caption, digits=3)


def _dataset_figure(rows: Sequence[SplitScore], bases: Sequence[str]) -> go.Figure:
    names = [plotly_text(r.group) for r in rows]
    fig = go.Figure(
        go.Bar(
            name="this system",
            x=names,
            y=[r.f1 for r in rows],
            error_y={
                "type": "data",
                "symmetric": False,
                "array": [r.hi - r.f1 for r in rows],
                "arrayminus": [r.f1 - r.lo for r in rows],
            },
        )  # fmt: skip
    )
    for b in bases:
        fig.add_trace(go.Bar(name=BASELINE_TITLES.get(b, b), x=names,
                             y=[r.baselines.get(b) for r in rows]))  # fmt: skip
    fig.update_layout(title="F1 per dataset with 95% intervals, and the baselines",
                      barmode="group", yaxis_title="F1 (%)", template="plotly_white")  # fmt: skip
    return fig


def _checked(p: PublishedSystem, sets: Sequence[str]) -> str:
    shown = [s for s in sets if p.f1.get(s) is not None]
    done = [s for s in shown if s in p.checked]
    if not shown:
        return "-"
    return "all" if done == shown else ", ".join(done) if done else "no"


def _authors(citation: str) -> str:
    """The authors and year a citation starts with: ``Blevins and Zettlemoyer (2020)``."""
    head, year, _ = citation.partition(")")
    return head + year if year else citation


def _published_table(ours: Mapping[str, float], whole: str) -> Table:
    sets = [s for s in SETS if s in ours]
    rows = [(p.name, _authors(p.citation), "reported", _checked(p, sets),
             *(p.f1.get(s) for s in sets)) for p in PUBLISHED]  # fmt: skip
    rows.append(("this system", "this run", "measured here", "-", *(ours.get(s) for s in sets)))
    notes = tuple(
        f"{p.name}: {p.citation}."
        + (f" Checked against {p.checked_against}: {', '.join(p.checked)}." if p.checked else "")
        + (f" Also: {p.also}." if p.also else "")
        for p in PUBLISHED
    )
    return Table(
        ("system", "source", "figures", "checked here", *sets),
        tuple(rows),
        caption="Published systems on the evaluation framework: F1 as reported in their papers "
        "(not re-run here; SemCor-trained), beside this run. 'checked here': the sets whose "
        "figure was checked against the sources in the notes (the system's released answers "
        "scored here, its authors' repository, NLP-progress's table).",
        digits=1,
        notes=(*notes, "undefined: not checked here, so left out (the system's note says why)."),
    )


def _latex_main(rows: Sequence[SplitScore], bases: Sequence[str], facts: SystemFacts) -> str:
    cols = ("Dataset", "n", "F1 [95% CI]", *(BASELINE_TITLES.get(b, b) for b in bases))
    body = tuple(
        (r.group, r.n, _ci(r.f1, r.lo, r.hi), *(r.baselines.get(b) for b in bases)) for r in rows
    )
    caption = (
        f"WSD F1 (%) of {facts.label} ({facts.model}), with 95% bootstrap intervals over "
        "instances; baselines on the same instances."
    )
    table = Table(cols, body, digits=1, caption=caption)
    return latex_table(table, label="tab:wsd-results")


def eval_report(
    run: CorpusEvaluation,
    corpus: Corpus,
    wordnet: WordNet,
    facts: SystemFacts,
    config: Mapping[str, Any],
    sweep: Sequence[SweepPoint] = (),
    command: str = "",
    n_boot: int = N_BOOT,
    seed: int = SEED,
    app_url: str = APP_URL,
    app_model: str | None = None,
) -> EvalReport:
    """The report of one evaluation (see the module's docstring).

    Args:
        run: the evaluation of ``corpus`` (instances, the index that answered, the scores).
        corpus: the test corpus (its sentences, for the errors in words).
        wordnet: candidates, first senses and definitions.
        facts: the system (:func:`system_facts`).
        config: the full configuration, shown folded (long lists summarised) and whole in JSON.
        sweep: a layer sweep to add.
        command: the command line that produced it.
        n_boot, seed: the bootstrap's resamples and seed (recorded in the report).
        app_url: the app's address: each error links to its WSD page showing that sentence
            (:func:`workbench.wsd.reporting.links.error_link`).
        app_model: the model as the app's sidebar names it (None: the packaged one).
    """
    if run.context:  # read with its document's neighbours: said beside the system's name
        context = f"context {run.context}"
        facts = replace(facts, settings=", ".join(filter(None, (facts.settings, context))))
    result = run.evaluation
    whole = result.datasets[-1].name
    seen = run.index.count_of if facts.knows_counts else None
    table = instance_table(run.instances, result, wordnet, seen=seen)
    bases = _baselines(table)
    groups = split_groups(table, whole)
    scored = score_splits(table, groups, n_boot, seed)
    by_split: dict[str, list[SplitScore]] = {}
    for r in scored:
        by_split.setdefault(r.split, []).append(r)
    datasets = by_split["dataset"]
    top = datasets[-1]

    # the first screen: system and baselines on the whole corpus, with intervals and p-values
    answered = table.answered
    summary_rows: list[tuple[Any, ...]] = [
        ("this system", facts.label, top.f1, top.lo, top.hi, 0.0, "-")
    ]
    tests: dict[str, Any] = {}
    for b in bases:
        credit, done = table.baseline_credit(b)
        f1, lo, hi = bootstrap_f1(credit, n_boot, seed, answered=done)
        test = paired_bootstrap(table.credit, credit, n_boot, seed, answered, done)
        mc = mcnemar_exact(table.credit, credit)
        tests[b] = {"delta": test.delta, "p_paired_bootstrap": test.p_value, "p_mcnemar": mc}
        summary_rows.append(
            (
                BASELINE_TITLES.get(b, b),
                "baseline",
                f1,
                lo,
                hi,
                test.delta,
                _p(test.p_value).removeprefix("= "),
            )
        )
    summary = Table(
        ("system", "kind", "F1", "95% low", "95% high", "this system - it", "p (paired)"),
        tuple(summary_rows),
        caption=f"F1 (%) on {whole} ({len(table):,} instances), 95% bootstrap intervals; "
        "p: paired bootstrap against this system.",
        digits=1,
    )
    base_text = "; ".join(
        f"{BASELINE_TITLES.get(b, b)} scores {_ci(r[2], r[3], r[4])} "
        f"(p {_p(tests[b]['p_paired_bootstrap'])})"
        for b, r in zip(bases, summary_rows[1:])
    )
    sentence = (
        f"On {whole} ({len(table):,} instances) the {facts.label} system ({facts.model}, "
        f"trained on {facts.training}) scores F1 {_ci(top.f1, top.lo, top.hi)} (95% interval)"
        + (f"; on the same instances {base_text}." if base_text else ".")
    )
    method = (
        f"Intervals: {INTERVAL_METHOD}, {n_boot} resamples, seed {seed}, {LEVEL:.0%} "
        f"(percentiles); p-values: {PAIRED_METHOD}, the same resamples (exact McNemar in the "
        "JSON). Scores follow the official scorer's rules."
    )
    title = (
        f"WSD on {whole}: {facts.label} ({facts.model}; trained on {facts.training}), "
        f"F1 {_ci(top.f1, top.lo, top.hi)}"
    )

    tables: dict[str, Table] = {"summary": summary}
    tables["datasets"] = _split_table(
        datasets, bases, "F1 (%) per dataset with 95% bootstrap intervals; baselines on the same "
        "instances."
    )  # fmt: skip
    ours = {r.group: r.f1 for r in datasets}
    if any(s in ours for s in SETS):  # only beside the framework's sets
        tables["published"] = _published_table(ours, whole)
    mfs_rows = by_split.get("WordNet first sense", []) + by_split.get("SemCor MFS", [])
    tables["mfs"] = _split_table(
        mfs_rows, bases, "MFS: a gold key is the lemma's most frequent sense (WordNet's first "
        "sense, or SemCor's MFS); LFS: it is not.", with_split=True
    )  # fmt: skip
    if "seen in training" in by_split:
        tables["seen"] = _split_table(
            by_split["seen in training"], bases,
            f"By how often the gold sense occurred in the system's training ({facts.training}; "
            "0: zero-shot).",
        )  # fmt: skip
    tables["pos"] = _split_table(by_split["POS"], bases, f"Per POS on {whole}.")
    if "dataset x POS" in by_split:
        tables["dataset_pos"] = _split_table(by_split["dataset x POS"], bases, "Dataset x POS.")
    tables["candidates"] = _split_table(
        by_split["candidates"], bases, "By the number of WordNet senses of the lemma and POS."
    )
    deciles = margin_deciles(table, n_boot=n_boot, seed=seed)
    tables["calibration"] = Table(
        ("margin decile", "lowest margin", "highest margin", "answers", "accuracy", "95% low",
         "95% high"),
        tuple((d.label, d.low, d.high, d.n, d.f1, d.lo, d.hi) for d in deciles),
        caption="Accuracy (%) by the answer's score margin over the runner-up, in deciles "
        f"(1: smallest); '{NO_MARGIN}': answers without a margin.",
        digits=3,
    )  # fmt: skip
    by_lemma, sample = error_examples(table, corpus, wordnet, seed=seed)
    linked = facts.name if facts.name in SYSTEMS else None  # a custom system: the page's default
    by_lemma, sample = (
        [replace(e, link=error_link(e, system=linked, model=app_model, base_url=app_url))
         if e.text else e for e in examples]
        for examples in (by_lemma, sample)
    )  # fmt: skip
    tables["errors_by_lemma"] = _error_table(
        by_lemma, "The lemmas with most errors: their first wrong instances."
    )
    tables["errors_sample"] = _error_table(
        sample, f"A sample of all {int((table.credit < 1).sum()):,} errors (seed {seed})."
    )
    tables["sources"] = source_table(result)
    if sweep:
        tables["sweep"] = sweep_table(sweep)

    figures = {"datasets": _dataset_figure(datasets, bases),
               "calibration": calibration_figure(deciles)}  # fmt: skip
    sections = [
        Section("Summary", f"{sentence}\n\n{method}", tables=(summary,)),
        Section("F1 per dataset", tables=(tables["datasets"],), figures=(figures["datasets"],)),
    ]  # fmt: skip
    if "published" in tables:
        sections.append(Section("Published systems (reported figures, not re-run)",
                                tables=(tables["published"],)))  # fmt: skip
    sections.append(Section("Most frequent and less frequent senses", tables=(tables["mfs"],)))
    if "seen" in tables:
        sections.append(Section("Seen in training", tables=(tables["seen"],)))
    sections.append(
        Section(
            "Per part of speech",
            tables=tuple(tables[k] for k in ("pos", "dataset_pos") if k in tables),
        )
    )
    sections += [
        Section("Number of candidate senses", tables=(tables["candidates"],)),
        Section(
            "Calibration: accuracy by score margin",
            "How often the answer is right as a function of its lead over the runner-up.",
            tables=(tables["calibration"],),
            figures=(figures["calibration"],),
        ),
        Section("Errors in words", tables=(tables["errors_by_lemma"], tables["errors_sample"])),
        Section("Per prediction type", tables=(tables["sources"],)),
    ]
    if sweep:
        sections.append(
            Section(
                "Per-layer sweep, raw vs standardized",
                tables=(tables["sweep"],),
                figures=(sweep_figure(sweep),),
            )  # fmt: skip
        )

    def split_json(r: SplitScore) -> dict[str, Any]:
        return {"split": r.split, "group": r.group, "n": r.n, "F1": r.f1, "F1_low": r.lo,
                "F1_high": r.hi, "baselines": r.baselines}  # fmt: skip

    def datasets_entry() -> dict[str, Any]:
        out: dict[str, Any] = {}
        for d in result.datasets:
            r = next((x for x in datasets if x.group == d.name), None)
            entry: dict[str, Any] = {"n": d.n_instances, "system": prf(d.system)}
            if r is not None:
                entry["system"].update({"F1_low": r.lo, "F1_high": r.hi})
            entry.update({b: prf(s) for b, s in d.baselines.items()})
            out[d.name] = entry
        return out

    data: dict[str, Any] = {
        "system": asdict(facts),
        "method": {
            "interval": INTERVAL_METHOD,
            "paired": PAIRED_METHOD,
            "n_boot": n_boot,
            "seed": seed,
            "level": LEVEL,
        },  # fmt: skip
        "datasets": datasets_entry(),
        "summary": {
            "corpus": whole,
            "n": len(table),
            "F1": top.f1,
            "F1_low": top.lo,
            "F1_high": top.hi,
            "baselines": {
                b: {"F1": r[2], "F1_low": r[3], "F1_high": r[4], **tests[b]}
                for b, r in zip(bases, summary_rows[1:])
            },
        },  # fmt: skip
        "splits": [split_json(r) for r in scored],
        "calibration": [asdict(d) for d in deciles],
        "errors": {
            "by_lemma": [asdict(e) for e in by_lemma],
            "sample": [asdict(e) for e in sample],
        },  # fmt: skip
        "published": [asdict(p) for p in PUBLISHED],
        "seconds": result.seconds,
        "instances": table.to_json(),
    }
    if sweep:
        data["sweep"] = [
            {"layers": p.layers, "correction": p.correction, **prf(p.all),
             "datasets": {k: prf(v) for k, v in p.datasets.items()}}
            for p in sweep
        ]  # fmt: skip
    report = Report(title=title, config=dict(config), sections=tuple(sections), data=data,
                    command=command)  # fmt: skip
    errors = {"by_lemma": tuple(by_lemma), "sample": tuple(sample)}
    return EvalReport(report, tables, _latex_main(datasets, bases, facts), table, figures, errors)
