"""Benchmark: WSD prediction from a built sense index vs a plain per-instance numpy loop.

Run:  python -m bench run wsd [--train semcor] [--test ALL] [--layers last4-sum] [--repeats 7]
                          [--propagate lexname --gloss concat] [--warm-eval]

Both sides answer every instance of the test corpus (7,253 for ALL) from the same fitted
:class:`~workbench.wsd.index.SenseIndex`, with FAISS limited to 1 thread:

(a) the plain loop a tutorial would write: per instance, look up the lemma's candidate keys in
    WordNet, gather their unit vectors from a ``{key: vector}`` dict, cosine with numpy, argmax;
(b) :func:`workbench.wsd.predict.predict`: one FAISS range search per (lemma, POS) group (the
    candidates are one contiguous row range of the index), with runner-up and prediction type.

Both are checked to give the same answers, then timed interleaved (medians of ``--repeats``).
The encodings come from the on-disk cache (run ``workbench wsd eval`` once first, or let this
script encode, which is then reported as cold). With ``--warm-eval`` it also times the whole
``workbench wsd eval`` command (warm: encodings cached) in a subprocess.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time

import numpy as np

from workbench import Encoder
from workbench.lexicon.wordnet import POS_TAGS, load_wordnet
from workbench.wsd.config import SenseIndexConfig
from workbench.wsd.evaluate import load_corpus
from workbench.wsd.predict import build_index, encode_instances, predict


def plain_loop(index, vectors, lemmas, pos, wordnet, table) -> list[str | None]:
    """Per-instance cosine over the candidates, in Python + numpy (the baseline)."""
    out = []
    for v, lemma, p in zip(vectors, lemmas, pos):
        q = v / np.linalg.norm(v)
        cands = [k for k in wordnet.candidates(lemma, p) if k in table] if p in POS_TAGS else []
        if not cands:
            out.append(wordnet.first_sense(lemma, p) if p in POS_TAGS else None)
            continue
        mat = np.stack([table[k] for k in cands])
        out.append(cands[int(np.argmax(mat @ q))])
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--train", default="semcor")
    ap.add_argument("--test", default="ALL")
    ap.add_argument("--layers", default="last4-sum")
    ap.add_argument("--correction", default="none")
    ap.add_argument("--propagate", default="none")
    ap.add_argument("--gloss", default="none")
    ap.add_argument("--repeats", type=int, default=7)
    ap.add_argument("--warm-eval", action="store_true", help="also time `workbench wsd eval`")
    args = ap.parse_args()

    import faiss

    faiss.omp_set_num_threads(1)
    enc = Encoder()
    wordnet = load_wordnet()
    t = time.perf_counter()
    training = encode_instances(enc, load_corpus(args.train), progress=False)
    test = encode_instances(enc, load_corpus(args.test), progress=False)
    t_load = time.perf_counter() - t
    config = SenseIndexConfig(layers=args.layers, correction=args.correction,
                              propagate=args.propagate, gloss=args.gloss)  # fmt: skip
    t = time.perf_counter()
    index = build_index(enc, training, config, wordnet)
    t_build = time.perf_counter() - t
    vectors = test.vectors(args.layers)
    # the baseline works in the index's space: transformed queries, unit rows by key
    queries = index.transform_queries(vectors)
    table = dict(zip(index.keys_, index.vectors_))

    ours = predict(index, vectors, test.lemmas, test.pos, wordnet.first_sense, threads=1)
    base = plain_loop(index, queries, test.lemmas, test.pos, wordnet, table)
    same = sum(a.key == b for a, b in zip(ours, base))
    times_a, times_b = [], []
    for _ in range(args.repeats):
        t = time.perf_counter()
        plain_loop(index, queries, test.lemmas, test.pos, wordnet, table)
        times_a.append(time.perf_counter() - t)
        t = time.perf_counter()
        predict(index, vectors, test.lemmas, test.pos, wordnet.first_sense, threads=1)
        times_b.append(time.perf_counter() - t)
    a, b = statistics.median(times_a), statistics.median(times_b)
    result = {
        "test": test.corpus,
        "instances": len(test),
        "index_rows": len(index),
        "config": config.label,
        "same_answers": f"{same}/{len(test)}",
        "plain_loop_s": round(a, 4),
        "predict_s": round(b, 4),
        "speedup": round(a / b, 1),
        "predict_us_per_instance": round(1e6 * b / len(test), 1),
        "faiss_threads": 1,
        "load_cached_encodings_s": round(t_load, 2),
        "build_index_s": round(t_build, 2),
        "runs_a": [round(x, 4) for x in times_a],
        "runs_b": [round(x, 4) for x in times_b],
    }
    if args.warm_eval:
        cmd = [sys.executable, "-m", "workbench", "wsd", "eval", args.test, "--layers",
               args.layers, "--correction", args.correction, "--propagate", args.propagate,
               "--gloss", args.gloss]  # fmt: skip
        t = time.perf_counter()
        subprocess.run(cmd, check=True, capture_output=True)
        result["warm_eval_command_s"] = round(time.perf_counter() - t, 1)
        result["warm_eval_command"] = " ".join(cmd[2:])
    print(json.dumps(result, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
