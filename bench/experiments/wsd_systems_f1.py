"""Record the F1 on ALL of the WSD systems in the package, copied from the raw run records.

Run:  python -m bench run wsd_systems_f1            # rewrite the package file from its sources
      python -m bench run wsd_systems_f1 --check    # exit 1 when a figure differs from its source
      python -m bench run wsd_systems_f1 --add best f412054b280245dd float32 \\
          docs/bench_runs/RUN.json /datasets/ALL/system/F1 --command "workbench wsd eval ..."

``workbench/wsd/results/systems_f1.json`` (:data:`workbench.wsd.presets.RESULTS_FILE`) is what
:mod:`workbench.wsd.presets` shows a user as each system's F1 on ALL (per model fingerprint
and compute dtype), and the first-sense baseline it is compared with. Every figure in it names
its source: a raw JSON record of a run (``workbench wsd eval --json``, ``workbench wsd
layers --json``, ``bench/experiments/precision.py --wsd ... --json``), the JSON pointer of the
number in it, and the command that wrote it. This script copies each number from its source exactly
(``--add`` records a new one); the bi-encoder's figure is not here: it is read from the
shipped model's training card.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from bench.lib.record import write_json
from workbench.wsd.presets import RESULTS_FILE

ROOT = Path(__file__).resolve().parents[2]


def pointed(data: Any, pointer: str) -> float:
    """The number at a JSON pointer (``/datasets/ALL/system/F1``; list items by index)."""
    for part in pointer.strip("/").split("/"):
        data = data[int(part)] if isinstance(data, list) else data[part]
    return float(data)


def copy_figures(recorded: dict) -> dict:
    """``recorded`` with every ``f1_all`` copied from its source record."""
    for entry in [*recorded["runs"], *recorded["baselines"].values()]:
        source = json.loads((ROOT / entry["source"]).read_text(encoding="utf-8"))
        entry["f1_all"] = pointed(source, entry["pointer"])
    return recorded


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--check", action="store_true", help="compare, do not write")
    ap.add_argument(
        "--add", nargs=5, metavar=("SYSTEM", "FINGERPRINT", "DTYPE", "SOURCE", "POINTER")
    )
    ap.add_argument("--model", default="", help="the model's name, for --add")
    ap.add_argument("--command", default="", help="the command that wrote SOURCE, for --add")
    args = ap.parse_args()
    recorded = json.loads(RESULTS_FILE.read_text(encoding="utf-8"))
    before = json.dumps(recorded, sort_keys=True)
    if args.add:
        system, fingerprint, dtype, source, pointer = args.add
        key = (system, fingerprint, dtype)
        runs = [r for r in recorded["runs"] if (r["system"], r["fingerprint"], r["dtype"]) != key]
        runs.append({"system": system, "model": args.model, "fingerprint": fingerprint,
                     "dtype": dtype, "f1_all": None, "source": source, "pointer": pointer,
                     "command": args.command})  # fmt: skip
        recorded["runs"] = runs
    copy_figures(recorded)
    if args.check:
        same = json.dumps(recorded, sort_keys=True) == before
        print("the recorded figures match their sources" if same else "figures differ")
        return 0 if same else 1
    write_json(RESULTS_FILE, recorded)
    print(f"wrote {RESULTS_FILE}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
