"""Benchmark: a training step of the WSD bi-encoder with only its top layers trained, from the
cached lower layers, against the full both-tower step, in one process.

Run:  python -m bench run wsd_top_layers [--model default] [--sentences 64] [--batch-size 8]
                                     [--tops 1,2,3] [--repeats 3]
                                     [--json docs/bench_runs/wsd_top_layers_cpu.json]

Every side runs forward, backward and an AdamW step of the same bi-encoder (both towers
training) over the same seeded SemCor sentences in batches of ``--batch-size``:

(a) the plain full step: every layer of both towers runs and trains (``top_layers=0``);
(b) ``top_layers=N`` for each N of ``--tops``: only the top N layers run, from the hidden states
    the frozen lower layers gave, read from the activation cache
    (:mod:`workbench.finetune.training.activations`; filled by an untimed pass first, whose time
    per token is reported as ``fill_tokens_per_s``); the batch's collate (cache look-ups
    included) is timed with the step.

Reported: seconds per batch of each side (median of ``--repeats``, interleaved), the speed-up of
each N over (a), and the tokens a batch runs (contexts and the union of candidate glosses).
"""

from __future__ import annotations

import argparse
import random
import statistics
import tempfile
import time

import torch

from bench.lib.machine import machine_facts
from bench.lib.record import write_json
from workbench.corpora.datasets import load_dataset
from workbench.encoding import models
from workbench.finetune.data.readers import DataFile
from workbench.finetune.tasks.registry import make_task
from workbench.finetune.tasks.wsd.options import WsdOptions
from workbench.finetune.training.config import TrainConfig
from workbench.finetune.training.parameters import freeze

SKIP = ("inst_row", "inst_col", "row_ids")


def side(top: int, args: argparse.Namespace, train: DataFile, cache: str) -> dict:
    """Build one side; return its task, model, optimizer and feature rows."""
    options = WsdOptions(head_pooling="mean", gloss_max_length=32, top_layers=top)
    cfg = TrainConfig(batch_size=args.batch_size, task=options)
    source = models.resolve_model(None if args.model == "default" else args.model)
    task = make_task("wsd", cfg, models.load_tokenizer(source), train)
    feats = task.features(train, train=True)
    model, _ = task.build_model(source)
    if task.lower is not None:
        task.lower.root = cache
    trainable = [p for p in model.parameters() if p.requires_grad]
    if top:  # the frozen part, as the training loop's freeze() leaves it
        freeze(model, task.encoders(model), cfg, task.top_layers)
        trainable = [p for p in model.parameters() if p.requires_grad]
    fill = None
    if top:
        t = time.perf_counter()
        task.prepare([feats], progress=False)
        tokens = sum(len(r["input_ids"]) for r in feats.rows) + sum(map(len, task.glosses.ids))
        fill = tokens / (time.perf_counter() - t)
    model.train()
    return {
        "task": task,
        "model": model,
        "opt": torch.optim.AdamW(trainable, lr=1e-5),
        "rows": feats.rows,
        "fill_tokens_per_s": fill,
        "trainable": sum(p.numel() for p in trainable),
    }


def run_pass(s: dict, batch_size: int) -> tuple[float, int, int]:
    """One pass over the rows: (seconds per batch, context tokens, gloss tokens)."""
    gen = torch.Generator().manual_seed(0)
    rows = s["rows"]
    n, ctx, gl = 0, 0, 0
    t = time.perf_counter()
    for start in range(0, len(rows), batch_size):
        batch = s["task"].collate(rows[start : start + batch_size], gen)
        ctx += int(batch["attention_mask"].sum())
        gl += int(batch["gloss_attention_mask"].sum())
        loss, _ = s["model"](**{k: v for k, v in batch.items() if k not in SKIP})
        loss.backward()
        s["opt"].step()
        s["opt"].zero_grad()
        n += 1
    return (time.perf_counter() - t) / n, ctx // n, gl // n


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--model", default="default")
    ap.add_argument("--sentences", type=int, default=64)
    ap.add_argument("--batch-size", type=int, default=8)
    ap.add_argument("--tops", default="1,2,3")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--json")
    args = ap.parse_args()
    sentences = [s for s in load_dataset("semcor").sentences if s.instances]
    random.Random(0).shuffle(sentences)
    train = DataFile(tuple(sentences[: args.sentences]), "semcor sample", "bench")
    tops = [0, *(int(t) for t in args.tops.split(","))]
    with tempfile.TemporaryDirectory() as cache:
        sides = {top: side(top, args, train, cache) for top in tops}
        times: dict[int, list[float]] = {top: [] for top in tops}
        tokens = {}
        for _ in range(args.repeats):
            for top in tops:  # interleaved
                sec, ctx, gl = run_pass(sides[top], args.batch_size)
                times[top].append(sec)
                tokens[top] = {"context": ctx, "gloss": gl}
    base = statistics.median(times[0])
    results = {}
    for top in tops:
        med = statistics.median(times[top])
        results[top] = {
            "seconds_per_batch": med,
            "speedup_vs_full": base / med,
            "tokens_per_batch": tokens[top],
            "trainable": sides[top]["trainable"],
            "fill_tokens_per_s": sides[top]["fill_tokens_per_s"],
            "repeats": times[top],
        }
        name = "full (every layer)" if top == 0 else f"top_layers={top}"
        fill = sides[top]["fill_tokens_per_s"]
        print(
            f"{name:20s} {med:6.3f} s/batch  x{base / med:4.2f}  "
            f"trainable {sides[top]['trainable']:,}"
            + (f"  cache fill {fill:,.0f} tok/s" if fill else "")
        )
    if args.json:
        write_json(args.json, {"args": vars(args), "machine": machine_facts(), "results": results})


if __name__ == "__main__":
    main()
