"""``workbench senses separation | plot``: how well a word's senses separate, layer by layer,
and its sense map as a file, so that a table or figure in a paper is one command.

Example::

    workbench senses separation bank bass plant --correction zscore --csv out/sep.csv
    workbench senses plot bank --layers 3 6 --out out/bank.html      # one panel per layer
    workbench senses plot bank bass --layers 6 --out out/bank-bass.png   # several words, one map

Thin over :mod:`workbench.viz.sense_views` (occurrences, corrections, projection, separation),
:mod:`workbench.viz.sense_figures` and :mod:`workbench.viz.export` (files with their settings).
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

from workbench.bounds import COUNT, PROBABILITY, SEED, Bound
from workbench.cli.options import (
    add_model_options,
    add_overwrite,
    command_line,
    name_or_path_arg,
    number,
    path_arg,
)
from workbench.corpora.occurrences import (
    OccurrenceVectors,
    encode_occurrences,
    lemma_occurrences,
    occurrence_table,
    sense_glosses,
    sense_names,
)
from workbench.encoding.encoder import Encoder
from workbench.encoding.pooling import LayerSpec
from workbench.errors import InputError
from workbench.geometry.correction import Correction
from workbench.geometry.corrections import CORRECTION_LABELS, CORRECTIONS
from workbench.geometry.reference import fit_correction
from workbench.geometry.separation import (
    LEAST_MIN_COUNT,
    LayerSeparation,
    separation_by_layer,
)
from workbench.lexicon.wordnet import POS_TAGS, load_wordnet
from workbench.outputs import claim_files
from workbench.reports.tables import Table
from workbench.viz.export import (
    ViewSettings,
    export_figure,
    export_table,
    figure_format,
    table_format,
)
from workbench.viz.plotting import small_multiples
from workbench.viz.projection import METHODS, ProjectionConfig
from workbench.viz.sense_figures import (
    sense_view_figure,
    separation_text,
    view_hover,
    words_figure,
)
from workbench.viz.sense_views import (
    SenseView,
    occurrences_sha256,
    sense_view,
    words_view,
)

#: ``--min-count``: an integer from the least a separation takes
#: (:data:`~workbench.geometry.separation.LEAST_MIN_COUNT`), checked before anything is read.
SENSE_COUNT = Bound(low=LEAST_MIN_COUNT, integer=True)


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = subparsers.add_parser(
        "senses",
        help="sense separation per layer and sense maps of a word's occurrences",
        description="A word's gold-labelled occurrences (SemCor by default): how well its senses "
        "separate at every layer (cosine silhouette, leave-one-out 1-NN sense accuracy), raw "
        "and corrected, and its projected sense map as an HTML, JSON, PNG or SVG file.",
    )
    sub = p.add_subparsers(dest="senses_command", metavar="ACTION", required=True)
    sep = sub.add_parser(
        "separation",
        help="silhouette and 1-NN sense accuracy of a word's senses at every layer",
        description="Per layer: the cosine silhouette of the gold senses and the leave-one-out "
        "1-NN sense accuracy among the word's occurrences (with its chance level), raw and "
        "after a correction fitted on a reference corpus. Senses with fewer than --min-count "
        "occurrences are left out of both measures and listed.",
    )
    _common(sep)
    sep.add_argument(
        "--layers", nargs="+", default=["all"], metavar="SPEC",
        help="layer specs to measure: 'all' (every hidden state, the default), 6, last4-sum, "
        "3,4,5 (mean), sum:3,4,5 ...",
    )  # fmt: skip
    sep.add_argument("--correction", choices=CORRECTIONS, default="zscore",
                     help="correction measured beside raw vectors (default zscore)")  # fmt: skip
    sep.add_argument(
        "--min-count", type=number(SENSE_COUNT), default=2, help="least occurrences of a sense"
    )
    sep.add_argument("--json", type=path_arg, default=None, help="write the table as JSON")
    sep.add_argument("--csv", type=path_arg, default=None, help="write the table as CSV")
    add_overwrite(sep)
    sep.set_defaults(func=run_separation)

    plot = sub.add_parser(
        "plot",
        help="a word's occurrences projected at given layers, coloured by sense, as a file",
        description="Project the occurrences at each layer spec (one panel each) or, for "
        "several words, at one layer spec in one map coloured by word, then by sense. The "
        "file (by its suffix: .html self-contained, .json plotly, .png, .svg) carries the "
        "settings; every panel's separation is in its title.",
    )
    _common(plot)
    plot.add_argument("--layers", nargs="+", default=["last4-sum"], metavar="SPEC",
                      help="one or more layer specs (several words: one)")  # fmt: skip
    plot.add_argument("--correction", choices=CORRECTIONS, default="none",
                      help="correction applied before projecting (default none)")  # fmt: skip
    plot.add_argument("--out", type=path_arg, required=True, help="figure: .html .json .png .svg")
    plot.add_argument("--data", type=path_arg, default=None,
                      help="also write the coordinates and labels (.csv or .json)")  # fmt: skip
    add_overwrite(plot)
    plot.add_argument("--method", choices=METHODS, default="umap")
    plot.add_argument("--dims", type=number(Bound(low=2, high=3, integer=True)), default=2)
    plot.add_argument(
        "--n-neighbors",
        type=number(Bound(low=2, integer=True)),
        default=15,
        help="UMAP n_neighbors",
    )
    plot.add_argument("--min-dist", type=number(PROBABILITY), default=0.1, help="UMAP min_dist")
    plot.add_argument(
        "--min-count", type=number(SENSE_COUNT), default=2, help="least occurrences of a sense"
    )
    plot.set_defaults(func=run_plot)


def _common(p: argparse.ArgumentParser) -> None:
    p.add_argument("lemmas", nargs="+", metavar="LEMMA", help="WordNet lemma(s), e.g. bank")
    p.add_argument(
        "--source", type=name_or_path_arg, default="semcor",
        help="semcor (default), a framework dataset name, wordnet (usage examples), demo, or a "
        "text file (one sentence per line, optionally label<TAB>sentence with the [word])",
    )  # fmt: skip
    p.add_argument("--pos", choices=POS_TAGS, default=None, help="one part of speech")
    p.add_argument(
        "--limit",
        type=number(Bound(low=3, integer=True)),
        default=200,
        help="at most this many occurrences a word",
    )
    p.add_argument(
        "--seed", type=number(SEED), default=0, help="random_state of sample and projection"
    )
    add_model_options(p)
    p.add_argument(
        "--reference", type=name_or_path_arg, default="auto",
        help="corpus the correction is fitted on: auto, semcor, wordnet or a file",
    )  # fmt: skip
    p.add_argument("--reference-sample", type=number(COUNT), default=500,
                   help="sentences sampled from it (seeded)")  # fmt: skip
    p.add_argument(
        "--data-dir", type=path_arg, default=None, help="WSD data dir (default: WORKBENCH_DATA ...)"
    )


def _rerun(args: argparse.Namespace) -> str:
    """The command that produced a table or figure (its positionals: the lemmas)."""
    return command_line(args, ["senses", args.senses_command], ["lemmas"])


def _log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def _check_outputs(args: argparse.Namespace, figure: Path | None, *tables: Path | None) -> None:
    """Refuse, before any work, an output of unknown format, one that cannot be written, one
    that is an input text, or (without --overwrite) a file the workbench did not write
    (:func:`workbench.outputs.claim_file`)."""
    inputs = [Path(f).expanduser() for f in (args.source, args.reference)]
    inputs = [f for f in inputs if f.is_file()]
    if figure is not None:
        figure_format(figure)
    for path in tables:
        if path is not None:
            table_format(path)
    wanted = [p for p in (figure, *tables) if p is not None]
    claim_files(wanted, overwrite=args.overwrite, inputs=inputs)


def _prepare(
    args: argparse.Namespace,
) -> tuple[Encoder, list[tuple[str, OccurrenceVectors]], Correction | None]:
    if args.limit is not None and args.limit < 3:
        raise InputError(f"--limit must be at least 3, got {args.limit}")
    enc = Encoder(model=args.model, device=args.device, dtype=args.dtype, pooling=args.pooling)
    for spec in args.layers:  # before any occurrence is found or encoded
        if spec != "all":
            LayerSpec.parse(spec).resolve(enc.n_hidden)
    found = [
        (
            lemma,
            lemma_occurrences(lemma, args.source, args.pos, args.limit, args.seed, args.data_dir),
        )  # fmt: skip
        for lemma in args.lemmas
    ]
    _log(f"{enc.name}: encoding {sum(len(o) for _, o in found)} occurrences of "
         f"{len(found)} word(s) from {args.source}")  # fmt: skip
    parts = [(lemma, encode_occurrences(enc, occs)) for lemma, occs in found]
    post = None
    if args.correction != "none":
        _log(f"fitting {args.correction} on {args.reference_sample} sentences of {args.reference}")
        post = fit_correction(enc, args.correction, args.reference, args.reference_sample,
                              args.seed, args.data_dir)  # fmt: skip
    return enc, parts, post


# --------------------------------------------------------------------------- separation


def _specs(layers: list[str], ov: OccurrenceVectors) -> list[str] | None:
    if layers == ["all"]:
        return None
    return [str(s) for s in layers if s != "all"] + (
        [str(v) for v in ov.emb.layers] if "all" in layers else []
    )


def summary_table(curves: dict[str, LayerSeparation], counts: dict[str, int]) -> Table:
    """One row per word: occurrences, senses, and where each measure peaks, raw and corrected."""
    columns = ["word", "occurrences", "senses"]
    corrections = next(iter(curves.values())).corrections
    for c in corrections:
        label = CORRECTION_LABELS.get(c, c)
        columns += [f"best silhouette {label}", "at layer", f"best 1-NN {label}", "at layer"]
    rows = []
    for lemma, curve in curves.items():
        row: list[Any] = [lemma, counts[lemma], sum(1 for n in curve.counts().values() if n >= 2)]
        for c in corrections:
            for measure in ("silhouette", "nn_accuracy"):
                peak = curve.peak(measure, c)
                row += [curve.get(peak, c).value(measure) if peak else math.nan, peak or None]
        rows.append(tuple(row))
    return Table(tuple(columns), tuple(rows), caption="Where separation peaks")


def run_separation(args: argparse.Namespace) -> int:
    start = time.perf_counter()
    _check_outputs(args, None, args.json, args.csv)
    enc, parts, post = _prepare(args)
    curves: dict[str, LayerSeparation] = {}
    records: list[dict[str, Any]] = []
    senses: dict[str, dict[str, int]] = {}
    for lemma, ov in parts:
        curve = separation_by_layer(ov.vectors, ov.labels, ov.emb.layers, post,
                                    _specs(args.layers, ov), ov.emb.n_hidden,
                                    args.min_count)  # fmt: skip
        curves[lemma] = curve
        senses[lemma] = curve.counts()
        records += [{"word": lemma, **r} for r in curve.records()]
        counts = ", ".join(f"{k} {n}" for k, n in curve.counts().items())
        print(curve.table(f"{lemma}: {len(ov.occurrences)} occurrences ({counts})").to_markdown())
    counts_of = {lemma: len(ov.occurrences) for lemma, ov in parts}
    print(summary_table(curves, counts_of).to_markdown())
    first = parts[0][1]
    settings = ViewSettings.of(
        first.emb, "separation", "all" if args.layers == ["all"] else " ".join(args.layers),
        args.correction, args.reference if post is not None else "", None,
        {"lemmas": list(args.lemmas), "source": args.source, "pos": args.pos,
         "limit": args.limit, "sample_seed": args.seed, "min_count": args.min_count,
         "reference_sample": args.reference_sample if post is not None else None,
         "senses": senses,
         "occurrences_sha256": {lemma: occurrences_sha256(ov.occurrences) for lemma, ov in parts},
         "command": _rerun(args)},
    )  # fmt: skip
    for path in (args.json, args.csv):
        if path is not None:
            _log(f"wrote {export_table(records, settings, path, args.overwrite)}")
    _log(f"done in {time.perf_counter() - start:.1f}s")
    return 0


# --------------------------------------------------------------------------- plot


def _projection(args: argparse.Namespace) -> ProjectionConfig:
    return ProjectionConfig(method=args.method, n_components=args.dims,
                            n_neighbors=args.n_neighbors, min_dist=args.min_dist,
                            random_state=args.seed)  # fmt: skip


def run_plot(args: argparse.Namespace) -> int:
    start = time.perf_counter()
    _check_outputs(args, args.out, args.data)
    if len(args.lemmas) > 1 and len(args.layers) != 1:
        raise InputError("several words are drawn in one map at one layer: give one --layers")
    if len(args.layers) > 1 and args.dims == 3:
        raise InputError("several layers are drawn as 2-D panels: use --dims 2 or one layer")
    projection = _projection(args)
    enc, parts, post = _prepare(args)
    reference = args.reference if post is not None else ""
    wordnet = load_wordnet()
    common = {"source": args.source, "pos": args.pos, "limit": args.limit,
              "sample_seed": args.seed, "command": _rerun(args)}  # fmt: skip
    labels = [o.label for _, ov in parts for o in ov.occurrences]
    glosses = sense_glosses(wordnet, labels)
    names = sense_names(glosses)
    if len(parts) > 1:
        joint = words_view(parts, args.layers[0], post, projection, reference,
                            common, args.min_count)  # fmt: skip
        title = f"{', '.join(args.lemmas)}: {enc.name}, layer {args.layers[0]}"
        fig = words_figure(joint, view_hover(joint, glosses), names, title=title)
        table = occurrence_table(joint.occurrences, glosses, joint.coords)
        table.insert(0, "word", list(joint.lemmas), allow_duplicates=True)
        settings: ViewSettings | list[ViewSettings] = joint.settings
        for lemma, sep in joint.separation.items():
            _log(f"{lemma}: {separation_text(sep)}")
    else:
        lemma, ov = parts[0]
        data = {"lemma": lemma, **common}
        views = [sense_view(ov, spec, post, projection, reference, data,
                            min_count=args.min_count) for spec in args.layers]  # fmt: skip
        for view in views:
            _log(f"layer {view.layer}: {separation_text(view.separation)}")
        fig = _views_figure(lemma, enc.name, views, glosses, names)
        table = occurrence_table(ov.occurrences, glosses, views[0].coords)
        if len(views) > 1:
            table = occurrence_table(ov.occurrences, glosses)
            for view in views:
                for axis, column in zip("xyz", view.coords.T, strict=False):
                    table[f"{axis}_layer{view.layer}"] = column
        settings = views[0].settings if len(views) == 1 else [v.settings for v in views]
    _log(f"wrote {export_figure(fig, settings, args.out, args.overwrite)}")
    if args.data is not None:
        _log(f"wrote {export_table(table, settings, args.data, args.overwrite)}")
    _log(f"done in {time.perf_counter() - start:.1f}s")
    return 0


def _views_figure(
    lemma: str,
    model: str,
    views: list[SenseView],
    glosses: dict[str, str],
    names: dict[str, str],
) -> Any:
    correction = CORRECTION_LABELS.get(views[0].correction, views[0].correction)
    if len(views) == 1:
        return sense_view_figure(views[0], hover=view_hover(views[0], glosses), names=names,
                                 title=f"“{lemma}”: {model}, layer {views[0].layer}, "
                                 f"{correction}")  # fmt: skip
    labels = [lab or "(no label)" for lab in views[0].labels]
    fig = small_multiples(
        np.stack([v.coords for v in views]), labels, view_hover(views[0], glosses),
        [f"layer {v.layer}: {_short(v)}" for v in views],
        n_cols=min(len(views), 3), names=names,
    )  # fmt: skip
    fig.update_layout(title=f"“{lemma}”: {model}, {correction}")
    return fig


def _short(view: SenseView) -> str:
    s = view.separation
    if math.isnan(s.silhouette):
        return "separation undefined"
    return f"silhouette {s.silhouette:.2f}, 1-NN {100 * s.nn_accuracy:.0f}%"
