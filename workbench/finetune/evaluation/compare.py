"""What fine-tuning did to the geometry: the same analyses on the base and the tuned encoder.

For each model: the per-layer geometry (:func:`workbench.geometry.analysis.analyze_layers`: raw
and z-scored anisotropy, self- and intra-sentence similarity) on one seeded sample of a
reference corpus, the WSD layer sweep (:func:`workbench.wsd.evaluate.layer_sweep`: plain 1-NN
per layer spec, raw and z-scored, trained on SemCor, scored on the framework's ``ALL``), and the
pictures of a few ambiguous lemmas (:mod:`workbench.finetune.evaluation.compare_senses`: the UMAP
of the same occurrences side by side, the separation of their gold senses per layer). One report
puts them side by side (tables, figures, JSON with everything).

Example::

    measure = compare_measure(None, "runs/wic", CompareConfig(geometry_sample=500))
    report = compare_report(measure)
    write_report(report, "reports/wic", stem="compare")
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

import plotly.graph_objects as go

from workbench.corpora.reference import load_reference_corpus, sample_corpus
from workbench.encoding.cache import encode_cached
from workbench.encoding.encoder import Encoder
from workbench.encoding.models import resolve_model
from workbench.errors import ModelLoadError
from workbench.finetune.evaluation.compare_senses import (
    LemmaView,
    SenseConfig,
    lemma_views,
    picture_figure,
    separation_figure,
    separation_table,
)
from workbench.finetune.training.store import read_card
from workbench.geometry.analysis import GeometryConfig, GeometryResult, analyze_layers
from workbench.lexicon.wordnet import load_wordnet
from workbench.reports.tables import Table
from workbench.reports.writers import Report, Section, write_report
from workbench.viz.plotting import layer_lines
from workbench.wsd.config import EncoderInfo
from workbench.wsd.evaluate import SweepPoint, default_specs, layer_sweep, load_corpus
from workbench.wsd.predict import encode_instances


@dataclass(frozen=True)
class CompareConfig:
    """Options of a before/after comparison (all change the numbers)."""

    geometry_corpus: str = "semcor"  # reference corpus of the geometry measures
    geometry_sample: int = 1000  # sentences sampled from it (seeded)
    n_pairs: int = 20_000  # random word pairs per layer for anisotropy
    wsd_train: str = "semcor"  # training corpus of the WSD sweep
    wsd_test: str = "ALL"  # evaluation corpus of the WSD sweep
    wsd_train_sentences: int | None = None  # first N training sentences (None: all)
    corrections: tuple[str, ...] = ("none", "zscore")  # WSD vectors raw and z-scored
    seed: int = 0  # sample, split and pairs
    device: str | None = None  # encoder device
    senses: SenseConfig = field(default_factory=SenseConfig)  # the lemmas pictured (none: skip)


@dataclass(frozen=True)
class ModelMeasures:
    """Everything measured on one model."""

    label: str
    describe: dict[str, Any]
    geometry: GeometryResult
    sweep: list[SweepPoint]
    seconds: dict[str, float] = field(default_factory=dict)
    senses: tuple[LemmaView, ...] = ()  # the pictured lemmas (compare_senses)


@dataclass(frozen=True)
class Comparison:
    """The base and tuned measures and the config."""

    base: ModelMeasures
    tuned: ModelMeasures
    config: CompareConfig
    card: dict[str, Any] | None


#: Called with one line of progress (e.g. ``"base: geometry in 12s"``).
Progress = Callable[[str], None]


def measure_model(
    model: str | None, label: str, cfg: CompareConfig, progress: Progress | None = None
) -> ModelMeasures:
    """Geometry + WSD sweep of one model (encodings go through the on-disk cache)."""

    say = progress or (lambda _m: None)
    seconds: dict[str, float] = {}
    t0 = time.perf_counter()
    enc = Encoder(model=model, device=cfg.device)
    sample = sample_corpus(
        load_reference_corpus(cfg.geometry_corpus), cfg.geometry_sample, "sentences", cfg.seed
    )
    emb = encode_cached(enc, sample.words)
    geo = analyze_layers(
        emb.vectors,
        emb.words,
        emb.sentence_index,
        emb.layers,
        GeometryConfig(n_pairs=cfg.n_pairs, corrections=("none", "zscore"), random_state=cfg.seed),
    )
    seconds["geometry"] = time.perf_counter() - t0
    say(f"{label}: geometry in {seconds['geometry']:.0f}s")
    t1 = time.perf_counter()
    train = load_corpus(cfg.wsd_train)
    if cfg.wsd_train_sentences:
        train = train.head(cfg.wsd_train_sentences)
    test = load_corpus(cfg.wsd_test)
    training, testing = encode_instances(enc, train), encode_instances(enc, test)
    specs = [s for s in default_specs(enc.n_hidden) if s != "last4-sum" or enc.n_hidden > 4]
    sweep = layer_sweep(
        training, testing, EncoderInfo.of(enc), specs, cfg.corrections, load_wordnet().first_sense
    )
    seconds["wsd_sweep"] = time.perf_counter() - t1
    say(f"{label}: WSD sweep in {seconds['wsd_sweep']:.0f}s")
    t2 = time.perf_counter()
    views = lemma_views(enc, cfg.senses) if cfg.senses.lemmas else ()
    seconds["senses"] = time.perf_counter() - t2
    if views:
        say(f"{label}: {len(views)} lemma(s) pictured in {seconds['senses']:.0f}s")
    return ModelMeasures(label, enc.describe(), geo, sweep, seconds, views)


def compare_measure(
    base: str | None,
    tuned: str,
    cfg: CompareConfig | None = None,
    progress: Progress | None = None,
) -> Comparison:
    """Measure both models with the same configuration."""

    cfg = cfg or CompareConfig()
    try:
        card: dict[str, Any] | None = read_card(tuned)
    except ModelLoadError:
        card = None  # any two models can be compared; the card is shown when there is one
    return Comparison(
        measure_model(base, "base", cfg, progress),
        measure_model(tuned, "tuned", cfg, progress),
        cfg,
        card,
    )


def _geometry_rows(c: Comparison) -> list[tuple[Any, ...]]:
    rows = []
    for layer in c.base.geometry.layers:
        row: list[Any] = [layer]
        for measure in ("anisotropy", "self_similarity", "intra_similarity"):
            for m in (c.base, c.tuned):
                row.append(getattr(m.geometry.get("none", layer), measure).value)
        for m in (c.base, c.tuned):
            row.append(m.geometry.get("zscore", layer).anisotropy.value)
        rows.append(tuple(row))
    return rows


def geometry_table(c: Comparison) -> Table:
    """Per layer: raw anisotropy, self- and intra-sentence similarity, z-scored anisotropy."""
    cols = ["layer"]
    for name in ("anisotropy", "self-sim", "intra-sim", "anisotropy (z-scored)"):
        cols += [f"{name} base", f"{name} tuned"]
    return Table(
        tuple(cols),
        tuple(_geometry_rows(c)),
        caption="Geometry per hidden state (0 = embeddings), base vs fine-tuned",
    )


def sweep_table(c: Comparison) -> Table:
    """WSD F1 (ALL) per layer spec and correction, base vs tuned, and the difference."""
    tuned = {(p.layers, p.correction): p for p in c.tuned.sweep}
    rows = []
    for p in c.base.sweep:
        q = tuned[(p.layers, p.correction)]
        rows.append(
            (p.label, p.correction, 100 * p.all.f1, 100 * q.all.f1, 100 * (q.all.f1 - p.all.f1))
        )
    return Table(
        ("layers", "vectors", "F1 base", "F1 tuned", "difference"),
        tuple(rows),
        caption=f"WSD F1 on {c.config.wsd_test} (plain 1-NN, trained on "
        f"{c.config.wsd_train}), per layer spec",
        digits=1,
    )


def compare_figures(c: Comparison) -> tuple[go.Figure, go.Figure]:
    """Anisotropy per layer and WSD F1 per layer spec, base vs tuned (two plotly figures)."""

    layers = [str(x) for x in c.base.geometry.layers]
    aniso = {
        f"{m.label} {corr}": [
            m.geometry.get(corr, x).anisotropy.value for x in c.base.geometry.layers
        ]
        for m in (c.base, c.tuned)
        for corr in ("none", "zscore")
    }
    fig1 = layer_lines(
        aniso,
        layers,
        "Anisotropy per layer, base vs fine-tuned",
        "mean cosine of random word pairs",
    )
    specs = [p.label for p in c.base.sweep if p.correction == c.config.corrections[0]]
    f1 = {
        f"{m.label} {post}": [100 * p.all.f1 for p in m.sweep if p.correction == post]
        for m in (c.base, c.tuned)
        for post in c.config.corrections
    }
    fig2 = layer_lines(f1, specs, f"WSD F1 per layer on {c.config.wsd_test}", "F1 (%)")
    return fig1, fig2


def _summary(c: Comparison) -> str:
    best = {m.label: max(m.sweep, key=lambda p: p.all.f1) for m in (c.base, c.tuned)}
    last = c.base.geometry.layers[-1]
    lines = [
        f"Base: {c.base.describe['model']} ({c.base.describe['fingerprint']}); tuned: "
        f"{c.tuned.describe['model']} ({c.tuned.describe['fingerprint']}).",
        f"Last layer anisotropy: base {c.base.geometry.get('none', last).anisotropy.value:.3f},"
        f" tuned {c.tuned.geometry.get('none', last).anisotropy.value:.3f}.",
        "Best WSD layer spec: "
        + "; ".join(
            f"{k} {p.label} ({p.correction}) F1 {100 * p.all.f1:.1f}" for k, p in best.items()
        ),
    ]
    if c.card:
        lines.append(
            f"The tuned model was fine-tuned on task '{c.card.get('task')}' "
            f"(best dev {c.card.get('metric')} {c.card.get('best_metric')})."
        )
    return "\n\n".join(lines)


def compare_report(c: Comparison, command: str = "") -> Report:
    """The comparison as a :class:`workbench.reports.writers.Report`."""
    config = {
        "compare": asdict(c.config),
        "base": c.base.describe,
        "tuned": c.tuned.describe,
        "training_card": c.card,
        "seconds": {"base": c.base.seconds, "tuned": c.tuned.seconds},
    }
    data = {"geometry": geometry_table(c).to_records(), "wsd": sweep_table(c).to_records()}
    sections = [
        Section("Summary", _summary(c)),
        Section("Geometry per layer", tables=(geometry_table(c),)),
        Section("WSD layer sweep", tables=(sweep_table(c),)),
        Section("Figures", figures=compare_figures(c)),
    ]
    if c.base.senses:
        views = {"base": c.base.senses, "tuned": c.tuned.senses}
        table = separation_table(views)
        data["senses"] = table.to_records()
        pictures = tuple(
            picture_figure({"base": b, "tuned": t}, c.config.senses.layer)
            for b, t in zip(c.base.senses, c.tuned.senses, strict=True)
        )
        curves = tuple(separation_figure(views, m) for m in ("silhouette", "nn_accuracy"))
        sections.append(
            Section(
                "Senses of ambiguous words, base vs tuned",
                "The same occurrences of each word (SemCor, the demo texts and WordNet's "
                "usage examples, by gold sense) under both models: UMAP of one layer side by "
                "side, and the separation of the gold senses at every layer.",
                tables=(table,),
                figures=pictures + curves,
            )
        )
    return Report("Before / after fine-tuning", config, tuple(sections), data=data, command=command)


def compare_models(
    base: str | None,
    tuned: str,
    out: str | Path,
    device: str | None = None,
    max_sentences: int | None = None,
    command: str = "",
    progress: Progress | None = None,
    lemmas: tuple[str, ...] | None = None,
    overwrite: bool = False,
) -> Path:
    """Measure, build the report, write ``out/compare.{md,html,json}``; returns the HTML path.
    A file of those names that the workbench did not write is replaced only with
    ``overwrite``.

    ``max_sentences`` caps both the geometry sample and the WSD training sentences (CPU runs);
    ``lemmas`` are the words pictured (default :data:`~.compare_senses.SENSE_LEMMAS`; ``()``:
    none).

    Raises:
        ModelLoadError: ``base`` or ``tuned`` names no model (a file, a missing folder),
            found before any work.
    """
    resolve_model(base)  # both models found before the first one is measured
    resolve_model(tuned)
    cfg = CompareConfig(device=device)
    if max_sentences:
        cfg = CompareConfig(
            device=device,
            geometry_sample=min(max_sentences, 1000),
            wsd_train_sentences=max_sentences,
        )
    if lemmas is not None:
        cfg = replace(cfg, senses=replace(cfg.senses, lemmas=tuple(lemmas)))
    comparison = compare_measure(base, tuned, cfg, progress)
    report = compare_report(comparison, command)
    return write_report(report, out, stem="compare", overwrite=overwrite)["html"]
