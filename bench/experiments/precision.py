"""What a lower compute precision changes: bfloat16 against float32 on the results that matter.

Run:  python -m bench run precision [--dtype bfloat16] [--device cpu] [--sample 2000]
                                [--wsd plain,best] [--json docs/bench_runs/precision_cpu.json]

For float32 and ``--dtype`` (same model, same device), in one process:
- the word vectors of a seeded sample of SemCor sentences (``workbench geometry``'s default
  sample): encoding time, and per layer the mean cosine of each word's two vectors;
- the geometry table of that sample (``workbench geometry``'s analysis, default settings):
  anisotropy per layer under each correction, similarities, MEV; the largest differences;
- with ``--wsd``: F1 on ALL of each named system (``plain``: SemCor centroids at the last
  layer, 1-NN, ``workbench wsd eval ALL --layers 6 --system plain``; ``best``: the default
  system), trained and tested on encodings of that dtype. float32 uses the cache dir as it is
  (what ``workbench wsd eval`` wrote); another dtype its own (``<cache>/precision-<dtype>``),
  so that no encoding or index of the other dtype is reused.

Decision rule (docs/benchmarks.md, "bfloat16 on the CPU"): bfloat16 is within noise when every
F1 moves by 0.1 point or less and every anisotropy by 0.005 or less.
"""

from __future__ import annotations

import argparse
import os
import time

import numpy as np

from bench.lib.record import write_json
from workbench import Encoder
from workbench.corpora.reference import load_reference_corpus, sample_corpus
from workbench.encoding.models import default_cache_dir
from workbench.geometry.analysis import GeometryConfig, analyze_layers
from workbench.geometry.report import geometry_table
from workbench.lexicon.wordnet import load_wordnet
from workbench.wsd.builds import semcor_index
from workbench.wsd.evaluate import evaluate, load_corpus
from workbench.wsd.predict import encode_instances


def geometry(enc: Encoder, sample_size: int) -> dict:
    sample = sample_corpus(load_reference_corpus("semcor"), sample_size, "sentences", 0)
    t = time.perf_counter()
    emb = enc.encode(sample.words, progress=False)
    seconds = time.perf_counter() - t
    config = GeometryConfig()
    result = analyze_layers(emb.vectors, emb.words, emb.sentence_index, emb.layers, config)
    table = geometry_table(result)
    return {"seconds": seconds, "vectors": np.asarray(emb.vectors), "table": table}


def wsd_f1(enc: Encoder, system: str) -> float:
    index = semcor_index(enc, system)
    test = encode_instances(enc, load_corpus("ALL"))
    result = evaluate(index, test, backoff=load_wordnet().first_sense)
    return 100 * result.datasets[-1].system.f1


def compare_geometry(out: dict, geo: dict, dtypes: tuple[str, str]) -> None:
    """Vector cosines per layer and the largest difference in each geometry-table column."""
    a, b = (geo[d]["vectors"].astype(np.float32) for d in dtypes)
    cos = (a * b).sum(-1) / (np.linalg.norm(a, axis=-1) * np.linalg.norm(b, axis=-1) + 1e-12)
    out["mean_cosine_per_layer"] = cos.mean(0).tolist()
    out["min_cosine_per_layer"] = cos.min(0).tolist()
    ta, tb = (geo[d]["table"] for d in dtypes)
    diffs = {}
    for j, col in enumerate(ta.columns):
        if col == "layer":
            continue
        vals = [
            abs(float(ra[j]) - float(rb[j]))
            for ra, rb in zip(ta.rows, tb.rows)
            if isinstance(ra[j], (int, float)) and isinstance(rb[j], (int, float))
        ]
        if vals:
            diffs[col] = max(vals)
    out["max_abs_difference_per_column"] = diffs
    print("mean cosine float32 vs", dtypes[1], "per layer:", np.round(cos.mean(0), 5).tolist())
    print("largest |difference| per column:", {k: round(v, 5) for k, v in diffs.items()})


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--dtype", default="bfloat16")
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--model", default=None)
    ap.add_argument("--sample", type=int, default=2000, help="sentences (0: no geometry)")
    ap.add_argument("--wsd", default="", help="systems to score on ALL, e.g. plain,best")
    ap.add_argument("--json", default=None)
    args = ap.parse_args()
    dtypes = ("float32", args.dtype)
    base_cache = default_cache_dir()
    out: dict = {"args": vars(args), "dtypes": {}}
    geo = {}
    for dtype in dtypes if args.sample else ():
        enc = Encoder(model=args.model, device=args.device, dtype=dtype)
        geo[dtype] = geometry(enc, args.sample)
        took = geo[dtype]["seconds"]
        print(f"{dtype}: encoded the {args.sample}-sentence sample in {took:.1f} s")
        print(geo[dtype]["table"].to_markdown())
        out["dtypes"][dtype] = {
            "encode_s": geo[dtype]["seconds"],
            "table": {"columns": geo[dtype]["table"].columns, "rows": geo[dtype]["table"].rows},
        }
    if args.sample:
        compare_geometry(out, geo, dtypes)
    else:
        out["dtypes"] = {d: {} for d in dtypes}
    for system in filter(None, args.wsd.split(",")):
        for dtype in dtypes:
            cache = base_cache if dtype == "float32" else base_cache / f"precision-{dtype}"
            os.environ["WORKBENCH_CACHE"] = str(cache)
            enc = Encoder(model=args.model, device=args.device, dtype=dtype)
            t = time.perf_counter()
            f1 = wsd_f1(enc, system)
            out["dtypes"][dtype][f"wsd_{system}_f1"] = f1
            out["dtypes"][dtype][f"wsd_{system}_s"] = time.perf_counter() - t
            print(f"WSD {system} on ALL, {dtype}: F1 {f1:.2f} ({time.perf_counter() - t:.0f} s)")
            write_json(args.json, out)  # partial results survive a long run being stopped
    os.environ["WORKBENCH_CACHE"] = str(base_cache)
    write_json(args.json, out)


if __name__ == "__main__":
    main()
