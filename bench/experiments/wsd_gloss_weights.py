"""The gloss weight of a trained WSD bi-encoder's combined index, chosen on the dev set, from the
command line.

Run:  python -m bench run wsd_gloss_weights runs/wsd-glosses-30k [MODEL ...] [--system best]
                  [--train semcor,semcor+examples] [--weights 0.3,0.4,0.5,0.6,0.7]
                  [--json docs/bench_runs/wsd_examples_weights.json]

For every model, training corpus and weight it runs ``workbench wsd eval ALL --model MODEL
--system SYSTEM --train CORPUS --gloss concat --gloss-pooling trained --gloss-weight W`` (the
tuned context encoder's centroids concatenated with the model's own trained gloss vectors;
``--system best`` adds lexname propagation) in a subprocess, reads its JSON report and keeps F1
per dataset of ALL. The weight of each (model, corpus) is the one with the highest F1 on
SemEval-2007 (the framework's dev set, part of ALL), the first on a tie; the F1 on ALL at that
weight is the result, the best F1 on ALL at any weight is shown beside it for the record only
(chosen on the test data, it is not a result). Quality only: each cell's wall time is recorded
(the first cell of a model and corpus includes encoding it with the tuned encoder, later cells
read the encodings from the cache).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench.lib.machine import machine_facts
from bench.lib.record import write_json

DEV = "semeval2007"


def cell(model: str, system: str, train: str, weight: float) -> dict:
    """One ``workbench wsd eval`` run: its command, F1 per dataset (percent) and wall time."""
    with tempfile.TemporaryDirectory() as tmp:
        report = Path(tmp) / "report.json"
        cmd = [sys.executable, "-m", "workbench", "wsd", "eval", "ALL", "--model", model,
               "--system", system, "--train", train, "--gloss", "concat", "--gloss-pooling",
               "trained", "--gloss-weight", f"{weight:g}", "--no-baselines", "--json",
               str(report)]  # fmt: skip
        t = time.perf_counter()
        done = subprocess.run(cmd, capture_output=True, text=True)
        seconds = time.perf_counter() - t
        if done.returncode != 0:
            raise SystemExit(f"{' '.join(cmd[2:])} failed:\n{done.stderr}")
        data = json.loads(report.read_text())
    f1 = {name: d["system"]["F1"] for name, d in data["datasets"].items()}
    return {
        "command": "workbench " + " ".join(cmd[3:-2]),
        "gloss_weight": weight,
        "f1": f1,
        "seconds": round(seconds, 1),
        "trained_on": data["config"]["index"]["training"]["corpus"],
    }


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("models", nargs="+", help="model directories of `workbench finetune wsd`")
    ap.add_argument("--system", default="best", choices=("best", "plain"))
    ap.add_argument("--train", default="semcor,semcor+examples", help="training corpora")
    ap.add_argument("--weights", default="0.3,0.4,0.5,0.6,0.7", help="gloss weights")
    ap.add_argument("--json", type=Path, default=None)
    args = ap.parse_args()
    weights = [float(w) for w in args.weights.split(",")]
    out: dict = {"what": __doc__.split("\n\n")[2].replace("\n", " "), "models": {}}
    for model in args.models:
        rows = out["models"][model] = {}
        for train in args.train.split(","):
            runs = []
            for weight in weights:
                runs.append(cell(model, args.system, train, weight))
                f1 = runs[-1]["f1"]
                print(f"{model} {train} w={weight:g}: {DEV} {f1[DEV]:.1f}, ALL {f1['ALL']:.1f} "
                      f"({runs[-1]['seconds']:.0f} s)", file=sys.stderr, flush=True)  # fmt: skip
            chosen = max(runs, key=lambda r: r["f1"][DEV])  # the first of the best on a tie
            rows[train] = {
                "dev_choice": {"gloss_weight": chosen["gloss_weight"], "f1": chosen["f1"]},
                "best_all_any_weight": max(r["f1"]["ALL"] for r in runs),
                "runs": runs,
            }
    out["machine"] = machine_facts()
    summary = {
        f"{model} {train}": (row["dev_choice"]["gloss_weight"], row["dev_choice"]["f1"][DEV],
                             row["dev_choice"]["f1"]["ALL"])
        for model, rows in out["models"].items() for train, row in rows.items()
    }  # fmt: skip
    print(json.dumps(summary, indent=1))
    write_json(args.json, out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
