"""``workbench embed``: layerwise word vectors of a text file or a WSD-framework corpus."""

from __future__ import annotations

import argparse
import os
from pathlib import Path

from workbench.bounds import COUNT, NON_NEGATIVE, POSITIVE
from workbench.cli.options import (
    add_model_options,
    add_overwrite,
    home_expanded,
    layer_list,
    number,
    path_arg,
)
from workbench.corpora.readers import read_text, read_xml
from workbench.distributed.config import KEEPS, ClusterConfig, ShardConfig
from workbench.distributed.jobs import embed_shards
from workbench.encoding.cache import encode_cached
from workbench.encoding.embeddings import npz_path, sentences_path, table_path
from workbench.encoding.encoder import Encoder
from workbench.errors import DataError, InputError, OutputError
from workbench.fileio import input_problem, same_file
from workbench.outputs import claim_file

#: The options of ``--engine ray`` by destination, with their defaults: one given to a local
#: run (another value than its default) is refused instead of being ignored.
RAY_ONLY: dict[str, object] = {
    "address": None,
    "connect_timeout": 30.0,
    "workers": None,
    "cpus_per_worker": 1,
    "gpus_per_worker": None,
    "shard_size": 2000,
    "text_column": "text",
    "keep": "all",
    "verify": "sha256",
}


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser(
        "embed",
        help="layerwise word vectors of a text file or a WSD-framework XML corpus",
        description=(
            "Encode INPUT (a text file, one sentence per line, or a *.data.xml[.xz] corpus of the "
            "WSD evaluation framework) and write an .npz holding 'vectors' "
            "(n_words, n_layers + 1, dim) with the alignment, plus two tables beside it: "
            "OUT.tsv (one row per word) and OUT.sentences.tsv (sentence ids). Every file is "
            "written whole or not at all; no input is replaced, nor a file the workbench did "
            "not write (without --overwrite). With --engine ray, INPUT... (text, *.data.xml, "
            "JSONL or Parquet files) "
            "are encoded by a pool of Ray actors into shards in the directory OUT "
            "(.npy vectors + Parquet rows + manifest.json; resumable: rerun the same command; "
            "see docs/scaling.md)."
        ),
    )
    p.add_argument("inputs", nargs="+", type=path_arg, metavar="INPUT", help="input file(s)")
    p.add_argument(  # a str: Path() would drop a trailing separator and turn "" into "."
        "--out",
        required=True,
        type=home_expanded,
        help="output .npz path (--engine ray: a directory)",
    )
    add_overwrite(p)
    add_model_options(p, model_help=None, device_help=None)
    p.add_argument("--layers", default=None, help="hidden states to keep, e.g. '0,6' (default all)")
    p.add_argument("--float16", action="store_true", help="store float16 vectors")
    p.add_argument(
        "--batch-tokens",
        type=number(COUNT),
        default=None,
        help="padded tokens per batch (default: 8192 on a CPU, measured on a GPU)",
    )
    p.add_argument("--no-cache", action="store_true", help="do not read or write the cache")
    p.add_argument(
        "--compile",
        action="store_true",
        help="torch.compile the model: faster after a one-off compilation (worth it for long "
        "corpora; see docs/benchmarks.md)",
    )
    ray = p.add_argument_group("past one machine (--engine ray, docs/scaling.md)")
    ray.add_argument(
        "--engine",
        choices=("local", "ray"),
        default="local",
        help="local: this process (default); ray: shards on a Ray cluster",
    )
    ray.add_argument(
        "--address",
        default=RAY_ONLY["address"],
        help="Ray cluster: host:port of `ray start --head`, or 'auto' for the one started on "
        "this machine (default: a local Ray for this job)",
    )
    ray.add_argument(
        "--connect-timeout",
        type=number(POSITIVE),
        default=RAY_ONLY["connect_timeout"],
        metavar="SECONDS",
        help="how long to wait for a cluster at --address host:port before giving up (default 30)",
    )
    ray.add_argument(
        "--workers",
        type=number(COUNT),
        default=RAY_ONLY["workers"],
        help="actors, one encoder each (default: fill)",
    )
    ray.add_argument(
        "--cpus-per-worker",
        type=number(COUNT),
        default=RAY_ONLY["cpus_per_worker"],
        help="CPUs per actor",
    )
    ray.add_argument(
        "--gpus-per-worker",
        type=number(NON_NEGATIVE),
        default=RAY_ONLY["gpus_per_worker"],
        help="GPUs per actor (default: 1 if any)",
    )
    ray.add_argument(
        "--shard-size",
        type=number(COUNT),
        default=RAY_ONLY["shard_size"],
        help="input lines / rows / sentences per shard",
    )
    ray.add_argument(
        "--text-column",
        default=RAY_ONLY["text_column"],
        help="the Parquet column or JSON field of a sentence",
    )
    ray.add_argument(
        "--keep",
        choices=KEEPS,
        default=RAY_ONLY["keep"],
        help="rows: every word, or XML instances only",
    )
    ray.add_argument(
        "--verify",
        choices=("sha256", "size"),
        default=RAY_ONLY["verify"],
        help="how a rerun checks the shards already on disk before keeping them",
    )
    p.set_defaults(func=cmd_embed)


def _read_input(path: Path) -> tuple[list[list[str]], list[str]]:
    """Sentences (as words) and their ids from a text file or a framework XML corpus."""
    if path.is_dir():
        raise DataError(f"Input {path} is a directory: give a text or *.data.xml file.")
    if path.is_symlink() and not path.exists():
        raise DataError(f"Input {path} {input_problem(path)}.")
    if not path.exists():
        raise DataError(f"Input file {path} does not exist.")
    if not path.is_file():
        raise DataError(f"Input {path} is not a regular file: give a text or *.data.xml file.")
    if path.stat().st_size == 0:
        raise DataError(f"Input file {path} is empty.")
    name = path.name.lower()
    if name.endswith((".xml", ".xml.xz")):
        corpus = read_xml(path)
        return [list(s.words) for s in corpus.sentences], [s.id for s in corpus.sentences]

    corpus = read_text(path)  # blank lines skipped; ids keep the line numbers; UTF-8 checked
    if not corpus.sentences:
        raise DataError(f"{path} holds no words.")
    return [list(s.words) for s in corpus.sentences], [s.id for s in corpus.sentences]


def output_paths(out: str | os.PathLike[str]) -> list[Path]:
    """Every file ``embed --out OUT`` writes: the ``.npz`` and its two tables.

    Raises:
        OutputError: OUT is empty, ends with a path separator, is a directory or not a regular
            file, or ends in ``.sentences`` (see :func:`~workbench.encoding.embeddings.npz_path`).
    """
    if not os.fspath(out).strip():
        raise OutputError("--out is empty: give an output file name such as vectors.npz")
    npz = npz_path(out)
    return [npz, table_path(npz), sentences_path(npz)]


def check_outputs(inputs: list[Path], out: str | os.PathLike[str], overwrite: bool = False) -> Path:
    """The ``.npz`` path, once no output would replace an input or (without ``overwrite``) a
    file the workbench did not write, and every one is writable (:mod:`workbench.outputs`).

    Raises:
        OutputError: an output that is an input, a name that holds a file of the user's, or a
            place that cannot be written.
    """
    paths = output_paths(out)
    for path in paths:
        for source in inputs:
            if same_file(path, source):
                raise OutputError(
                    f"--out {out} would write {path}, which is the input {source}: "
                    "choose another --out"
                )
        claim_file(path, overwrite=overwrite)
    return paths[0]


def embed_on_ray(args: argparse.Namespace) -> int:
    """``--engine ray``: map the options onto :func:`workbench.distributed.jobs.embed_shards`."""
    if args.compile:
        raise InputError("--compile is for --engine local; Ray workers run the model eagerly")
    layers = layer_list(args.layers)
    config = ShardConfig(
        model=args.model,
        pooling=args.pooling,
        layers=tuple(layers) if layers is not None else None,
        dtype="float16" if args.float16 else "float32",
        compute_dtype=args.dtype,
        keep=args.keep,
        shard_size=args.shard_size,
        text_column=args.text_column,
        **({} if args.batch_tokens is None else {"max_batch_tokens": args.batch_tokens}),
    )
    cluster = ClusterConfig(
        address=args.address,
        workers=args.workers,
        cpus_per_worker=args.cpus_per_worker,
        gpus_per_worker=args.gpus_per_worker,
        device=args.device,
        connect_timeout=args.connect_timeout,
    )
    result = embed_shards(args.inputs, Path(args.out), config, cluster, verify=args.verify)
    m = result.manifest
    print(
        f"wrote {len(m.shards)} shards to {result.directory} ({m.rows:,} rows, layers "
        f"{m.settings['layers']}, {m.settings['dtype']}): {result.computed} computed, "
        f"{result.skipped} complete already; manifest.json lists them"
    )
    return 0


def cmd_embed(args: argparse.Namespace) -> int:
    if args.engine == "ray":
        return embed_on_ray(args)
    if len(args.inputs) > 1:
        raise InputError("several inputs need --engine ray (or one workbench embed per file)")
    given = [f"--{k.replace('_', '-')}" for k, v in RAY_ONLY.items() if getattr(args, k) != v]
    if given:  # silently ignored before: `--workers 8` ran in this one process
        raise InputError(
            f"{' '.join(given)}: option(s) of --engine ray, which this run (--engine local) "
            "does not use; add --engine ray or leave them out"
        )
    args.input = args.inputs[0]
    out = check_outputs([args.input], args.out, args.overwrite)  # before any work
    layers = layer_list(args.layers)
    words, ids = _read_input(args.input)
    enc = Encoder(
        model=args.model,
        device=args.device,
        dtype=args.dtype,
        pooling=args.pooling,
        max_batch_tokens=args.batch_tokens,
        compile=args.compile,
    )
    dtype = "float16" if args.float16 else "float32"
    if args.no_cache:
        emb = enc.encode(words, layers=layers, store_dtype=dtype, progress=True)
    else:
        emb = encode_cached(enc, words, layers=layers, store_dtype=dtype, progress=True)
    emb.notes.append(
        f"sentence ids: {args.input.name} " + ",".join(ids[:3]) + ("..." if len(ids) > 3 else "")
    )
    out = emb.save(out, sentence_ids=ids, overwrite=args.overwrite)
    print(
        f"wrote {out} vectors {tuple(emb.vectors.shape)} ({emb.vectors.dtype}), "
        f"tables {table_path(out).name}, {sentences_path(out).name}"
    )
    return 0
