"""Benchmark: memory of ``Encoder.encode`` in RAM vs streamed to a memory-mapped file.

Run:  python -m bench run extract_memory [--sentences 10000] [--model M]

Each mode runs in a fresh child process (so peaks do not mix) on the first N SemCor sentences,
all words kept, and reports the output size, wall time and the peak of the process's
*anonymous* memory (``RssAnon`` of /proc/self/status, sampled every 20 ms): memory that cannot
be given back without swap. Pages of a memory-mapped output file are page cache the kernel
writes back and evicts on its own (``RssFile``), so they are reported apart.

Modes:
  ram        ``encode(sentences)``: float32 array in RAM, all hidden states (the baseline);
  mmap       ``encode(sentences, out=...)``: the same array streamed to a .npy memory map;
  mmap16-2   ``encode(..., out=..., store_dtype="float16", layers=[-2, -1])``.
The model itself and the loaded corpus are in every mode's figure; ``idle`` gives that floor
(model loaded, corpus read, nothing encoded).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

from bench.lib.record import write_json
from workbench import Encoder
from workbench.corpora.datasets import load_dataset

REPO = Path(__file__).resolve().parents[2]  # `-m bench.speed.extract_memory` runs from here
MODES = ("idle", "ram", "mmap", "mmap16-2")


def _status_kb(field: str) -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1])
    return 0


def child(mode: str, n: int, model: str | None) -> dict:

    sentences = [list(s.words) for s in load_dataset("semcor").sentences[:n]]
    enc = Encoder(model=model)
    enc.encode(sentences[:20], progress=False)  # warm-up, allocator settled
    peak = {"RssAnon": 0, "RssFile": 0}
    base = {k: _status_kb(k) for k in peak}
    done = threading.Event()

    def sample() -> None:
        while not done.is_set():
            for k in peak:
                peak[k] = max(peak[k], _status_kb(k))
            time.sleep(0.02)

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    t = time.perf_counter()
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "vectors.npy"
        if mode == "ram":
            emb = enc.encode(sentences, progress=False)
        elif mode == "mmap":
            emb = enc.encode(sentences, out=out, progress=False)
        elif mode == "mmap16-2":
            emb = enc.encode(
                sentences, out=out, store_dtype="float16", layers=[-2, -1], progress=False
            )
        else:
            emb = None
        wall = time.perf_counter() - t
        size = 0 if emb is None else emb.vectors.nbytes
        shape = None if emb is None else list(emb.vectors.shape)
        done.set()
        sampler.join()
    return {
        "mode": mode,
        "shape": shape,
        "output_mb": size / 2**20,
        "wall_s": wall,
        "base_anon_mb": base["RssAnon"] / 1024,
        "peak_anon_mb": peak["RssAnon"] / 1024,
        "peak_file_mb": peak["RssFile"] / 1024,
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sentences", type=int, default=10_000)
    ap.add_argument("--model", default=None)
    ap.add_argument("--child", choices=MODES, help=argparse.SUPPRESS)
    ap.add_argument("--json", default=None)
    args = ap.parse_args()
    if args.child:
        print(json.dumps(child(args.child, args.sentences, args.model)))
        return
    rows = []
    for mode in MODES:
        cmd = [
            sys.executable,
            "-m",
            "bench.speed.extract_memory",
            "--child",
            mode,
            "--sentences",
            str(args.sentences),
        ]
        cmd += ["--model", args.model] if args.model else []
        res = subprocess.run(cmd, capture_output=True, text=True, check=True, cwd=REPO)
        rows.append(json.loads(res.stdout.strip().splitlines()[-1]))
    idle = rows[0]["peak_anon_mb"]
    print(f"{args.sentences} SemCor sentences; anonymous memory peaks (idle floor {idle:.0f} MB)")
    for r in rows[1:]:
        print(
            f"  {r['mode']:9s} output {r['output_mb']:7.0f} MB {str(r['shape']):18s} "
            f"wall {r['wall_s']:6.1f} s  peak anon {r['peak_anon_mb']:7.0f} MB "
            f"(+{r['peak_anon_mb'] - idle:6.0f} over idle)  "
            f"peak file-backed {r['peak_file_mb']:6.0f} MB"
        )
    write_json(args.json, rows)


if __name__ == "__main__":
    main()
