"""Choose a LoRA bi-encoder's rank, learning rate and target modules by the dev set (SE07).

Trains one WSD bi-encoder per configuration on the same seeded SemCor sample (``--train``
sentences, the built-in split), selects on SemEval-2007 as every run does, and records each
run's dev F1, its training time and the size of what it saves (the adapters). A configuration is
``name:option=value;option=value`` with the options of ``workbench finetune wsd`` (TrainConfig
fields); what it measured: docs/results.md, "The default: the bi-encoder shipped with the
package".

Run::

    python -m bench run wsd_lora --train 2000 --json docs/bench_runs/wsd_lora_sweep.json \\
        --config "r16-qv-5e-4:lora_r=16;lr=5e-4" --config "full-2e-4:lora_r=0;lr=2e-4"

The runs are kept in ``--out`` (one directory each); a configuration whose run directory already
holds a finished model is read back, not trained again, so a stopped sweep goes on where it was.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path
from typing import Any

from bench.lib.machine import machine_facts
from bench.lib.record import write_json
from workbench.finetune.data.splits import builtin_data
from workbench.finetune.tasks.registry import finetune
from workbench.finetune.tasks.wsd.options import WsdOptions
from workbench.finetune.training.config import TrainConfig, option_fields

#: The options every run shares (a CPU-sized version of the GPU recipe): mean-pooled glosses
#: of definitions cut to 32 subwords, batches of 8 sentences, one epoch.
COMMON = {
    "epochs": 1,
    "batch_size": 8,
    "head_pooling": "mean",
    "gloss_max_length": 32,
    "wsd_index": "data",
}
ALL_LINEAR = "query,key,value,dense"
DEFAULT_CONFIGS = [
    f"r16-all-{lr}:lora_r=16;lora_alpha=32;lora_targets={ALL_LINEAR};lr={lr};freeze_glosses=1"
    for lr in ("5e-4", "1e-3", "2e-3")
]


def parse_config(text: str) -> tuple[str, dict[str, Any]]:
    """``name:option=value;option=value`` -> (name, {option: typed value})."""
    name, _, rest = text.partition(":")
    fields = {f.name: f for f in (*option_fields(TrainConfig), *option_fields(WsdOptions))}
    options: dict[str, Any] = {}
    for part in filter(None, rest.split(";")):
        key, _, value = part.partition("=")
        if key not in fields:
            raise SystemExit(f"{text}: unknown option {key!r}")
        kind = type(fields[key].default)
        options[key] = (value not in ("0", "false", "")) if kind is bool else kind(value)
    return name, options


def adapter_bytes(directory: Path) -> int:
    """Bytes of every file a run directory holds (its adapters, head, card)."""
    return sum(p.stat().st_size for p in directory.rglob("*") if p.is_file())


def run(name: str, options: dict[str, Any], args: argparse.Namespace, data) -> dict[str, Any]:
    """Train (or read back) one configuration; its dev F1, time and size."""
    out = args.out / name
    card_path = out / "training_card.json"
    if not card_path.is_file():
        given = {**COMMON, "seed": args.seed, **options}
        own = {f.name for f in option_fields(WsdOptions)}
        task = WsdOptions(**{k: v for k, v in given.items() if k in own})
        cfg = TrainConfig(**{k: v for k, v in given.items() if k not in own}, task=task)
        t0 = time.perf_counter()
        finetune("wsd", data.train, data.dev, cfg, out, progress=False, overwrite=True)
        print(f"{name}: {time.perf_counter() - t0:.0f} s", flush=True)
    card = json.loads(card_path.read_text())
    epochs = card["epochs"]
    return {
        "name": name,
        "options": {k: v for k, v in card["options"].items() if k in {*options, *COMMON}},
        "dev_f1": card["best_metric"],
        "dev_by_epoch": [e["dev"].get("f1") for e in epochs],
        "train_seconds": sum(e["seconds"] - e.get("eval_seconds", 0.0) for e in epochs),
        "trainable_parameters": card["parameters"]["trainable"],
        "saved_bytes": adapter_bytes(out),
        "mixed_precision": card.get("mixed_precision"),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--train", type=int, default=2000, help="SemCor sentences (seeded)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--config", action="append", default=None, help="name:opt=v;opt=v")
    parser.add_argument("--out", type=Path, default=Path("runs/wsd-lora-sweep"))
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args()
    data = builtin_data("semcor", limits=(args.train, None, None))
    results = []
    for text in args.config or DEFAULT_CONFIGS:
        name, options = parse_config(text)
        results.append(run(name, options, args, data))
        print(json.dumps(results[-1]), flush=True)
        write_json(
            args.json,
            {"machine": machine_facts(), "train_sentences": args.train, "common": COMMON,
             "runs": results},
        )  # fmt: skip
    for r in sorted(results, key=lambda r: -r["dev_f1"]):
        print(f"{r['name']:<28} dev {100 * r['dev_f1']:.1f}  {r['train_seconds']:.0f} s  "
              f"{r['saved_bytes'] / 2**20:.1f} MiB")  # fmt: skip


if __name__ == "__main__":
    main()
