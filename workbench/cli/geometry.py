"""``workbench geometry``: anisotropy and the effect of standardization, layer by layer.

Example::

    workbench geometry --corpus semcor --sample 2000 --out out/geometry
    workbench geometry --corpus wordnet --sample 20000 --sample-unit words
    workbench geometry --corpus my_sentences.txt --save-standardizer refs/zscore
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from workbench.bounds import COUNT, NON_NEGATIVE_INT, SEED, Bound
from workbench.cli.options import (
    add_model_options,
    add_overwrite,
    command_line,
    home_expanded,
    layer_list,
    name_or_path_arg,
    number,
    path_arg,
)
from workbench.corpora.reference import load_reference_corpus, sample_corpus
from workbench.encoding.cache import encode_cached
from workbench.encoding.encoder import Encoder
from workbench.errors import InputError, OutputError
from workbench.fileio import named_path
from workbench.geometry.analysis import GeometryConfig, analyze_layers, check_config
from workbench.geometry.correction import saved_paths
from workbench.geometry.corrections import CORRECTION_LABELS
from workbench.geometry.reference import fit_reference
from workbench.geometry.report import geometry_report, geometry_table
from workbench.outputs import claim_files
from workbench.reports.writers import FORMATS, write_report

#: --fit-fraction: a share strictly between 0 and 1.
FRACTION_OPEN = Bound(low=0, high=1, low_open=True, high_open=True)


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = subparsers.add_parser(
        "geometry",
        help="anisotropy, self-similarity and rogue dimensions per layer, raw and corrected",
        description="Measure per-layer anisotropy (Ethayarajh 2019), self- and intra-sentence "
        "similarity, MEV and rogue dimensions (Timkey & van Schijndel 2021) on a seeded sample "
        "of a reference corpus, raw and after centering, z-score standardization, "
        "all-but-the-top and whitening. Writes Markdown, HTML (plotly) and JSON.",
    )
    add_model_options(p, device_help="cpu, cuda, mps (default: best available)")
    p.add_argument(
        "--corpus", type=name_or_path_arg, default="auto",
        help="auto (SemCor if the WSD data is present, else WordNet), semcor, wordnet, a "
        "framework dataset name, or a text file with one sentence per line",
    )  # fmt: skip
    p.add_argument(
        "--data-dir",
        type=path_arg,
        default=None,
        help="WSD data dir (default: WORKBENCH_DATA, ...)",
    )
    p.add_argument(
        "--sample",
        type=number(NON_NEGATIVE_INT),
        default=2000,
        help="sample size, 0 = whole corpus",
    )
    p.add_argument(
        "--sample-unit", choices=("sentences", "words"), default="sentences",
        help="--sample counts sentences, or words (whole sentences until that many words)",
    )  # fmt: skip
    p.add_argument("--layers", default=None, help="hidden-state indices, e.g. 0,3,6 (default all)")
    p.add_argument(
        "--n-pairs", type=number(COUNT), default=20_000, help="random word pairs per layer"
    )
    p.add_argument(
        "--min-count", type=number(COUNT), default=5, help="occurrences for self-sim and MEV"
    )
    p.add_argument("--top-k", type=number(COUNT), default=3, help="rogue dimensions to report")
    p.add_argument(
        "--corrections", default=",".join(GeometryConfig.corrections),
        help=f"comma list of {', '.join(CORRECTION_LABELS)}",
    )  # fmt: skip
    p.add_argument(
        "--abtt-components", type=number(NON_NEGATIVE_INT), default=None, help="D (default dim/100)"
    )
    p.add_argument("--whiten-components", type=number(COUNT), default=None, help="k (default all)")
    p.add_argument(
        "--fit-on", choices=("heldout", "same"), default="heldout",
        help="fit corrections on a held-out half of the sentences (default) or the same ones",
    )  # fmt: skip
    p.add_argument(
        "--fit-fraction", type=number(FRACTION_OPEN), default=0.5, help="held-out share for fitting"
    )
    p.add_argument("--case-sensitive", action="store_true", help="word types keep their case")
    p.add_argument(
        "--rogue-layer",
        type=number(Bound(integer=True)),  # negative: counted from the last layer
        default=None,
        help="rogue figure layer (default: most anisotropic)",
    )
    p.add_argument(
        "--seed", type=number(SEED), default=0, help="random_state of sample, split, pairs"
    )
    p.add_argument("--out", type=path_arg, default=Path("out/geometry"), help="output dir")
    p.add_argument("--stem", default="geometry", help="file name stem of the reports")
    add_overwrite(p)
    p.add_argument(
        "--save-standardizer", type=home_expanded, default=None, metavar="PATH",
        help="also fit a per-layer z-score Standardizer on the whole sample, save PATH.npz/.json",
    )  # fmt: skip
    p.set_defaults(func=run)


def _config(args: argparse.Namespace):
    return GeometryConfig(
        n_pairs=args.n_pairs,
        min_count=args.min_count,
        top_k=args.top_k,
        corrections=tuple(c.strip() for c in args.corrections.split(",") if c.strip()),
        abtt_components=args.abtt_components,
        whiten_components=args.whiten_components,
        fit_on=args.fit_on,
        fit_fraction=args.fit_fraction,
        lowercase=not args.case_sensitive,
        random_state=args.seed,
    )


def _log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def check_outputs(args: argparse.Namespace) -> None:
    """Claim every file the command writes before any work (:mod:`workbench.outputs`): the
    reports ``<out>/<stem>.{md,html,json}`` and the standardizer's ``.npz`` and ``.json``;
    the corpus file is never one of them."""
    out = Path(args.out)
    named_path(out, args.stem, "--stem (a file name stem, such as geometry)")
    if out.exists() and not out.is_dir():
        raise OutputError(f"--out {out} is a file: give a directory for the reports")
    corpus = Path(args.corpus)
    inputs = [corpus] if corpus.is_file() else []
    paths = [out / f"{args.stem}.{fmt}" for fmt in FORMATS]
    if args.save_standardizer:
        paths += saved_paths(args.save_standardizer)
    claim_files(paths, overwrite=args.overwrite, inputs=inputs)


def run(args: argparse.Namespace) -> int:
    config = _config(args)
    check_config(config)  # every option and output checked before any work
    layers = layer_list(args.layers)
    check_outputs(args)
    start = time.perf_counter()
    enc = Encoder(model=args.model, device=args.device, dtype=args.dtype, pooling=args.pooling)
    kept = enc.check_layers(layers)  # --layers 99 met the model after the corpus was sampled
    if args.rogue_layer is not None and args.rogue_layer not in kept:  # and --rogue-layer 99
        raise InputError(  # after the whole analysis
            f"--rogue-layer {args.rogue_layer} is not analysed; choose from {list(kept)}"
        )
    corpus = load_reference_corpus(args.corpus, args.data_dir)
    sample = sample_corpus(corpus, args.sample or None, args.sample_unit, args.seed)
    _log(f"corpus {corpus.name}: {sample.n_sentences} sentences, {sample.n_words} words sampled")
    emb = encode_cached(enc, sample.words, layers=layers)
    _log(f"encoded with {enc.name} in {time.perf_counter() - start:.1f}s; measuring ...")

    def progress(done: int, total: int) -> None:
        if done % len(config.corrections) == 0:
            _log(f"  layer {done // len(config.corrections)}/{total // len(config.corrections)}")

    result = analyze_layers(
        emb.vectors, emb.words, emb.sentence_index, emb.layers, config, progress=progress
    )
    run_config = {
        "model": enc.name, "fingerprint": enc.fingerprint, "device": enc.device,
        "dtype": enc.dtype_name, "pooling": emb.pooling,
        "layers": list(emb.layers), "dim": int(emb.vectors.shape[-1]),
        "max_length": enc.max_length, "sample": sample.describe(),
    }  # fmt: skip
    command = command_line(args, ["geometry"])
    report = geometry_report(result, run_config, args.rogue_layer, command=command)
    paths = write_report(report, args.out, stem=args.stem, overwrite=args.overwrite)
    print(geometry_table(result).to_markdown())
    if args.save_standardizer:
        # the same encoding as above (a cache hit), fitted per layer with the sample's provenance
        z = fit_reference(enc, "zscore", sample, layers=layers)
        saved = z.save(args.save_standardizer, overwrite=args.overwrite)
        _log(f"standardizer: {saved[0]} + {saved[1].name}")
    for fmt, path in paths.items():
        _log(f"{fmt}: {path}")
    _log(f"done in {time.perf_counter() - start:.1f}s")
    return 0
