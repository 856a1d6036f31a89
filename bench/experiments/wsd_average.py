"""Two bi-encoders of one recipe averaged (a "model soup"): the mean of their trained layers.

Run:  python -m bench run wsd_average A B OUT [--weight 0.5]

Issue 50's first lever without training: two bi-encoder directories trained on the same frozen
trunk (the same base and ``--top-layers``, e.g. the shipped 48,000-sentence model and the
Z-reweighted run on all 83,482) share every weight but their trained top layers, so their
average is one more bi-encoder of the same size. OUT gets B's files (its card, sense counts and
POS probe) with each tower's ``trained_layers.safetensors`` replaced by ``weight * A + (1 -
weight) * B`` and its ``base_model.json`` rewritten with the new digest; then score it with
``workbench wsd eval ALL --model OUT`` and ``python -m bench run wsd_zero_shot OUT``.
"""

from __future__ import annotations

import argparse
import shutil
from pathlib import Path

import numpy as np

from workbench.encoding.adapters import (
    LAYER_WEIGHTS,
    read_base_record,
    write_base_record,
)
from workbench.wsd.biencoder import GLOSS_ENCODER

#: The two towers' folders inside a bi-encoder directory: the context tower's is the top one.
TOWERS = ("", GLOSS_ENCODER)


def average(a: Path, b: Path, out: Path, weight: float) -> None:
    """Write the average of bi-encoders ``a`` and ``b`` to ``out`` (a new folder)."""
    from safetensors.numpy import load_file, save_file

    if out.exists():
        raise SystemExit(f"{out} exists: give a new folder")
    shutil.copytree(b, out)
    for tower in TOWERS:
        first, second = load_file(a / tower / LAYER_WEIGHTS), load_file(b / tower / LAYER_WEIGHTS)
        if first.keys() != second.keys():
            raise SystemExit(f"{a} and {b} trained other layers ({tower or 'context'} tower)")
        mean = {k: (weight * first[k].astype(np.float64) + (1 - weight) * second[k]).astype(
            first[k].dtype) for k in first}  # fmt: skip
        save_file(mean, str(out / tower / LAYER_WEIGHTS))
        record = read_base_record(out / tower)
        if record.fingerprint != read_base_record(a / tower).fingerprint:
            raise SystemExit(f"{a} and {b} were trained on other base models")
        write_base_record(out / tower, record.name, record.packaged, record.fingerprint)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("a", type=Path)
    ap.add_argument("b", type=Path)
    ap.add_argument("out", type=Path)
    ap.add_argument("--weight", type=float, default=0.5, help="A's share (default 0.5)")
    args = ap.parse_args()
    average(args.a, args.b, args.out, args.weight)
    print(f"{args.out}: {args.weight} x {args.a} + {1 - args.weight:g} x {args.b}")


if __name__ == "__main__":
    main()
