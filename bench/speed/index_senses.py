"""Reading a saved sense index's senses (training, keys, counts) without its vectors, against
the plain baseline of loading the whole index, in the same process.

Run:  python -m bench run index_senses runs/wsd-glosses-20k/sense_index [--repeats 5]
                                   [--json docs/bench_runs/index_senses.json]

What a WSD run that continues a trained bi-encoder reads of its predecessor's index
(:func:`workbench.finetune.tasks.wsd.finish.earlier_training`). Time is the median of ``--repeats``;
peak memory is Python's (tracemalloc), which sees NumPy's arrays.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
import tracemalloc
from collections.abc import Callable
from pathlib import Path

from bench.lib.machine import machine_facts
from bench.lib.record import write_json
from workbench.wsd.store import load_index, load_index_senses


def measure(read: Callable[[Path], object], path: Path, repeats: int) -> dict[str, float]:
    """Median seconds and peak MiB of ``read(path)``."""
    seconds, peaks = [], []
    for _ in range(repeats):
        tracemalloc.start()
        t0 = time.perf_counter()
        read(path)
        seconds.append(time.perf_counter() - t0)
        peaks.append(tracemalloc.get_traced_memory()[1] / 2**20)
        tracemalloc.stop()
    return {"seconds": statistics.median(seconds), "peak_mib": max(peaks)}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("index", type=Path, help="a saved sense index directory")
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--json", type=Path, default=None)
    args = ap.parse_args()
    size = sum(p.stat().st_size for p in args.index.rglob("*") if p.is_file())
    whole = measure(load_index, args.index, args.repeats)
    senses = measure(load_index_senses, args.index, args.repeats)
    out = {
        "index": str(args.index),
        "index_mib": size / 2**20,
        "rows": len(load_index_senses(args.index).keys),
        "load_index (baseline)": whole,
        "load_index_senses": senses,
        "speedup": whole["seconds"] / senses["seconds"],
        "peak_memory_ratio": senses["peak_mib"] / whole["peak_mib"],
        "repeats": args.repeats,
        "machine": machine_facts(),
    }
    print(json.dumps({k: v for k, v in out.items() if k != "machine"}, indent=1))
    write_json(args.json, out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
