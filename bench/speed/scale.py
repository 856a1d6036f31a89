"""Benchmark: the sharded Ray job against single-process ``Encoder.encode`` on the same input.

Run (CPU, the figures in docs/scaling.md; a quiet machine, ~5 min):
    python -m bench run scale --sentences 2000 --shard-size 125 --repeats 3 \
        --json docs/bench_runs/scale_cpu_2core.json
Run (a GPU machine: one actor per GPU, bf16):
    python -m bench run scale --sentences 20000 --shard-size 2000 --workers 1 --gpus-per-worker 1 \
        --repeats 3 --json docs/bench_runs/scale_gpu.json

Corpus: the first N SemCor sentences (the WSD data: README.md), written as one
text file (one sentence per line) and read back, so both paths encode the same words; the packaged
all-MiniLM-L6-v2 (or ``--model``), all hidden states, float32, every word. In one process, per
repeat and as medians:

(a) ``encode``: ``Encoder.encode`` on all sentences (torch on every core), in memory;
(b) ``ray xN``: ``embed_shards`` into a fresh directory with N actors (``--workers 1,2``), each
    reserving ``--cpus-per-worker`` CPUs (default: all CPUs / N) and running that many torch
    threads; a local Ray started once for the whole benchmark.

For (b) two figures: ``wall`` (the whole call: planning, actor start-up and model loading,
encoding, writing shards with their checksums) and ``steady`` (rows per second between the first
and the last shard finishing: the rate once the actors are up, what a long job sees; it needs
several shards per actor, hence the small default ``--shard-size``). Ratios are against (a) of
the same repeat.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import shutil
import statistics
import tempfile
import time
from pathlib import Path

from bench.lib.machine import machine_facts
from bench.lib.record import write_json
from workbench.corpora.datasets import load_dataset
from workbench.corpora.readers import read_text
from workbench.distributed.config import ClusterConfig, ShardConfig
from workbench.distributed.jobs import embed_shards
from workbench.distributed.progress import JobProgress
from workbench.encoding.encoder import Encoder


def run_ray(source: Path, workers: int, cpus: int, gpus: float | None, args) -> dict:
    out = Path(tempfile.mkdtemp(prefix="scale-")) / "shards"
    finished: list[tuple[float, int]] = []

    def report(p: JobProgress) -> None:
        finished.append((time.perf_counter(), p.rows))

    config = ShardConfig(model=args.model, shard_size=args.shard_size)
    cluster = ClusterConfig(workers=workers, cpus_per_worker=cpus, gpus_per_worker=gpus)
    t = time.perf_counter()
    result = embed_shards([source], out, config, cluster, progress=report)
    wall = time.perf_counter() - t
    shutil.rmtree(out.parent, ignore_errors=True)
    rows = result.manifest.rows
    (t0, r0), (t1, r1) = finished[0], finished[-1]
    steady = (r1 - r0) / (t1 - t0) if t1 > t0 else float("nan")
    return {"workers": result.workers, "cpus_per_worker": cpus, "rows": rows, "wall_s": wall,
            "rows_s_wall": rows / wall, "rows_s_steady": steady,
            "shards": len(result.manifest.shards)}  # fmt: skip


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sentences", type=int, default=2000)
    ap.add_argument("--shard-size", type=int, default=125)
    ap.add_argument("--workers", default="1,2", help="actor counts to run, comma-separated")
    ap.add_argument("--cpus-per-worker", type=int, default=None, help="default: CPUs / workers")
    ap.add_argument("--gpus-per-worker", type=float, default=None)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--model", default=None)
    ap.add_argument("--json", type=Path, default=None)
    args = ap.parse_args()

    import ray  # heavy and optional: the benchmark of the Ray path needs it

    corpus = load_dataset("semcor")
    sentences = [list(s.words) for s in corpus.sentences[: args.sentences]]
    tmp = Path(tempfile.mkdtemp(prefix="scale-in-"))
    source = tmp / "semcor_head.txt"
    source.write_text("\n".join(" ".join(s) for s in sentences) + "\n", encoding="utf-8")
    sentences = [list(s.words) for s in read_text(source).sentences]  # the words both paths see
    facts = machine_facts()
    enc = Encoder(args.model)
    counts = [int(w) for w in args.workers.split(",")]
    n_cpus = os.cpu_count() or 1
    ray.init(address="local", num_cpus=n_cpus, include_dashboard=False,
             logging_level=logging.WARNING)  # fmt: skip
    rows = []
    for repeat in range(args.repeats):
        t = time.perf_counter()
        emb = enc.encode(sentences, progress=False)
        base = len(emb) / (time.perf_counter() - t)
        row = {"repeat": repeat, "encode_rows_s": base, "rows": len(emb)}
        del emb
        for n in counts:
            cpus = args.cpus_per_worker or max(1, n_cpus // n)
            r = run_ray(source, n, cpus, args.gpus_per_worker, args)
            row[f"ray_x{n}"] = r
            row[f"ray_x{n}_wall_ratio"] = r["rows_s_wall"] / base
            row[f"ray_x{n}_steady_ratio"] = r["rows_s_steady"] / base
        rows.append(row)
        print(json.dumps(row), flush=True)
    ray.shutdown()
    median = {"encode_rows_s": statistics.median(r["encode_rows_s"] for r in rows)}
    for n in counts:
        for key in ("rows_s_wall", "rows_s_steady", "wall_s"):
            median[f"ray_x{n}_{key}"] = statistics.median(r[f"ray_x{n}"][key] for r in rows)
        for key in ("wall_ratio", "steady_ratio"):
            median[f"ray_x{n}_{key}"] = statistics.median(r[f"ray_x{n}_{key}"] for r in rows)
    facts["load_average_after"] = os.getloadavg()
    report = {"args": vars(args) | {"json": str(args.json)}, "machine": facts,
              "device": enc.device, "model": enc.name, "rows": rows, "median": median}  # fmt: skip
    print(json.dumps(median, indent=1))
    write_json(args.json, report)
    shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
