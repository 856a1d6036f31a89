"""ONNX Runtime against torch, in one run: new processes' answers, encoding throughput, the first
use of a model (its export), and whether the two give the same answers.

Parts (``--parts``, all by default):

* ``cli``: new processes, interleaved, ``--repeats`` times each, the medians reported:
  ``workbench wsd disambiguate "She sat on the bank and watched the river." --word bank`` on
  the default backend (ONNX Runtime on a CPU) and with ``--backend torch``; ``workbench --help``;
  the floor, ``python -c pass``. Warm disk cache (the exports and the gloss vectors made by a
  first, untimed run of each).
* ``eval``: ``workbench wsd eval`` (ALL, the default system) on both backends, new processes.
* ``throughput``: one process, a batch of 64 x 40 tokens (random ids from the vocabulary),
  ``--repeats`` passes each after a warm-up: torch float32, torch bfloat16, ONNX Runtime
  float32 and int8 (``--dtype int8``) (tokens a second).
* ``first``: the packaged model's first use with an empty cache (the export made and checked)
  against a torch load, new processes.
* ``agree``: in one process, ALL scored by the default system on both backends and on ONNX
  Runtime in int8, each with an empty cache (every context and gloss vector computed by that
  backend): F1 of each (per dataset) and the share of instances whose chosen sense is the same
  as float32 ONNX Runtime's; the hidden states of the README's two sentences, largest relative
  difference (torch / ONNX Runtime float32) and cosines (int8 / float32).

Run::

    python -m bench run backends --repeats 5 --json docs/bench_runs/backends_cpu_2core.json
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

import numpy as np

from bench.lib.machine import machine_facts
from bench.lib.record import write_json
from workbench import Encoder
from workbench.corpora.datasets import load_dataset
from workbench.lexicon.wordnet import load_wordnet
from workbench.wsd.evaluate import evaluate_corpus
from workbench.wsd.systems import open_system

SENTENCE = "She sat on the bank and watched the river."
PARTS = ("cli", "eval", "throughput", "first", "agree")


def timed(argv: list[str], env: dict[str, str] | None = None) -> float:
    """Wall seconds of one new process (its output discarded); raises if it fails."""
    t = time.perf_counter()
    subprocess.run(argv, check=True, capture_output=True, env=env, timeout=1200)
    return time.perf_counter() - t


def workbench(*args: str) -> list[str]:
    return [sys.executable, "-m", "workbench", *args]


def medians(commands: dict[str, list[str]], repeats: int) -> dict[str, dict[str, Any]]:
    """Each command run ``repeats`` times, interleaved: median, min, max and every time."""
    times: dict[str, list[float]] = {name: [] for name in commands}
    for _ in range(repeats):
        for name, argv in commands.items():
            times[name].append(timed(argv))
    return {
        name: {"median_s": statistics.median(ts), "min_s": min(ts), "max_s": max(ts), "runs": ts}
        for name, ts in times.items()
    }


def cli_part(repeats: int) -> dict[str, Any]:
    commands = {
        "floor: python -c pass": [sys.executable, "-c", "pass"],
        "workbench --help": workbench("--help"),
        "disambiguate (default: onnx)": workbench(
            "wsd", "disambiguate", SENTENCE, "--word", "bank"
        ),
        "disambiguate --backend torch": workbench(
            "wsd", "disambiguate", SENTENCE, "--word", "bank", "--backend", "torch"
        ),
    }
    for argv in commands.values():  # warm: exports, gloss vectors, the OS's file cache
        timed(argv)
    out = medians(commands, repeats)
    out["ratio torch / onnx"] = (
        out["disambiguate --backend torch"]["median_s"]
        / out["disambiguate (default: onnx)"]["median_s"]
    )
    return out


def eval_part(repeats: int) -> dict[str, Any]:
    commands = {
        "wsd eval (default: onnx)": workbench("wsd", "eval"),
        "wsd eval --backend torch": workbench("wsd", "eval", "--backend", "torch"),
    }
    for argv in commands.values():
        timed(argv)
    return medians(commands, repeats)


def throughput_part(repeats: int) -> dict[str, Any]:
    import torch

    rng = np.random.default_rng(0)
    ids = rng.integers(1000, 20000, size=(64, 40)).astype(np.int64)
    ids[:, 0], ids[:, -1] = 101, 102
    mask = np.ones_like(ids)
    runs: dict[str, list[float]] = {}
    onnx = Encoder(device="cpu", backend="onnx")
    for dtype in ("float32", "bfloat16"):
        enc = Encoder(device="cpu", backend="torch", dtype=dtype)  # type: ignore[arg-type]
        model = enc.model

        def forward(m=model) -> None:
            with torch.inference_mode():
                m(
                    input_ids=torch.from_numpy(ids),
                    attention_mask=torch.from_numpy(mask),
                    output_hidden_states=True,
                )

        runs[f"torch {dtype}"] = []
        forward()
        for _ in range(repeats):
            t = time.perf_counter()
            forward()
            runs[f"torch {dtype}"].append(ids.size / (time.perf_counter() - t))
    quick = Encoder(device="cpu", dtype="int8")
    for name, enc in (("onnx float32", onnx), ("onnx int8", quick)):
        assert enc.onnx is not None
        runs[name] = []
        enc.onnx.hidden_states(ids, mask)
        for _ in range(repeats):
            t = time.perf_counter()
            enc.onnx.hidden_states(ids, mask)
            runs[name].append(ids.size / (time.perf_counter() - t))
    out: dict[str, Any] = {
        name: {"median_tokens_per_s": statistics.median(v), "runs": v} for name, v in runs.items()
    }
    best_torch = max(out["torch float32"]["median_tokens_per_s"],
                     out["torch bfloat16"]["median_tokens_per_s"])  # fmt: skip
    out["ratio onnx / best torch"] = out["onnx float32"]["median_tokens_per_s"] / best_torch
    out["ratio onnx int8 / best torch"] = out["onnx int8"]["median_tokens_per_s"] / best_torch
    out["batch"] = list(ids.shape)
    out["torch_threads"] = torch.get_num_threads()
    return out


def first_part(repeats: int) -> dict[str, Any]:
    """The packaged model's first use: an empty cache each time."""
    code = "from workbench import Encoder; Encoder(device='cpu'{})"
    times: dict[str, list[float]] = {"first use, export made (onnx)": [], "torch load": []}
    for _ in range(repeats):
        for name, extra in (
            ("first use, export made (onnx)", ""),
            ("torch load", ", backend='torch'"),
        ):
            with tempfile.TemporaryDirectory() as cache:
                env = {**os.environ, "WORKBENCH_CACHE": cache}
                times[name].append(timed([sys.executable, "-c", code.format(extra)], env))
    return {name: {"median_s": statistics.median(v), "runs": v} for name, v in times.items()}


def agree_part() -> dict[str, Any]:

    sentences = ["He sat on the bank of the river.", "She robbed the bank."]
    a = Encoder(device="cpu", backend="onnx").encode(sentences).vectors
    b = Encoder(device="cpu", backend="torch", dtype="float32").encode(sentences).vectors
    relative = max(
        float(np.abs(a[:, k] - b[:, k]).max() / np.abs(b[:, k]).max()) for k in range(a.shape[1])
    )
    wordnet = load_wordnet()
    corpus = load_dataset("ALL")
    q = Encoder(device="cpu", dtype="int8").encode(sentences).vectors
    cosine = (q * a).sum(-1) / (np.linalg.norm(q, axis=-1) * np.linalg.norm(a, axis=-1))
    results = {}
    before = os.environ.get("WORKBENCH_CACHE")
    for backend, dtype in (("onnx", "float32"), ("torch", "float32"), ("onnx int8", "int8")):
        # an empty cache each: every context and gloss vector computed by this backend
        with tempfile.TemporaryDirectory() as cache:
            os.environ["WORKBENCH_BACKEND"] = backend.split()[0]
            os.environ["WORKBENCH_CACHE"] = cache
            try:
                system = open_system("biencoder", dtype=dtype, wordnet=wordnet)  # type: ignore[arg-type]
                run = evaluate_corpus(system, corpus, wordnet, baselines=False)
            finally:
                os.environ.pop("WORKBENCH_BACKEND", None)
                if before is None:
                    os.environ.pop("WORKBENCH_CACHE", None)
                else:
                    os.environ["WORKBENCH_CACHE"] = before
        results[backend] = run.evaluation
    keys = {b: {i: p.key for i, p in e.predictions.items()} for b, e in results.items()}
    same = sum(keys["onnx"][i] == keys["torch"].get(i) for i in keys["onnx"])
    same_int8 = sum(keys["onnx"][i] == keys["onnx int8"].get(i) for i in keys["onnx"])
    return {
        "hidden_states_max_relative_difference": relative,
        "int8 against float32 (onnx), cosine per word and layer": {
            "mean": float(cosine.mean()),
            "min": float(cosine.min()),
            "min per layer": [float(c) for c in cosine.min(0)],
        },
        "all_f1": {b: e.datasets[-1].system.f1 for b, e in results.items()},
        "f1_per_dataset": {
            b: {d.name: d.system.f1 for d in e.datasets} for b, e in results.items()
        },
        "instances": len(keys["onnx"]),
        "same_top_sense": same,
        "same_top_sense_share": same / max(len(keys["onnx"]), 1),
        "same_top_sense int8 / float32 onnx": same_int8,
        "same_top_sense_share int8 / float32 onnx": same_int8 / max(len(keys["onnx"]), 1),
    }


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--parts", nargs="+", choices=PARTS, default=list(PARTS))
    ap.add_argument("--json", default=None)
    args = ap.parse_args(argv)
    out: dict[str, Any] = {"machine": machine_facts(), "repeats": args.repeats}
    for part in args.parts:
        print(f"-- {part}", flush=True)
        if part == "cli":
            out[part] = cli_part(args.repeats)
        elif part == "eval":
            out[part] = eval_part(max(1, args.repeats // 2))
        elif part == "throughput":
            out[part] = throughput_part(args.repeats)
        elif part == "first":
            out[part] = first_part(max(1, args.repeats // 2))
        else:
            out[part] = agree_part()
        print(out[part], flush=True)
    write_json(args.json, out)


if __name__ == "__main__":
    main()
