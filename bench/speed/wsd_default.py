"""What a user's first WSD commands cost with no options: the default system, cold and warm.

Each command runs as a user runs it, a new process, its wall time from start to exit:

* ``workbench wsd disambiguate SENTENCE --word WORD`` with an empty ``WORKBENCH_CACHE`` (cold:
  the model loads, the word's candidate glosses are encoded) and again with the cache it left
  (warm), ``--repeats`` times each (a new empty cache for every cold run);
* ``workbench wsd eval`` (ALL, baselines, the default system) cold and warm, once each;
* within one process (the library, as the app uses it): the second ``disambiguate`` call of
  another sentence, after the first, median of ``--repeats``;
* the floor every new process pays before any work of ours: a process that only imports torch and
  transformers' BERT model class, in turn with the cold ``disambiguate`` runs;
* with ``--baseline-model DIR`` (another bi-encoder, e.g. the one shipped before), the same
  ``disambiguate`` and ``eval`` commands with ``--model DIR``, in turn with the default's (A B A B),
  and the ratio default / baseline per pair: a comparison made on one machine at one time.

Both compute dtypes: the machine's default (``auto``: bfloat16 where the CPU has bfloat16
instructions) and float32 (``WORKBENCH_DTYPE=float32``). The baseline for the eval is the
``best`` system's (``--system best``), cold (its index built) and warm, when ``--with-best``.

Run::

    python -m bench run wsd_default --json docs/bench_runs/wsd_default_cpu_2core.json [--with-best]
        [--baseline-model runs/old-shipped]
"""

from __future__ import annotations

import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench.lib.machine import machine_facts
from bench.lib.record import write_json

SENTENCE = "Click the left button of the mouse to open the file."
WORD = "mouse"
IN_PROCESS = """
import sys, time, statistics
from workbench.wsd.disambiguate import disambiguate
from workbench.wsd.systems import open_system
opened = open_system()
first = disambiguate(opened, "He sat on the bank.", "bank")
times = []
for text, word in [("The pitcher threw a fastball.", "pitcher"), ("A crane stood in the marsh.",
                   "crane")] * int(sys.argv[1]):
    t = time.perf_counter()
    disambiguate(opened, text, word)
    times.append(time.perf_counter() - t)
print("SECONDS", statistics.median(times), max(times))
"""


IMPORT_FLOOR = "import torch, transformers; from transformers import BertModel"


def run(argv: list[str], env: dict[str, str]) -> tuple[float, str]:
    """Wall seconds of one command and its standard output (exit 0 required)."""
    t = time.perf_counter()
    done = subprocess.run(argv, env=env, capture_output=True, text=True)
    seconds = time.perf_counter() - t
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(argv)} failed: {done.stderr[-2000:]}")
    return seconds, done.stdout


def workbench(*args: str) -> list[str]:
    return [sys.executable, "-m", "workbench", *args]


def all_f1(out: str) -> float | None:
    """F1 of ALL in a ``wsd eval`` table."""
    match = re.search(r"^ALL\s+[\d.]+\s+[\d.]+\s+([\d.]+)\s", out, re.M)
    return float(match.group(1)) if match else None


def measure(dtype: str, repeats: int, with_best: bool, baseline: Path | None) -> dict:
    env = {**os.environ}
    if dtype == "float32":
        env["WORKBENCH_DTYPE"] = "float32"
    else:
        env.pop("WORKBENCH_DTYPE", None)
    out: dict = {}
    models = {"default": [], **({"baseline": ["--model", str(baseline)]} if baseline else {})}
    cold: dict[str, list[float]] = {name: [] for name in models}
    warm: dict[str, list[float]] = {name: [] for name in models}
    floor: list[float] = []
    printed = ""
    for _ in range(repeats):
        floor.append(run([sys.executable, "-c", IMPORT_FLOOR], env)[0])
        for name, flag in models.items():
            with tempfile.TemporaryDirectory(prefix="wb-wsd-") as cache:
                env["WORKBENCH_CACHE"] = cache
                command = workbench("wsd", "disambiguate", SENTENCE, "--word", WORD, *flag)
                seconds, said = run(command, env)
                cold[name].append(seconds)
                warm[name].append(run(command, env)[0])
                printed = said if name == "default" else printed
    out["import_floor"] = floor
    out["disambiguate"] = {
        "cold": cold["default"], "warm": warm["default"], "answer": printed.splitlines()[:6],
    }  # fmt: skip
    print(f"  {dtype}: disambiguate cold median {statistics.median(cold['default']):.1f} s, warm "
          f"{statistics.median(warm['default']):.1f} s; importing torch and transformers alone "
          f"{statistics.median(floor):.1f} s")  # fmt: skip
    if baseline:
        ratios = [a / b for a, b in zip(cold["default"], cold["baseline"], strict=True)]
        out["disambiguate_baseline"] = {
            "model": str(baseline), "cold": cold["baseline"], "warm": warm["baseline"],
            "cold_ratio_per_pair": ratios,
        }  # fmt: skip
        print(f"  {dtype}: the baseline model cold median {statistics.median(cold['baseline']):.1f}"
              f" s; default / baseline {statistics.median(ratios):.2f}")  # fmt: skip
    systems = ["biencoder", *(["best"] if with_best else [])]
    evals = [(system, [] if system == "biencoder" else ["--system", system]) for system in systems]
    if baseline:
        evals.append(("baseline", ["--model", str(baseline)]))
    for system, flag in evals:
        with tempfile.TemporaryDirectory(prefix="wb-eval-") as cache:
            env["WORKBENCH_CACHE"] = cache
            t_cold, printed = run(workbench("wsd", "eval", *flag), env)
            t_warm, again = run(workbench("wsd", "eval", *flag), env)
        out[f"eval_{system}"] = {
            "cold": t_cold, "warm": t_warm, "all_f1": all_f1(printed),
            "all_f1_warm": all_f1(again), "output": printed[-3000:],
        }  # fmt: skip
        print(f"  {dtype}: wsd eval ({system}) ALL F1 {all_f1(printed)}, cold {t_cold:.0f} s, "
              f"warm {t_warm:.0f} s")  # fmt: skip
    with tempfile.TemporaryDirectory(prefix="wb-lib-") as cache:
        env["WORKBENCH_CACHE"] = cache
        _, printed = run([sys.executable, "-c", IN_PROCESS, str(repeats)], env)
    median, worst = map(float, printed.split("SECONDS", 1)[1].split())
    out["in_process_second_call"] = {"median": median, "max": worst}
    print(f"  {dtype}: in one process, a further sentence: median {median:.2f} s")
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--dtypes", default="auto,float32")
    ap.add_argument("--with-best", action="store_true", help="the best system's eval too")
    ap.add_argument("--json", type=Path, default=None)
    ap.add_argument(
        "--baseline-model",
        type=Path,
        default=None,
        help="another bi-encoder directory, measured in turn with the default",
    )
    args = ap.parse_args()
    results = {"machine": machine_facts(), "sentence": SENTENCE, "word": WORD}
    for dtype in args.dtypes.split(","):
        results[dtype] = measure(dtype, args.repeats, args.with_best, args.baseline_model)
        write_json(args.json, results)


if __name__ == "__main__":
    main()
