"""Benchmark: how long a thread issuing torch operations waits for Python's GIL while another
thread runs Python, for several switch intervals (the cause of the GPU pipeline's slow launching
thread: docs/benchmarks.md, "Tried and rejected").

Run:  python -m bench run gil_handoff --producer-sentences 20000 \
          --json docs/bench_runs/gil_handoff_cpu.json

Each torch operation releases the GIL while it runs and takes it back after; a thread asking for
it while another runs Python bytecode waits until that thread is made to yield, up to
``sys.getswitchinterval()``. Timed, medians of ``--repeats``, each against its baseline in the
same process:

(a) ``--ops`` small ``torch.add`` calls alone, then with one thread running a Python loop
    beside them, at each ``--intervals`` (seconds);
(b) with ``--producer-sentences N``: the encoder's real producer work on the first N SemCor
    sentences, as on a GPU (65,536-token budget, the input streamed in chunks, the GPU's batch
    plan, every batch built and packed; :meth:`Encoder.batch_stream`) on one thread, while
    another issues small torch operations as a GPU's launching thread does: the operations'
    rate during the producer's run against their rate alone, and the producer's time against
    its time alone, at each interval.

(A part (c), the producer's work in a worker process, measured the producer that was removed
for no gain on a GPU; its figures are in docs/bench_runs/gil_handoff_cpu*.json.)
"""

from __future__ import annotations

import argparse
import statistics
import threading
import time

import torch

from bench.lib.machine import machine_facts
from bench.lib.record import write_json
from bench.speed.extract import load_sentences, switched
from workbench import Encoder
from workbench.encoding.alignment import normalize_input
from workbench.encoding.batching import GPU_MIN_FILL
from workbench.encoding.pipeline.overlap import PipelineConfig
from workbench.encoding.pipeline.stream import first_chunk_words
from workbench.encoding.rows import RowLayout

GPU_BUDGET = 65536  # tokens: the H100's measured budget in the thread profile's run


def issue_ops(n: int) -> float:
    """Seconds for ``n`` small torch operations in this thread."""
    x = torch.ones(8)
    t = time.perf_counter()
    for _ in range(n):
        torch.add(x, 1)
    return time.perf_counter() - t


def with_busy_thread(n: int, interval: float) -> float:
    """:func:`issue_ops` while another thread runs Python, the switch interval at ``interval``."""
    stop = threading.Event()

    def busy() -> None:
        while not stop.is_set():
            sum(range(1000))

    thread = threading.Thread(target=busy, daemon=True)
    thread.start()
    try:
        return switched(interval, issue_ops, n)
    finally:
        stop.set()
        thread.join()


def produce(enc: Encoder, words: list[list[str]], rows) -> float:
    """Seconds for the producer's work on ``words``: every batch planned, built and packed."""
    t = time.perf_counter()
    for builder, batch in enc.batch_stream(words, rows, enc.pooling):
        hb = builder.build(batch)
        if hb.plan.n_words:
            hb.pack(pin=False)
    return time.perf_counter() - t


def ops_rate_until(done: threading.Event) -> float:
    """Small torch operations per second issued on this thread until ``done`` is set."""
    x = torch.ones(8)
    n, t = 0, time.perf_counter()
    while not done.is_set():
        torch.add(x, 1)
        n += 1
    return n / (time.perf_counter() - t)


def beside_producer(enc: Encoder, words, rows, interval: float | None) -> tuple[float, float]:
    """(operations per second, producer seconds): small torch operations issued on this thread
    while another runs :func:`produce` (``interval`` None: the operations alone, 0.5 s)."""
    done = threading.Event()
    seconds = [0.0]

    def run() -> None:
        seconds[0] = produce(enc, words, rows)
        done.set()

    if interval is None:
        threading.Timer(0.5, done.set).start()
        return ops_rate_until(done), 0.0
    threading.Thread(target=run, daemon=True).start()
    return switched(interval, ops_rate_until, done), seconds[0]


def producer_part(n: int, intervals: list[float], repeats: int) -> dict:
    """(b): the real producer beside a launching thread."""
    config = PipelineConfig(overlap=True, stream_words=first_chunk_words(GPU_BUDGET),
                            min_fill=GPU_MIN_FILL)  # fmt: skip
    enc = Encoder(device="cpu", max_batch_tokens=GPU_BUDGET, pipeline=config)
    raw, source, _ = load_sentences(n)
    words = normalize_input(raw)
    rows = RowLayout.build(words, None).rows
    produce(enc, words, rows)  # warm-up: the word table, the allocator
    alone_rate, alone_s, busy = [], [], {iv: [] for iv in intervals}
    for _ in range(repeats):
        alone_rate.append(beside_producer(enc, words, rows, None)[0])
        alone_s.append(produce(enc, words, rows))
        for iv in intervals:
            busy[iv].append(beside_producer(enc, words, rows, iv))
    rate, prod = statistics.median(alone_rate), statistics.median(alone_s)
    print(
        f"\nthe producer's work on {len(words)} {source} sentences alone: {prod:.3f} s; "
        f"small torch operations alone: {rate:,.0f}/s"
    )
    out = []
    for iv in intervals:
        r = statistics.median(x for x, _ in busy[iv])
        s = statistics.median(y for _, y in busy[iv])
        print(
            f"  both at once, switch interval {1e3 * iv:g} ms: operations {r:,.0f}/s "
            f"(x{r / rate:.3f} of alone), the producer {s:.3f} s (x{s / prod:.2f})"
        )
        out.append({"interval_s": iv, "runs": busy[iv], "ops_per_s": r, "ops_ratio": r / rate,
                    "producer_s": s, "producer_ratio": s / prod})  # fmt: skip
    return {"sentences": len(words), "source": source, "ops_alone_per_s": alone_rate,
            "producer_alone_s": alone_s, "busy": out}  # fmt: skip


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--ops", type=int, default=20000)
    ap.add_argument("--intervals", default="0.005,0.0005,0.00005", help="seconds, comma-separated")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--producer-sentences", type=int, default=None, help="part (b) on N sentences")
    ap.add_argument("--json", default=None)
    args = ap.parse_args()
    torch.set_num_threads(1)
    intervals = [float(x) for x in args.intervals.split(",")]
    issue_ops(1000)  # warm-up
    alone, busy = [], {iv: [] for iv in intervals}
    for _ in range(args.repeats):
        alone.append(issue_ops(args.ops))
        for iv in intervals:
            busy[iv].append(with_busy_thread(args.ops, iv))
    base = statistics.median(alone)
    print(f"{args.ops} torch.add calls alone: {base:.3f} s ({1e6 * base / args.ops:.1f} us each)")
    rows = []
    for iv in intervals:
        sec = statistics.median(busy[iv])
        print(
            f"  with a thread running Python, switch interval {1e3 * iv:g} ms: {sec:.3f} s "
            f"(x{sec / base:.1f}; {1e6 * sec / args.ops:.1f} us an operation)"
        )
        rows.append({"interval_s": iv, "seconds": busy[iv], "median_s": sec, "ratio": sec / base})
    producer = None
    if args.producer_sentences:
        producer = producer_part(args.producer_sentences, intervals, args.repeats)
    write_json(args.json, {"args": vars(args), "machine": machine_facts(), "alone_s": alone,
                           "alone_median_s": base, "busy": rows, "producer": producer})  # fmt: skip


if __name__ == "__main__":
    main()
