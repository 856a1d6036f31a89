"""Benchmark: the encoder's host work around the model, each step against its reference path.

Run:  python -m bench run host_prep --sentences 2000,20000,all --repeats 5 \
          --json docs/bench_runs/host_prep_cpu.json

Before the first batch runs, ``Encoder.encode`` tokenizes its whole input and lays out each
sentence's subword ids and word offsets (:func:`workbench.encoding.prepare.prepare`). On a GPU
that step is host time the device waits for (docs/benchmarks.md, "GPU"). This times, on the
first N SemCor sentences (WordNet's example sentences where SemCor is missing) and in the same
process, interleaved:

(a) ``by_sentence``: the reference, every sentence tokenized whole by the Rust tokenizer's
    batch call, its subwords grouped by word in Python (what ``prepare`` did before);
(b) ``by_word``: each distinct word tokenized once, the corpus laid out by array operations
    (``prepare``'s default);

both with the per-sentence word offsets ``encode`` reads for its output spans;

each as seconds and tokens/s, (b) as a speed-up over (a), after checking both give the same
ids, offsets and windows. Then the batches ``encode`` runs (at a GPU's token budget, 65,536, so
that the batch count is a GPU's; every word kept) built two ways, checked equal:

(c) ``batches_by_window``: each batch's pooling plan and output rows window by window
    (``BatchBuilder(gather=False)``, the reference);
(d) ``batches_gathered``: from flat arrays of the whole input (``BatchBuilder``'s default), the
    flat arrays' set-up included.

On a GPU the batch building is the producer thread's work while the model runs (the "prep"
stage of ``bench/speed/extract.py --profile``). Last, the encoder's whole host work before and
around its batches (tokenizing, windows, batch plans, every batch built; every word kept, the
GPU's budget and batch plan, ``min_fill`` 0.25), its input in one chunk or streamed
(:mod:`workbench.encoding.pipeline.stream`, chunks from 16,384 words up, doubling: the cuda
default at that budget):

(e) ``whole`` / ``streamed``: seconds until the first batch is ready (what the device waits
    for before it starts), seconds for all of it, and the padding and batch count of the
    batches each one plans (streaming sorts within chunks, so it pads a little more).

The tokenizer's own thread pool is on unless ``TOKENIZERS_PARALLELISM`` says otherwise; the
run records the setting and the CPUs.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
import warnings
from typing import Any

import numpy as np

from bench.lib.machine import machine_facts
from bench.lib.record import write_json
from bench.speed.extract import load_sentences
from workbench import Encoder
from workbench.encoding.alignment import normalize_input
from workbench.encoding.batching import GPU_MIN_FILL, Batch, BatchBuilder
from workbench.encoding.pipeline.overlap import PipelineConfig
from workbench.encoding.pipeline.stream import first_chunk_words
from workbench.encoding.prepare import Prepared, prepare
from workbench.encoding.rows import RowLayout

GPU_BATCH_TOKENS = 65536  # the H200's measured budget for the packaged model


def same(a: Prepared, b: Prepared) -> bool:
    return (
        all(np.array_equal(x, y) for x, y in zip(a.ids, b.ids))
        and all(np.array_equal(x, y) for x, y in zip(a.offsets, b.offsets))
        and a.windows == b.windows
        and a.notes == b.notes
    )


def same_batch(a: Batch, b: Batch) -> bool:
    return (
        np.array_equal(a.ids, b.ids)
        and np.array_equal(a.mask, b.mask)
        and np.array_equal(a.rows, b.rows)
        and np.array_equal(a.plan.single_positions, b.plan.single_positions)
        and np.array_equal(a.plan.multi_positions, b.plan.multi_positions)
        and np.array_equal(a.plan.multi_weights, b.plan.multi_weights)
    )


def batch_times(enc: Encoder, words: list[list[str]], prep: Prepared, repeats: int) -> dict:
    layout = RowLayout.build(words, None)

    def builder(gather: bool) -> BatchBuilder:
        return BatchBuilder(
            prep, enc.specials, layout.rows, enc.pooling, GPU_BATCH_TOKENS, gather=gather,
            min_fill=GPU_MIN_FILL,
        )  # fmt: skip

    batches = builder(True).batches()
    fast, ref = builder(True), builder(False)
    if not all(same_batch(fast.build(b), ref.build(b)) for b in batches):
        print("gathered batches differ from window by window: not valid", file=sys.stderr)
        sys.exit(1)

    def run(gather: bool) -> float:
        t = time.perf_counter()
        bb = builder(gather)
        for b in batches:
            bb.build(b)
        return time.perf_counter() - t

    times: dict[str, list[float]] = {"batches_by_window": [], "batches_gathered": []}
    for _ in range(repeats):
        times["batches_by_window"].append(run(False))
        times["batches_gathered"].append(run(True))
    med = {k: statistics.median(v) for k, v in times.items()}
    return {
        "batches": len(batches),
        "batch_tokens": GPU_BATCH_TOKENS,
        "seconds": times,
        "median_s": med,
        "speedup": med["batches_by_window"] / med["batches_gathered"],
    }


def stream_times(encs: dict[str, Encoder], words: list[list[str]], repeats: int) -> dict:
    """(e): time to the first batch and in all, one chunk against streamed chunks."""
    layout = RowLayout.build(words, None)
    tokens = 0

    def run(enc: Encoder) -> tuple[float, float, dict]:
        nonlocal tokens
        t = time.perf_counter()
        first = None
        padded = real = batches = 0
        stream = enc.batch_stream(words, layout.rows, enc.pooling)
        for builder, batch in stream:
            hb = builder.build(batch)
            if first is None:
                first = time.perf_counter() - t
            padded += hb.ids.size
            real += int(hb.mask.sum())
            batches += 1
        total = time.perf_counter() - t
        shape = {"chunks": len(stream.bounds), "batches": batches, "padding": padded / real - 1}
        return first or total, total, shape

    times: dict[str, dict[str, list[float]]] = {k: {"first": [], "all": []} for k in encs}
    shapes = {name: run(enc)[2] for name, enc in encs.items()}  # warm-up
    for _ in range(repeats):
        for name, enc in encs.items():
            first, total, _ = run(enc)
            times[name]["first"].append(first)
            times[name]["all"].append(total)
    med = {k: {s: statistics.median(v) for s, v in t.items()} for k, t in times.items()}
    return {"seconds": times, "median_s": med, "shapes": shapes}


def run_size(enc: Encoder, n: int | None, repeats: int, streams: dict[str, Encoder]) -> dict:
    raw, source, _ = load_sentences(n)
    words = normalize_input(raw)
    tok, window = enc.tokenizer, enc.window_tokens

    def run(by_word: bool) -> tuple[float, Prepared]:
        t = time.perf_counter()
        prep = prepare(tok, words, window, enc.stride, by_word=by_word)
        prep.offsets  # noqa: B018 - per-sentence offsets, which encode's output spans read
        return time.perf_counter() - t, prep

    _, ref = run(False)  # warm-up, and the reference
    _, fast = run(True)
    if not same(fast, ref):
        print("by_word differs from by_sentence: not a valid comparison", file=sys.stderr)
        sys.exit(1)
    tokens = int(sum(len(i) for i in ref.ids))
    times: dict[str, list[float]] = {"by_sentence": [], "by_word": []}
    for _ in range(repeats):
        times["by_sentence"].append(run(False)[0])
        times["by_word"].append(run(True)[0])
    med = {k: statistics.median(v) for k, v in times.items()}
    row: dict[str, Any] = {
        "corpus": source,
        "sentences": len(words),
        "words": sum(map(len, words)),
        "distinct_words": len(set(w for s in words for w in s)),
        "tokens": tokens,
        "seconds": times,
        "median_s": med,
        "tokens_per_s": {k: tokens / v for k, v in med.items()},
        "speedup": med["by_sentence"] / med["by_word"],
    }
    print(
        f"{source}, {len(words)} sentences ({row['words']} words, {row['distinct_words']} "
        f"distinct, {tokens} subwords): by sentence {med['by_sentence']:.3f} s "
        f"({row['tokens_per_s']['by_sentence']:,.0f} tok/s), by word {med['by_word']:.3f} s "
        f"({row['tokens_per_s']['by_word']:,.0f} tok/s): x{row['speedup']:.2f}"
    )
    row["build"] = build = batch_times(enc, words, ref, repeats)
    med = build["median_s"]
    print(
        f"  {build['batches']} batches: window by window {med['batches_by_window']:.3f} s, "
        f"gathered {med['batches_gathered']:.3f} s: x{build['speedup']:.2f}"
    )
    row["stream"] = stream = stream_times(streams, words, repeats)
    for name, med in stream["median_s"].items():
        shape = stream["shapes"][name]
        print(
            f"  {name}: first batch ready after {med['first']:.3f} s, all in {med['all']:.3f} s "
            f"({shape['chunks']} chunk(s), {shape['batches']} batches, "
            f"{100 * shape['padding']:.1f}% padding)"
        )
    return row


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sentences", default="2000,20000,all", help="sizes, comma-separated")
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--model", default=None, help="model whose tokenizer (default: packaged)")
    ap.add_argument("--json", default=None, help="write the results here")
    args = ap.parse_args()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        enc = Encoder(model=args.model, device="cpu")
        streams = {
            name: Encoder(
                model=args.model,
                device="cpu",
                max_batch_tokens=GPU_BATCH_TOKENS,
                pipeline=PipelineConfig(overlap=True, stream_words=words, min_fill=GPU_MIN_FILL),
            )  # fmt: skip
            for name, words in (("whole", 0), ("streamed", first_chunk_words(GPU_BATCH_TOKENS)))
        }
    sizes = [None if s == "all" else int(s) for s in args.sentences.split(",")]
    result = {
        "args": vars(args),
        "machine": machine_facts(),
        "tokenizers_parallelism": os.environ.get("TOKENIZERS_PARALLELISM", "(unset: on)"),
        "model": enc.name,
        "rows": [],
    }
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for n in sizes:
            result["rows"].append(run_size(enc, n, args.repeats, streams))
    write_json(args.json, result)


if __name__ == "__main__":
    main()
