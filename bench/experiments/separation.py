"""Per-layer sense separation of a dozen ambiguous words, raw and z-scored, for docs/results.md.

Run:  python -m bench run separation [--models minilm mpnet] [--limit 200] [--summary-only]

For each model it runs ``workbench senses separation`` (the same library calls) on the SemCor
occurrences of the words (a seeded sample of at most ``--limit`` per word), z-scores fitted per
layer on a seeded 500-sentence SemCor sample, and writes the table with its settings to
``docs/bench_runs/separation_<model>.json``. Then it prints, from those files, the Markdown
tables of docs/results.md: per word where each measure peaks, and the mean over words per layer.
``--summary-only`` prints the tables from the files already written.
"""

from __future__ import annotations

import argparse
import json
import math
import statistics
import sys
import time
from pathlib import Path

from workbench.cli.main import main as workbench
from workbench.encoding.extra_models import fetch_mpnet

REPO = Path(__file__).resolve().parents[2]
RUNS = REPO / "docs" / "bench_runs"
WORDS = ("bank", "bass", "die", "play", "cell", "plant", "spring", "match", "star", "interest",
         "court", "key")  # fmt: skip


def run(model: str, limit: int, out: Path) -> None:
    args = ["senses", "separation", *WORDS, "--source", "semcor", "--limit", str(limit),
            "--correction", "zscore", "--reference", "semcor", "--reference-sample", "500",
            "--device", "cpu", "--json", str(out)]  # fmt: skip
    if model == "mpnet":
        args += ["--model", str(fetch_mpnet())]
    start = time.perf_counter()
    code = workbench(args)
    if code:
        raise SystemExit(code)
    print(f"{model}: {time.perf_counter() - start:.0f} s", file=sys.stderr)


def _fmt(v: float | None, pct: bool = False) -> str:
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return "undefined"
    return f"{100 * v:.1f}" if pct else f"{v:.3f}"


def summary(path: Path) -> str:
    doc = json.loads(path.read_text())
    settings, rows = doc["settings"], doc["rows"]
    layers = list(dict.fromkeys(r["layer"] for r in rows))
    out = [f"**{settings['model']}** (fingerprint `{settings['fingerprint'][:12]}`), "
           f"{len(layers)} hidden states\n"]  # fmt: skip
    out += ["| word | occ. | senses (>= 2 occ.) | 1-NN chance | silhouette peak raw / z | "
            "1-NN peak raw / z |", "| --- | ---: | ---: | ---: | --- | --- |"]  # fmt: skip
    for word in settings["data"]["lemmas"]:
        mine = [r for r in rows if r["word"] == word]
        counts = settings["data"]["senses"][word]
        cells = []
        for measure in ("silhouette", "nn_accuracy"):
            parts = []
            for c in ("none", "zscore"):
                vals = [(r[measure], r["layer"]) for r in mine if r["correction"] == c
                        and r[measure] is not None]  # fmt: skip
                if not vals:
                    parts.append("undefined")
                    continue
                best, at = max(vals, key=lambda t: t[0])
                parts.append(f"{_fmt(best, measure == 'nn_accuracy')} @ {at}")
            cells.append(" / ".join(parts))
        chance = next((r["chance"] for r in mine if r["chance"] is not None), None)
        out.append(f"| {word} | {sum(counts.values())} | {sum(n >= 2 for n in counts.values())} "
                   f"| {_fmt(chance, True)} | {cells[0]} | {cells[1]} |")  # fmt: skip
    out += ["", "| hidden state | silhouette raw | silhouette z | 1-NN raw | 1-NN z |",
            "| --- | ---: | ---: | ---: | ---: |"]  # fmt: skip
    for layer in layers:
        means = []
        for measure in ("silhouette", "nn_accuracy"):
            for c in ("none", "zscore"):
                vals = [r[measure] for r in rows if r["layer"] == layer and r["correction"] == c
                        and r[measure] is not None]  # fmt: skip
                means.append(_fmt(statistics.mean(vals) if vals else None,
                                  measure == "nn_accuracy"))  # fmt: skip
        out.append(f"| {layer} | " + " | ".join(means) + " |")
    return "\n".join(out) + "\n"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--models", nargs="+", choices=("minilm", "mpnet"), default=["minilm", "mpnet"])
    ap.add_argument("--limit", type=int, default=200, help="at most this many occurrences a word")
    ap.add_argument("--summary-only", action="store_true")
    args = ap.parse_args()
    for model in args.models:
        path = RUNS / f"separation_{model}.json"
        if not args.summary_only:
            run(model, args.limit, path)
        print(summary(path))
    return 0


if __name__ == "__main__":
    sys.exit(main())
