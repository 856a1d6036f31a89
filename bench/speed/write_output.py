"""Benchmark: the pipeline writer's copies into a fresh output against one zeroed beforehand:
how much of the writer's time is page faults (zeroing first measured no gain: docs/benchmarks.md,
"Tried and rejected").

Run:  python -m bench run write_output --words 200000 --repeats 5 \
          --json docs/bench_runs/write_output_cpu.json

An output of ``--words`` rows, 7 layers of 384 dims (the default model's, every layer), is
written as the writer thread writes it: ``index_copy_`` of each batch's pooled rows
(``--batch-rows`` a batch, rows scattered over the whole output as batches sorted by length
scatter them), from one source tensor. Timed, medians of ``--repeats``, float32 and float16:

(a) ``fresh``: the copies into ``np.empty`` memory (each page faulted in, and zeroed by the
    kernel, by the copy that first touches it);
(b) ``prefaulted``: the same output first zeroed by ``torch.zero_`` on torch's threads (timed
    apart: ``zero``), then the copies;
as ratios ``fresh / prefaulted copies`` and ``fresh / (zero + prefaulted copies)``: the second
is the whole call's gain when nothing else runs meanwhile. The torch thread count is
``--threads`` (default torch's).
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np
import torch

from bench.lib.machine import machine_facts
from bench.lib.record import write_json

LAYERS, DIM = 7, 384


def copies(dest: torch.Tensor, src: torch.Tensor, batches: list[torch.Tensor]) -> float:
    """Seconds for the writer's copies: each batch's rows from ``src`` into ``dest``."""
    t = time.perf_counter()
    for rows in batches:
        dest.index_copy_(0, rows, src[: len(rows)])
    return time.perf_counter() - t


def one_repeat(n: int, dtype: np.dtype, src: torch.Tensor, batches: list[torch.Tensor]) -> dict:
    fresh = np.empty((n, LAYERS, DIM), dtype=dtype)
    fresh_s = copies(torch.from_numpy(fresh), src, batches)
    del fresh
    ready = np.empty((n, LAYERS, DIM), dtype=dtype)
    t = time.perf_counter()
    torch.from_numpy(ready).zero_()
    zero_s = time.perf_counter() - t
    pre_s = copies(torch.from_numpy(ready), src, batches)
    del ready
    return {"fresh_s": fresh_s, "zero_s": zero_s, "prefaulted_s": pre_s}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--words", type=int, default=200_000, help="output rows")
    ap.add_argument("--batch-rows", type=int, default=10_000, help="rows a batch writes")
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--threads", type=int, default=None, help="torch threads (default torch's)")
    ap.add_argument("--json", default=None)
    args = ap.parse_args()
    if args.threads:
        torch.set_num_threads(args.threads)
    n = args.words
    order = torch.from_numpy(np.random.default_rng(0).permutation(n))
    batches = list(torch.split(order, args.batch_rows))
    warm = np.empty((n, LAYERS, DIM), dtype=np.float32)  # the process's first big allocation
    torch.from_numpy(warm).zero_()  # (a VM's first touch of memory is slower still)
    del warm
    result: dict = {"args": vars(args), "machine": machine_facts(), "dtypes": {}}
    for name in ("float32", "float16"):
        dtype = np.dtype(name)
        src = torch.randn(args.batch_rows, LAYERS, DIM).to(getattr(torch, name))
        rows = [one_repeat(n, dtype, src, batches) for _ in range(args.repeats)]
        med = {k: statistics.median(r[k] for r in rows) for k in rows[0]}
        gb = n * LAYERS * DIM * dtype.itemsize / 1e9
        copy_ratio = med["fresh_s"] / med["prefaulted_s"]
        call_ratio = med["fresh_s"] / (med["zero_s"] + med["prefaulted_s"])
        print(
            f"{name}, {n} rows ({gb:.2f} GB), torch threads {torch.get_num_threads()}: copies into "
            f"fresh memory {med['fresh_s']:.3f} s; zeroed first {med['zero_s']:.3f} s, then the "
            f"copies {med['prefaulted_s']:.3f} s: the copies x{copy_ratio:.2f} faster, "
            f"zero + copies x{call_ratio:.2f}"
        )
        result["dtypes"][name] = {"gb": gb, "runs": rows, "median": med,
                                  "copies_speedup": copy_ratio,
                                  "call_speedup": call_ratio}  # fmt: skip
    write_json(args.json, result)


if __name__ == "__main__":
    main()
