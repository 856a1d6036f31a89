"""WSD reports of the layer sweep (``workbench wsd layers``), the tables the evaluation report
reuses, and key files.

``workbench wsd eval`` writes the fuller report of :mod:`workbench.wsd.reporting.document`
(intervals, splits, errors in words, LaTeX); :func:`evaluation_report` is the simpler one, which
the layer sweep uses. Built on :mod:`workbench.reports.writers`. A report holds F1 per dataset
and ALL with the baselines on the same run, per POS, per prediction type, the per-layer curve raw
vs standardized (when a sweep is given), the lemmas with most errors and their confusions, and the
full configuration with the data checksums. Its JSON has, besides the generic report content, a
top-level ``datasets`` entry: ``{name: {"n": ..., "system": {"P", "R", "F1"}, "<baseline>":
{...}}}`` (percentages).

Example::

    report = evaluation_report(result, config={...}, sweep=points)
    write_wsd_report(report, "out/", stem="wsd-ALL")
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import plotly.graph_objects as go

from workbench.corpora.occurrences import sense_glosses
from workbench.corpora.readers import Corpus
from workbench.escaping import plotly_text
from workbench.lexicon.wordnet import WordNet
from workbench.reports.tables import Table
from workbench.reports.writers import Report, Section, to_dict, write_report, write_text_atomic
from workbench.wsd.evaluate import BASELINES, Evaluation, SweepPoint
from workbench.wsd.scoring import Score, write_keys

BASELINE_TITLES = {"wordnet_first_sense": "WordNet 1st sense", "semcor_mfs": "SemCor MFS"}


def prf(s: Score) -> dict[str, float]:
    """P, R, F1 in percent (unrounded), as the official scorer prints them (one decimal)."""
    return {"P": 100 * s.precision, "R": 100 * s.recall, "F1": 100 * s.f1}


def datasets_json(result: Evaluation) -> dict[str, Any]:
    """``{dataset: {"n", "system": {P, R, F1}, <baseline>: {P, R, F1}}}`` in percent."""
    out: dict[str, Any] = {}
    for d in result.datasets:
        entry: dict[str, Any] = {"n": d.n_instances, "system": prf(d.system)}
        entry.update({b: prf(s) for b, s in d.baselines.items()})
        out[d.name] = entry
    return out


def _baselines(result: Evaluation) -> list[str]:
    present = {b for d in result.datasets for b in d.baselines}
    return [b for b in BASELINES if b in present] + sorted(present - set(BASELINES))


def dataset_table(result: Evaluation) -> Table:
    bases = _baselines(result)
    rows = []
    for d in result.datasets:
        s = prf(d.system)
        rows.append(
            (d.name, d.n_instances, s["P"], s["R"], s["F1"])
            + tuple(100 * d.baselines[b].f1 if b in d.baselines else None for b in bases)
        )
    return Table(
        (
            "dataset",
            "instances",
            "P",
            "R",
            "F1",
            *(f"{BASELINE_TITLES.get(b, b)} F1" for b in bases),
        ),
        tuple(rows),
        caption="Scores in percent (official scorer rules); baselines on the same instances.",
        digits=1,
    )


def pos_table(result: Evaluation) -> Table:
    whole = result.datasets[-1]
    bases = _baselines(result)
    rows = []
    for pos, s in whole.by_pos.items():
        rows.append(
            (pos, s.total, 100 * s.f1)
            + tuple(100 * whole.baselines_by_pos[b][pos].f1 for b in bases if b in whole.baselines)
        )
    cols = ("POS", "instances", "F1", *(f"{BASELINE_TITLES.get(b, b)} F1" for b in bases))
    return Table(cols, tuple(rows), caption=f"Per POS on {whole.name}.", digits=1)


def source_table(result: Evaluation) -> Table:
    whole = result.datasets[-1]
    n = max(whole.n_instances, 1)
    rows = [
        (src, whole.source_counts.get(src, 0), 100 * whole.source_counts.get(src, 0) / n,
         100 * s.precision)
        for src, s in whole.by_source.items()
    ]  # fmt: skip
    return Table(
        ("prediction type", "instances", "share %", "accuracy %"),
        tuple(rows),
        caption=f"How each answer on {whole.name} was made (accuracy = P on those instances).",
        digits=1,
        notes=(
            "centroid: nearest corpus centroid; propagated: a vector given by LMMS propagation "
            "(synset, hypernym or lexname); gloss: a gloss vector only; backoff: no candidate "
            "had a vector, WordNet's first sense; none: no WordNet sense for the lemma.",
        ),
    )


def error_table(result: Evaluation, top: int = 20) -> Table:
    rows = []
    for e in result.errors[:top]:
        conf = "; ".join(f"{g} -> {p} ({c})" for g, p, c in e.confusions)
        rows.append((e.lemma, e.n_instances, e.n_wrong, conf))
    return Table(
        ("lemma", "instances", "wrong", "commonest confusions (gold -> predicted)"),
        tuple(rows),
        caption=f"Lemmas with most errors on {result.datasets[-1].name}.",
    )


def lemma_error_table(
    corpus: Corpus, result: Evaluation, lemma: str, wordnet: WordNet | None = None
) -> Table:
    """Every instance of ``lemma`` (``"lemma.POS"``, as in :attr:`Evaluation.errors`) in
    ``corpus`` that ``result`` got wrong: the sentence with the word in [brackets], the first
    gold key and the predicted key (``-``: none), each with its WordNet gloss (``""`` without
    ``wordnet`` or for a key it lacks). Instances without a prediction in ``result`` are
    skipped.

    Example::

        lemma_error_table(corpus, result, result.errors[0].lemma, load_wordnet())
    """
    rows = []
    for sentence, inst in corpus.instances():
        if f"{inst.lemma}.{inst.pos}" != lemma or inst.id not in result.predictions:
            continue
        predicted = result.predictions[inst.id].key
        if predicted in inst.keys:
            continue
        words = [f"[{w}]" if i == inst.index else w for i, w in enumerate(sentence.words)]
        gold = inst.keys[0] if inst.keys else ""
        gloss = sense_glosses(wordnet, [k for k in (gold, predicted) if k]) if wordnet else {}
        rows.append((" ".join(words), gold, gloss.get(gold, ""), predicted or "-",
                     gloss.get(predicted, "") if predicted else ""))  # fmt: skip
    return Table(
        ("sentence", "gold", "gold gloss", "predicted", "predicted gloss"),
        tuple(rows),
        caption=f"Instances of {lemma} answered wrong on {result.datasets[-1].name}.",
    )


def sweep_table(points: Sequence[SweepPoint]) -> Table:
    posts = list(dict.fromkeys(p.correction for p in points))
    by = {(p.layers, p.correction): p for p in points}
    specs = list(dict.fromkeys(p.layers for p in points))
    rows = []
    for spec in specs:
        f1 = [100 * by[(spec, q)].all.f1 if (spec, q) in by else None for q in posts]
        first, second = f1[0], f1[1] if len(f1) > 1 else None
        delta = second - first if first is not None and second is not None else None
        label = next(p.label for p in points if p.layers == spec)
        rows.append((spec, label, *f1, delta))
    cols = ("layers", "label", *(f"F1 {q}" for q in posts), f"{posts[-1]} - {posts[0]}")
    return Table(
        cols[: len(cols) - (len(posts) < 2)],
        tuple(r[: len(cols) - (len(posts) < 2)] for r in rows),
        caption="Plain 1-NN (no propagation, no glosses): F1 in percent on the test corpus.",
        digits=1,
    )


def sweep_figure(points: Sequence[SweepPoint]) -> go.Figure:
    """Plotly line chart: F1 per layer spec, one line per correction."""
    fig = go.Figure()
    for post in dict.fromkeys(p.correction for p in points):
        sel = [p for p in points if p.correction == post]
        fig.add_trace(
            go.Scatter(
                x=[p.layers for p in sel],
                y=[100 * p.all.f1 for p in sel],
                mode="lines+markers",
                name="raw" if post == "none" else post,
            )
        )
    fig.update_layout(
        title="WSD F1 per layer, raw vs standardized",
        xaxis_title="hidden state (0 = embeddings) / combination",
        yaxis_title="F1 (%)",
        template="plotly_white",
    )
    return fig


def dataset_figure(result: Evaluation) -> go.Figure:
    """Plotly grouped bars: F1 per dataset for the system and each baseline."""
    names = [plotly_text(d.name) for d in result.datasets]
    fig = go.Figure(go.Bar(name="system", x=names, y=[100 * d.system.f1 for d in result.datasets]))
    for b in _baselines(result):
        fig.add_trace(
            go.Bar(
                name=BASELINE_TITLES.get(b, b),
                x=names,
                y=[100 * d.baselines[b].f1 if b in d.baselines else None for d in result.datasets],
            )
        )
    fig.update_layout(
        title="F1 per dataset, system and baselines",
        barmode="group",
        yaxis_title="F1 (%)",
        template="plotly_white",
    )
    return fig


def evaluation_report(
    result: Evaluation | None,
    config: Mapping[str, Any],
    sweep: Sequence[SweepPoint] = (),
    command: str = "",
    title: str = "Word sense disambiguation",
) -> Report:
    """The full report of an evaluation (and/or a layer sweep)."""
    sections = []
    if result is not None:
        sections += [
            Section(
                "F1 per dataset", tables=(dataset_table(result),), figures=(dataset_figure(result),)
            ),
            Section("Per part of speech", tables=(pos_table(result),)),
            Section("Per prediction type", tables=(source_table(result),)),
        ]
    if sweep:
        sections.append(
            Section(
                "Per-layer sweep, raw vs standardized",
                tables=(sweep_table(sweep),),
                figures=(sweep_figure(sweep),),
            )
        )
    if result is not None and result.errors:
        sections.append(Section("Lemmas with most errors", tables=(error_table(result),)))
    data: dict[str, Any] = {}
    if result is not None:
        data["datasets"] = datasets_json(result)
        data["seconds"] = result.seconds
    if sweep:
        data["sweep"] = [
            {"layers": p.layers, "correction": p.correction, **prf(p.all),
             "datasets": {k: prf(v) for k, v in p.datasets.items()}}
            for p in sweep
        ]  # fmt: skip
    return Report(title=title, config=dict(config), sections=tuple(sections), data=data,
                  command=command)  # fmt: skip


def report_names(stem: str) -> tuple[str, ...]:
    """The files :func:`write_wsd_report` writes for ``stem``."""
    return tuple(f"{stem}.{fmt}" for fmt in ("md", "html", "json"))


def write_wsd_report(
    report: Report, out_dir: str | Path, stem: str = "wsd", overwrite: bool = False
) -> dict[str, Path]:
    """Write ``<stem>.md``, ``.html`` and ``.json`` (JSON with ``datasets`` at the top level);
    a file of those names that the workbench did not write is replaced only with
    ``overwrite``."""
    paths = write_report(report, out_dir, stem=stem, formats=("md", "html"), overwrite=overwrite)
    paths["json"] = write_json(report, Path(out_dir) / f"{stem}.json", overwrite)
    return paths


def write_json(report: Report, path: str | Path, overwrite: bool = False) -> Path:
    """The report's JSON, with ``datasets`` (and ``sweep``) also at the top level."""
    content = to_dict(report)
    for key in ("datasets", "sweep"):
        if key in content["data"]:
            content[key] = content["data"][key]
    text = json.dumps(content, indent=2, allow_nan=False) + "\n"
    return write_text_atomic(path, text, overwrite)


def answers_name(name: str) -> str:
    """The key file :func:`write_answers` writes for the corpus ``name``."""
    return f"{name}.key.txt"


def write_answers(
    result: Evaluation, out_dir: str | Path, name: str, overwrite: bool = False
) -> Path:
    """System answers in the official key format (``id key``), for the official scorer."""
    answers = {i: p.key for i, p in result.predictions.items() if p.key is not None}
    return write_keys(Path(out_dir) / answers_name(name), answers, overwrite)
