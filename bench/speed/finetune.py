"""Benchmark: training throughput of full fine-tuning vs freezing vs LoRA, same process.

Run:  python -m bench run finetune [--pairs 256] [--repeats 3] [--device cpu|cuda]

One epoch of the built-in word-in-context pair task (the first N training pairs, batch 16,
max_length 128, no dev set) with the default model, for each configuration in turn, repeated;
the loop's own epoch timer is read from the training card (model loading and tokenization are
not counted). Prints the median pairs/s of each and its ratio to full fine-tuning (the plain
baseline). Configurations: full; embeddings + lowest 3 layers frozen; LoRA r=8 (base frozen).
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time

from workbench.finetune.data.splits import builtin_data
from workbench.finetune.tasks.registry import finetune
from workbench.finetune.training.config import TrainConfig

CONFIGS = {
    "full fine-tuning (baseline)": {},
    "embeddings + 3 lowest layers frozen": {"freeze_embeddings": True, "freeze_layers": 3},
    "LoRA r=8": {"lora_r": 8},
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pairs", type=int, default=256)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--device", default=None)
    args = parser.parse_args()

    data = builtin_data("wic", limits=(args.pairs, None, None))
    rates: dict[str, list[float]] = {name: [] for name in CONFIGS}
    trainable: dict[str, int] = {}
    for repeat in range(args.repeats):
        for name, options in CONFIGS.items():
            cfg = TrainConfig(
                epochs=1, batch_size=16, max_length=128, device=args.device, **options
            )
            with tempfile.TemporaryDirectory() as out:
                t0 = time.process_time()
                result = finetune("pair", data.train, None, cfg, out, progress=False)
                cpu = time.process_time() - t0
            seconds = result.card["epochs"][0]["seconds"]
            rates[name].append(args.pairs / seconds)
            trainable[name] = result.card["parameters"]["trainable"]
            print(
                f"repeat {repeat + 1}: {name}: {seconds:.1f} s for {args.pairs} pairs "
                f"({args.pairs / seconds:.1f} pairs/s; process CPU incl. loading {cpu:.1f} s)",
                flush=True,
            )
    base = statistics.median(rates["full fine-tuning (baseline)"])
    print(f"\nmedians over {args.repeats} repeats, device {result.card['device']}:")
    print("| configuration | trainable parameters | pairs/s | ratio to full |")
    print("| --- | ---: | ---: | ---: |")
    for name, values in rates.items():
        med = statistics.median(values)
        print(f"| {name} | {trainable[name]:,} | {med:.1f} | {med / base:.2f}x |")


if __name__ == "__main__":
    main()
