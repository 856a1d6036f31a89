"""Benchmark: how long a thread issuing torch operations waits for Python's GIL while another
thread runs Python, for several switch intervals (the cause of the GPU pipeline's slow launching
thread: docs/benchmarks.md, "The batch pipeline and the GPU").

Run:  python bench/gil_handoff.py --json docs/bench_runs/gil_handoff_cpu.json

Each torch operation releases the GIL while it runs and takes it back after; a thread asking for
it while another runs Python bytecode waits until that thread is made to yield, up to
``sys.getswitchinterval()``. Timed: ``--ops`` small ``torch.add`` calls alone (the baseline),
then with one thread running a Python loop beside them, at each ``--intervals`` (seconds);
medians of ``--repeats``, each as a ratio to the baseline in the same process.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import threading
import time

import torch
from machine import machine_facts
from record import write_json


def issue_ops(n: int) -> float:
    """Seconds for ``n`` small torch operations in this thread."""
    x = torch.ones(8)
    t = time.perf_counter()
    for _ in range(n):
        torch.add(x, 1)
    return time.perf_counter() - t


def with_busy_thread(n: int, interval: float) -> float:
    """:func:`issue_ops` while another thread runs Python, the switch interval at ``interval``."""
    before = sys.getswitchinterval()
    stop = threading.Event()

    def busy() -> None:
        while not stop.is_set():
            sum(range(1000))

    sys.setswitchinterval(interval)
    thread = threading.Thread(target=busy, daemon=True)
    thread.start()
    try:
        return issue_ops(n)
    finally:
        stop.set()
        thread.join()
        sys.setswitchinterval(before)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--ops", type=int, default=20000)
    ap.add_argument("--intervals", default="0.005,0.0005,0.00005", help="seconds, comma-separated")
    ap.add_argument("--repeats", type=int, default=3)
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
    write_json(args.json, {"args": vars(args), "machine": machine_facts(), "alone_s": alone,
                           "alone_median_s": base, "busy": rows})  # fmt: skip


if __name__ == "__main__":
    main()
