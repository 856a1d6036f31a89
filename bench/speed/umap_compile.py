"""UMAP's first fit in a new process: imported through ``workbench.viz.compiled.import_umap``
(numba's compiled code cached on disk) against a plain ``import umap`` (compiled in every
process), each in new processes, interleaved.

Each process imports umap and fits 30 random points (what the app's preload does to compile
it); its wall seconds from start to the fitted map are timed. Two numba cache folders
(``NUMBA_CACHE_DIR``), both empty at the start: the first process of each kind is a machine's
first use (reported apart), the next ``--repeats`` are every later process.

Run::

    python -m bench run umap_compile --repeats 5 --json docs/bench_runs/umap_compile_cpu_2core.json
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from typing import Any

from bench.lib.machine import machine_facts
from bench.lib.record import write_json

FIT = (
    "import numpy as np; "
    "umap.UMAP(n_neighbors=5, random_state=0).fit(np.random.default_rng(0).normal(size=(30, 8)))"
)
KINDS = {
    "import_umap (cached)": (
        "from workbench.viz.compiled import import_umap; umap = import_umap(); "
    ),
    "plain import umap": "import umap; ",
}


def one(code: str, cache: str) -> float:
    """Wall seconds of one new process running ``code`` with numba's cache in ``cache``."""
    env = {**os.environ, "NUMBA_CACHE_DIR": cache, "PYTHONWARNINGS": "ignore"}
    t = time.perf_counter()
    subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, env=env,
                   timeout=600)  # fmt: skip
    return time.perf_counter() - t


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--json", default=None)
    args = parser.parse_args(argv)
    out: dict[str, Any] = {"machine": machine_facts(), "repeats": args.repeats}
    with tempfile.TemporaryDirectory() as root:
        caches = {name: os.path.join(root, str(i)) for i, name in enumerate(KINDS)}
        first = {name: one(KINDS[name] + FIT, caches[name]) for name in KINDS}
        runs: dict[str, list[float]] = {name: [] for name in KINDS}
        for _ in range(args.repeats):
            for name, code in KINDS.items():
                runs[name].append(one(code + FIT, caches[name]))
    for name in KINDS:
        out[name] = {
            "first_process_s": first[name],
            "median_s": statistics.median(runs[name]),
            "runs": runs[name],
        }
        print(f"{name:24s} first process {first[name]:6.2f} s, "
              f"later processes median {out[name]['median_s']:6.2f} s")  # fmt: skip
    out["ratio plain / cached (later processes)"] = (
        out["plain import umap"]["median_s"] / out["import_umap (cached)"]["median_s"]
    )
    print(f"plain / cached: {out['ratio plain / cached (later processes)']:.1f}x")
    out["load_average_end"] = os.getloadavg()[0]
    write_json(args.json, out)


if __name__ == "__main__":
    main()
