"""Two bi-encoders of one recipe averaged (a "model soup"): the mean of their trained layers.

Run:  python -m bench run wsd_average A B OUT [--weight 0.5]

A may be ``start``: the layers B's towers started from (the packaged model's own), so that
``--weight 0.15`` is B moved 15% of the way back to where its training began (WiSE-FT,
Wortsman et al. 2022: the fine-tuned weights interpolated with the pre-trained ones).

Issue 50's first lever without training: two bi-encoder directories trained on the same frozen
trunk (the same base and ``--top-layers``, e.g. the shipped 48,000-sentence model and the
Z-reweighted run on all 83,482) share every weight but their trained top layers, so their
average is one more bi-encoder of the same size. OUT gets B's files (its card, sense counts and
POS probe) with each tower's ``trained_layers.safetensors`` replaced by ``weight * A + (1 -
weight) * B`` and its ``base_model.json`` rewritten with the new digest; then score it with
``workbench wsd eval ALL --model OUT`` and ``python -m bench run wsd_zero_shot OUT``.

``--score`` makes OUT's training card the average's own: its ``test`` and ``wsd_eval`` (F1 on
the card's built-in test data per dataset and POS, the zero-shot instances of the card's
training data, before test-time levers) scored through the averaged model as a training run
scores its own, and an ``average`` entry naming both runs (command, training seconds, F1) and
the weight. Without it the card is B's, scores included.
"""

from __future__ import annotations

import argparse
import json
import shutil
from pathlib import Path

import numpy as np

from workbench.encoding.adapters import (
    LAYER_WEIGHTS,
    read_base_record,
    write_base_record,
)
from workbench.encoding.models import default_model_path
from workbench.finetune.data.splits import builtin_data
from workbench.finetune.tasks.wsd.evaluation import corpus_of, evaluate_wsd_model
from workbench.lexicon.wordnet import load_wordnet
from workbench.wsd.biencoder import GLOSS_ENCODER, BiEncoder
from workbench.wsd.disambiguate import instance_lemmas
from workbench.wsd.predict import encode_instances

#: The two towers' folders inside a bi-encoder directory: the context tower's is the top one.
TOWERS = ("", GLOSS_ENCODER)


#: The name of A that stands for the layers B started from.
START = Path("start")


def _start_layers(b: Path, tower: str, keys: list[str]) -> dict[str, np.ndarray]:
    """The packaged model's own weights of ``keys``: what B's ``tower`` was trained from."""
    from safetensors.numpy import load_file

    if not read_base_record(b / tower).packaged:
        raise SystemExit(f"{b} was not trained from the packaged model: 'start' needs it")
    base = load_file(str(default_model_path() / "model.safetensors"))
    return {k: base[k] for k in keys}


def average(a: Path, b: Path, out: Path, weight: float) -> None:
    """Write the average of bi-encoders ``a`` and ``b`` to ``out`` (a new folder); ``a`` may
    be :data:`START`."""
    from safetensors.numpy import load_file, save_file

    if out.exists():
        raise SystemExit(f"{out} exists: give a new folder")
    shutil.copytree(b, out)
    for tower in TOWERS:
        second = load_file(b / tower / LAYER_WEIGHTS)
        first = (_start_layers(b, tower, list(second)) if a == START
                 else load_file(a / tower / LAYER_WEIGHTS))  # fmt: skip
        if first.keys() != second.keys():
            raise SystemExit(f"{a} and {b} trained other layers ({tower or 'context'} tower)")
        mean = {k: (weight * first[k].astype(np.float64) + (1 - weight) * second[k]).astype(
            first[k].dtype) for k in first}  # fmt: skip
        save_file(mean, str(out / tower / LAYER_WEIGHTS))
        record = read_base_record(out / tower)
        if a != START and record.fingerprint != read_base_record(a / tower).fingerprint:
            raise SystemExit(f"{a} and {b} were trained on other base models")
        write_base_record(out / tower, record.name, record.packaged, record.fingerprint)


def score(a: Path, b: Path, out: Path, weight: float) -> dict:
    """Write OUT's card as the average's own (see the module docstring); returns it."""
    named = ((("a", a),) if a != START else ()) + (("b", b), ("out", out))
    cards = {name: json.loads((d / "training_card.json").read_text(encoding="utf-8"))
             for name, d in named}  # fmt: skip
    card = cards["out"]
    built = card["builtin"]
    data = builtin_data(built["name"], seed=built["seed"])
    train, test = corpus_of(data.train), corpus_of(data.test)
    wordnet = load_wordnet()
    bi = BiEncoder(out, device="cpu")
    instances = encode_instances(bi.encoder, test, cache=False)
    index = bi.index(instance_lemmas(instances, wordnet), wordnet)
    report = evaluate_wsd_model(bi.encoder, index, test, train, instances)
    whole = list(report["datasets"].values())[-1]
    card["wsd_eval"] = report
    card["test"] = {"f1": whole["f1"], "n_instances": float(whole["n"])}
    card["average"] = {
        "weight_a": weight,
        "command": f"python -m bench run wsd_average {a} {b} {out} --weight {weight:g} --score",
        "runs": {k: {"command": c["command"], "train_seconds": c["train_seconds"],
                     "test": c.get("test")} for k, c in cards.items() if k != "out"},
        "note": "the mean of two runs' trained layers; 'test' and 'wsd_eval' are the average's, "
                "the rest of this card (options, epochs, throughput) is run b's",
    }  # fmt: skip
    (out / "training_card.json").write_text(json.dumps(card, indent=2) + "\n", encoding="utf-8")
    return card


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("a", type=Path)
    ap.add_argument("b", type=Path)
    ap.add_argument("out", type=Path)
    ap.add_argument("--weight", type=float, default=0.5, help="A's share (default 0.5)")
    ap.add_argument("--score", action="store_true", help="score it and write its own card")
    args = ap.parse_args()
    average(args.a, args.b, args.out, args.weight)
    print(f"{args.out}: {args.weight} x {args.a} + {1 - args.weight:g} x {args.b}")
    if args.score:
        card = score(args.a, args.b, args.out, args.weight)
        f1s = {n: round(100 * d["f1"], 1) for n, d in card["wsd_eval"]["datasets"].items()}
        print(f"F1 {f1s}; zero-shot {100 * card['wsd_eval']['zero_shot']['f1']:.1f}")


if __name__ == "__main__":
    main()
