"""The bi-encoder's test-time levers (relation smoothing, SemCor sense prior) swept, each alone.

Run::

    python -m bench run wsd_test_time --smoothing 0.1,0.25,0.5,1 --prior 0.05,0.1,0.2 \
        --json docs/bench_runs/wsd_test_time.json

Encodes ALL once with the bi-encoder (the shipped one, or ``--model DIR``) and scores it with
no lever, then with each ``--smoothing`` weight alone and each ``--prior`` weight alone
(:mod:`workbench.wsd.levers`): F1 per dataset (SE07 is the development set: choose the
weight there) and per POS on ALL
(:func:`workbench.finetune.tasks.wsd.evaluation.evaluate_wsd_model`),
the zero-shot instances (none of whose gold senses SemCor tags, the same for every row, as
``bench run wsd_zero_shot`` counts them), and the instances whose gold sense is WordNet's first
sense (MFS) or not (LFS). ``--both S,P`` adds one row with both.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from bench.lib.machine import machine_facts
from bench.lib.record import write_json
from workbench.corpora.datasets import load_dataset
from workbench.finetune.tasks.wsd.evaluation import evaluate_wsd_model
from workbench.lexicon.wordnet import load_wordnet
from workbench.wsd.biencoder import CONTEXT_LAYERS, BiEncoder, shipped_biencoder
from workbench.wsd.builds import semcor_frequencies
from workbench.wsd.levers import NO_LEVERS, TestTimeLevers, with_prior
from workbench.wsd.predict import encode_instances, predict


def _weights(text: str) -> list[float]:
    return [float(w) for w in text.split(",") if w.strip()]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model", type=Path, default=None, help="bi-encoder dir (default: shipped)")
    ap.add_argument("--smoothing", default="0.1,0.25,0.5,1")
    ap.add_argument("--prior", default="0.05,0.1,0.2")
    ap.add_argument("--both", default=None, help="S,P: one more row with both levers")
    ap.add_argument("--json", type=Path, default=None)
    args = ap.parse_args()
    bi = BiEncoder(args.model or shipped_biencoder(), device="cpu")
    wordnet = load_wordnet()
    test = load_dataset("ALL")
    semcor = load_dataset("semcor")
    counts = semcor_frequencies()
    t0 = time.perf_counter()
    instances = encode_instances(bi.encoder, test)
    print(f"encode ALL: {time.perf_counter() - t0:.1f} s", flush=True)
    pairs = sorted({(i.lemma, i.pos) for _, i in test.instances()})
    settings = [NO_LEVERS]  # every row names both weights: a folder's own levers never apply
    settings += [TestTimeLevers(smoothing=w, prior=0.0) for w in _weights(args.smoothing)]
    settings += [TestTimeLevers(smoothing=0.0, prior=w) for w in _weights(args.prior)]
    if args.both:
        s, p = _weights(args.both)
        settings.append(TestTimeLevers(smoothing=s, prior=p))
    rows = []
    for levers in settings:
        t0 = time.perf_counter()
        weights = levers.describe()
        index = bi.index(pairs, wordnet, smoothing=weights["smoothing"])
        index = with_prior(index, counts, weights["prior"])
        built = time.perf_counter() - t0
        report = evaluate_wsd_model(bi.encoder, index, test, semcor, instances=instances)
        preds = predict(index, instances.vectors(CONTEXT_LAYERS), instances.lemmas,
                        instances.pos, backoff=wordnet.first_sense)  # fmt: skip
        split = {"MFS": [0, 0], "LFS": [0, 0]}
        for lemma, pos, gold, p in zip(instances.lemmas, instances.pos, instances.keys, preds):
            group = "MFS" if wordnet.first_sense(lemma, pos) in gold else "LFS"
            split[group][0] += p.key in gold
            split[group][1] += 1
        sets = report["datasets"]
        row = {
            "levers": levers.describe(),
            "label": levers.label,
            "f1": {n: round(100 * d["f1"], 2) for n, d in sets.items()},
            "by_pos": {p: round(100 * f, 2) for p, f in sets["ALL"]["by_pos"].items()},
            "zero_shot": {"n": report["zero_shot"]["n"],
                          "f1": round(100 * report["zero_shot"]["f1"], 2)},
            "mfs_lfs": {g: {"n": n, "f1": round(100 * r / n, 2)} for g, (r, n) in split.items()},
            "index_seconds": round(built, 1),
        }  # fmt: skip
        rows.append(row)
        scores = " ".join(f"{n}={100 * d['f1']:.1f}" for n, d in sets.items())
        print(f"{levers.label:>24}: " + scores
              + "  " + " ".join(f"{p}={v:.1f}" for p, v in sorted(row["by_pos"].items()))
              + f"  zero-shot={row['zero_shot']['f1']:.1f}"
              + f"  MFS={row['mfs_lfs']['MFS']['f1']:.1f} LFS={row['mfs_lfs']['LFS']['f1']:.1f}"
              + f"  (index {built:.1f} s)", flush=True)  # fmt: skip
    write_json(args.json, {"model": str(bi.directory), "machine": machine_facts(),
                           "rows": rows})  # fmt: skip


if __name__ == "__main__":
    main()
