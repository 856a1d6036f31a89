"""``workbench embed``: layerwise word vectors of a text file or a WSD-framework corpus."""

from __future__ import annotations

import argparse
from pathlib import Path

from workbench.corpora.readers import read_text, read_xml
from workbench.encoding.cache import encode_cached
from workbench.encoding.encoder import Encoder
from workbench.encoding.pooling import POOLINGS
from workbench.errors import DataError


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser(
        "embed",
        help="layerwise word vectors of a text file or a WSD-framework XML corpus",
        description=(
            "Encode INPUT (a text file, one sentence per line, or a *.data.xml[.xz] corpus of the "
            "WSD evaluation framework) and write an .npz holding 'vectors' "
            "(n_words, n_layers + 1, dim) with the alignment, plus a .tsv table beside it."
        ),
    )
    p.add_argument("input", type=Path)
    p.add_argument("--out", type=Path, required=True, help="output .npz path")
    p.add_argument("--model", default=None)
    p.add_argument("--device", default=None)
    p.add_argument("--pooling", choices=POOLINGS, default="mean")
    p.add_argument("--layers", default=None, help="hidden states to keep, e.g. '0,6' (default all)")
    p.add_argument("--float16", action="store_true", help="store float16 vectors")
    p.add_argument("--batch-tokens", type=int, default=8192, help="padded tokens per batch")
    p.add_argument("--no-cache", action="store_true", help="do not read or write the cache")
    p.add_argument(
        "--compile",
        action="store_true",
        help="torch.compile the model: 5-10%% faster on CPU after a one-off 10-25 s "
        "compilation (worth it for long corpora; see docs/benchmarks.md)",
    )
    p.set_defaults(func=cmd_embed)


def _read_input(path: Path) -> tuple[list[list[str]], list[str]]:
    """Sentences (as words) and their ids from a text file or a framework XML corpus."""
    if not path.is_file():
        raise DataError(f"Input file {path} does not exist.")
    name = path.name.lower()
    if name.endswith((".xml", ".xml.xz")):
        corpus = read_xml(path)
        return [list(s.words) for s in corpus.sentences], [s.id for s in corpus.sentences]

    corpus = read_text(path)  # blank lines skipped; ids keep the line numbers; UTF-8 checked
    if not corpus.sentences:
        raise DataError(f"{path} holds no words.")
    return [list(s.words) for s in corpus.sentences], [s.id for s in corpus.sentences]


def cmd_embed(args: argparse.Namespace) -> int:
    words, ids = _read_input(args.input)
    enc = Encoder(
        model=args.model,
        device=args.device,
        pooling=args.pooling,
        max_batch_tokens=args.batch_tokens,
        compile=args.compile,
    )
    layers = [int(x) for x in args.layers.split(",")] if args.layers else None
    dtype = "float16" if args.float16 else "float32"
    if args.no_cache:
        emb = enc.encode(words, layers=layers, store_dtype=dtype, progress=True)
    else:
        emb = encode_cached(enc, words, layers=layers, store_dtype=dtype, progress=True)
    emb.notes.append(
        f"sentence ids: {args.input.name} " + ",".join(ids[:3]) + ("..." if len(ids) > 3 else "")
    )
    out = emb.save(args.out)
    with out.with_suffix(".sentences.tsv").open("w", encoding="utf-8") as fh:
        fh.write("sentence\tid\n")
        fh.writelines(f"{i}\t{sid}\n" for i, sid in enumerate(ids))
    print(
        f"wrote {out} vectors {tuple(emb.vectors.shape)} ({emb.vectors.dtype}), "
        f"tables {out.with_suffix('.tsv').name}, {out.with_suffix('.sentences.tsv').name}"
    )
    return 0
