"""F1 of WSD bi-encoders on ALL, per dataset and POS, and on the same zero-shot instances for all.

Run:  python -m bench run wsd_zero_shot [DIR ...] [--json docs/bench_runs/wsd_zero_shot.json]

A training run's card counts as zero-shot the test instances none of whose gold senses occurs
in *its* training data, so a model trained on SemCor and WordNet's usage examples is scored on
fewer, different instances than one trained on SemCor alone. This script scores each bi-encoder
directory (none given: the one the package ships) on ALL, with the zero-shot view taken against
SemCor for every model: the instances whose senses SemCor never tags.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from bench.lib.machine import machine_facts
from bench.lib.record import write_json
from workbench.corpora.datasets import load_dataset
from workbench.finetune.tasks.wsd.evaluation import evaluate_wsd_model
from workbench.wsd.biencoder import BiEncoder, shipped_biencoder


def score(directory: Path) -> dict:
    """The report of :func:`evaluate_wsd_model` for one bi-encoder directory, F1 in %."""
    test = load_dataset("ALL")
    bi = BiEncoder(directory, device="cpu")
    pairs = sorted({(i.lemma, i.pos) for _, i in test.instances()})
    report = evaluate_wsd_model(bi.encoder, bi.index(pairs), test, load_dataset("semcor"))
    return report


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("dirs", nargs="*", type=Path)
    ap.add_argument("--json")
    args = ap.parse_args()
    dirs = args.dirs or [shipped_biencoder()]
    results = {}
    for directory in dirs:
        report = score(directory)
        results[str(directory)] = report
        sets = report["datasets"]
        row = [f"{100 * sets[n]['f1']:.1f}" for n in sets]
        pos = sets["ALL"]["by_pos"]
        zs = report["zero_shot"]
        print(
            f"{directory}: " + " ".join(f"{n}={v}" for n, v in zip(sets, row, strict=True))
            + "  " + " ".join(f"{p}={100 * f:.1f}" for p, f in sorted(pos.items()))
            + f"  zero-shot vs SemCor ({zs['n']})={100 * zs['f1']:.1f}"
        )  # fmt: skip
    if args.json:
        write_json(args.json, {"args": [str(d) for d in dirs], "machine": machine_facts(),
                               "results": results})  # fmt: skip


if __name__ == "__main__":
    main()
