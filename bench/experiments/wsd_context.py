"""The bi-encoder's context tower reading the neighbouring sentences too (issue 50, lever 4).

Run:  python -m bench run wsd_context [DIR] [--window 1,2] [--json docs/bench_runs/wsd_context.json]

The framework's evaluation sets keep their documents' sentences in order (ids
``senseval2.d000.s001``), so each instance can be read with the ``W`` sentences before and after
its own, from the same document, in one sequence; the target word's vector is then taken where
it stands in that sequence (``encode_instances(..., context=W)``, as ``wsd eval --context W``).
This is the test-time form of the lever: the model (DIR, default the shipped bi-encoder) was
trained on single sentences. Each window is scored beside window 0 (the sentence alone) on ALL
and its sets, by POS, and on the zero-shot instances against SemCor, as ``bench run
wsd_zero_shot`` counts them. A typed sentence has no neighbours: ``wsd disambiguate`` and the
app do not read any.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from bench.lib.machine import machine_facts
from bench.lib.record import write_json
from workbench.corpora.datasets import load_dataset
from workbench.finetune.tasks.wsd.evaluation import evaluate_wsd_model
from workbench.wsd.biencoder import BiEncoder, shipped_biencoder
from workbench.wsd.predict import encode_instances


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("dir", nargs="?", type=Path, default=None)
    ap.add_argument("--window", default="1", help="sentences on each side, comma-separated")
    ap.add_argument("--json")
    args = ap.parse_args()
    directory = args.dir or shipped_biencoder()
    test, semcor = load_dataset("ALL"), load_dataset("semcor")
    bi = BiEncoder(directory, device="cpu")
    index = bi.index(sorted({(i.lemma, i.pos) for _, i in test.instances()}))
    results = {}
    for window in [0, *(int(w) for w in args.window.split(","))]:
        instances = encode_instances(bi.encoder, test, cache=False, context=window)
        report = evaluate_wsd_model(bi.encoder, index, test, semcor, instances=instances)
        results[window] = report
        sets, zs = report["datasets"], report["zero_shot"]
        print(f"window {window}: " + " ".join(f"{n}={100 * v['f1']:.1f}" for n, v in sets.items())
              + "  " + " ".join(f"{p}={100 * f:.1f}" for p, f in
                                 sorted(sets["ALL"]["by_pos"].items()))
              + f"  zero-shot vs SemCor ({zs['n']})={100 * zs['f1']:.1f}")  # fmt: skip
    if args.json:
        write_json(args.json, {"dir": str(directory), "windows": list(results),
                               "machine": machine_facts(),
                               "results": {str(k): v for k, v in results.items()}})  # fmt: skip


if __name__ == "__main__":
    main()
