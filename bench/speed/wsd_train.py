"""Benchmark: a training pass of the WSD bi-encoder task vs a plain per-instance loop.

Run:  python -m bench run wsd_train [--model default] [--sentences 48] [--batch-size 4]
                                [--repeats 3] [--json docs/bench_runs/wsd_train.json]
      python -m bench run wsd_train --device cuda --sentences 512 --batch-size 32 \
          --gloss-batch-tokens 1024    # on a GPU: the task at 1,024-token gloss chunks too

Both sides run the forward and backward pass (no optimizer step) of the same bi-encoder over
the polysemous instances of the same SemCor sentences (a seeded sample), in one process:

(a) the plain loop a first implementation would write (and BEM's training loop does, one
    instance at a time): per instance, one context-encoder pass over its sentence, its
    candidates' glosses padded to the longest in one gloss-encoder pass, cross-entropy,
    backward;
(b) :class:`workbench.finetune.tasks.wsd.task.WsdTask`: ``--batch-size`` sentences per batch, one
    context pass per sentence serving all its instances, the union of the batch's candidate
    glosses encoded once, longest first in chunks of similar length;
(c) the same task with ``freeze_glosses`` (the gloss encoder kept at the base weights, each
    gloss encoded once in a run): timed after one untimed pass has encoded the sample's
    glosses, as every epoch after the first runs (the first pass's time is reported too).

With ``--gloss-batch-tokens N,...`` (b) also runs with the gloss union in chunks of at most N
padded tokens (``task@N``; (b) itself uses the device's default, 1,024 on a CPU and 16,384 on a
GPU). ``--device cuda`` runs everything there under bf16 autocast, as training does.

Reported: instances per second of each and their ratios (medians of ``--repeats``,
interleaved), the tokens each side runs (padding included: the task's glosses as its chunks
pad them), the largest absolute difference between the two sides' losses on the first
batch (they compute the same loss: 0 up to float error), and the host's share: the time
(b)'s batches take to build alone (``collate_seconds``, per batch, and as a share of (b)'s
pass; the training loop builds each batch before its step, on the main thread).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import random
import statistics
import sys
import time
from pathlib import Path

import torch

from bench.lib.record import write_json
from workbench.corpora.datasets import load_dataset
from workbench.encoding import models
from workbench.encoding.pooling import pool_sequence
from workbench.finetune.data.readers import DataFile
from workbench.finetune.tasks.registry import make_task
from workbench.finetune.tasks.wsd.model import BiEncoderModel, chunk_bounds
from workbench.finetune.tasks.wsd.options import WsdOptions
from workbench.finetune.training.config import TrainConfig


def plain_pass(model: BiEncoderModel, task, rows) -> tuple[int, int, list[float]]:
    """Forward + backward per instance; returns (instances, tokens run, losses)."""
    pad = task.tokenizer.pad_token_id or 0
    device = next(model.parameters()).device
    n = tokens = 0
    losses = []
    for row in rows:
        ids = torch.tensor([row["input_ids"]], device=device)
        for (a, b), cands, gold in zip(row["spans"], row["cands"], row["gold"], strict=True):
            hidden = model.encoder(input_ids=ids, attention_mask=torch.ones_like(ids))
            vector = hidden.last_hidden_state[0, a:b].mean(0)
            width = max(len(task.glosses.ids[g]) for g in cands)
            g_ids = torch.full((len(cands), width), pad, dtype=torch.long)
            g_mask = torch.zeros((len(cands), width), dtype=torch.long)
            for i, g in enumerate(cands):
                g_ids[i, : len(task.glosses.ids[g])] = torch.tensor(task.glosses.ids[g])
                g_mask[i, : len(task.glosses.ids[g])] = 1
            g_ids, g_mask = g_ids.to(device), g_mask.to(device)
            out = model.gloss_encoder(input_ids=g_ids, attention_mask=g_mask).last_hidden_state
            glosses = pool_sequence(out, g_mask, model.pooling)
            scores = glosses @ vector
            loss = scores.logsumexp(0) - scores[gold].logsumexp(0)
            loss.backward()
            losses.append(float(loss))
            n += 1
            tokens += ids.shape[1] + g_ids.numel()
    return n, tokens, losses


def task_pass(model: BiEncoderModel, task, rows, batch_size: int) -> tuple[int, int, list[float]]:
    """Forward + backward per batch of sentences; returns (instances, tokens run, losses)."""
    device = next(model.parameters()).device
    n = tokens = 0
    losses = []
    for start in range(0, len(rows), batch_size):
        batch = {k: v.to(device) for k, v in task.collate(rows[start : start + batch_size]).items()}
        loss, scores = model(**batch)
        loss.backward()
        losses.append(float(loss))
        n += scores.shape[0]
        lengths = batch["gloss_attention_mask"].sum(1).tolist()
        glosses = sum(
            (b - a) * lengths[a] for a, b in chunk_bounds(lengths, model.gloss_chunk_tokens(device))
        )
        # frozen glosses were all encoded by the warm-up pass: the step runs the contexts only
        tokens += batch["input_ids"].numel() + (0 if model.freeze_glosses else glosses)
    return n, tokens, losses


def collate_seconds(task, rows, batch_size: int, repeats: int) -> float:
    """Median seconds to build all of (b)'s batches on the host (no model, no device), as
    the training loop builds them (with its generator, so the step's token counting is in)."""
    gen = torch.Generator().manual_seed(0)
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        for start in range(0, len(rows), batch_size):
            task.collate(rows[start : start + batch_size], gen)
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--model", default="default")
    ap.add_argument("--sentences", type=int, default=48)
    ap.add_argument("--batch-size", type=int, default=4)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--gloss-max-length", type=int, default=32)
    ap.add_argument("--device", default="cpu", help="cpu or cuda (bf16 autocast there)")
    ap.add_argument("--gloss-batch-tokens", default="", help="extra gloss chunk sizes for (b)")
    ap.add_argument("--json", type=Path, default=None)
    args = ap.parse_args()
    device = torch.device(args.device)
    cuda = device.type == "cuda"
    extra = [int(x) for x in args.gloss_batch_tokens.split(",") if x]
    sentences = [s for s in load_dataset("semcor").sentences if s.instances]
    random.Random(0).shuffle(sentences)
    data = DataFile(tuple(sentences[: args.sentences]), "semcor-sample", "bench")
    source = models.resolve_model(None if args.model == "default" else args.model)
    cfg = TrainConfig(task=WsdOptions(head_pooling="mean", gloss_max_length=args.gloss_max_length))
    task = make_task("wsd", cfg, models.load_tokenizer(source), data)
    rows = task.features(data, train=True).rows
    model, _ = task.build_model(source)
    model.eval()  # no dropout: all sides compute the same loss
    frozen_task = make_task("wsd", cfg.with_task(freeze_glosses=True), task.tokenizer, data)
    frozen, _ = frozen_task.build_model(source)
    frozen.eval()
    frozen_rows = frozen_task.features(data, train=True).rows  # rows of its own gloss table
    assert isinstance(model, BiEncoderModel) and isinstance(frozen, BiEncoderModel)
    model.to(device)
    frozen.to(device)
    autocast = (
        (lambda: torch.autocast("cuda", dtype=torch.bfloat16)) if cuda else contextlib.nullcontext
    )

    def sync() -> None:
        if cuda:
            torch.cuda.synchronize()

    with autocast():
        first_plain = plain_pass(model, task, rows[: args.batch_size])[2]
        first_task = task_pass(model, task, rows[: args.batch_size], args.batch_size)[2]
        n_first = sum(len(r["spans"]) for r in rows[: args.batch_size])
        mean_plain = sum(first_plain) / n_first
        sync()
        t0 = time.perf_counter()
        first_frozen = task_pass(frozen, frozen_task, frozen_rows, args.batch_size)[2]
        sync()
        frozen_first_pass = time.perf_counter() - t0
    names = ["plain", "task", *(f"task@{x}" for x in extra), "frozen"]
    times: dict[str, list[float]] = {k: [] for k in names}
    counts: dict[str, tuple[int, int]] = {}
    for _ in range(args.repeats):
        for name in times:
            model.zero_grad(set_to_none=True)
            frozen.zero_grad(set_to_none=True)
            model.gloss_batch_tokens = int(name[5:]) if name.startswith("task@") else 0
            sync()
            t0 = time.perf_counter()
            with autocast():
                if name == "plain":
                    n, tokens, _ = plain_pass(model, task, rows)
                elif name.startswith("task"):
                    n, tokens, _ = task_pass(model, task, rows, args.batch_size)
                else:
                    n, tokens, _ = task_pass(frozen, frozen_task, frozen_rows, args.batch_size)
            sync()
            times[name].append(time.perf_counter() - t0)
            counts[name] = (n, tokens)
    median = {k: statistics.median(v) for k, v in times.items()}
    collate = collate_seconds(task, rows, args.batch_size, args.repeats)
    out = {
        "model": source.name,
        "sentences": len(rows),
        "instances": counts["task"][0],
        "batch_size": args.batch_size,
        "device": str(device),
        "gloss_chunk_tokens": {
            "task": BiEncoderModel.gloss_chunk_tokens(frozen, device),
            **{f"task@{x}": x for x in extra},
        },  # fmt: skip
        "threads": torch.get_num_threads(),
        "load_average": os.getloadavg(),
        "seconds": times,
        "instances_per_s": {k: counts[k][0] / median[k] for k in median},
        "tokens_run": {k: counts[k][1] for k in counts},
        "speedup": median["plain"] / median["task"],
        "frozen_speedup": median["plain"] / median["frozen"],
        "frozen_vs_task": median["task"] / median["frozen"],
        "frozen_first_pass_seconds": frozen_first_pass,
        "collate_seconds": collate,  # all of (b)'s batches, built on the host, no model
        "collate_ms_per_batch": 1000 * collate / -(-len(rows) // args.batch_size),
        "collate_share_of_task": collate / median["task"],
        "first_batch_loss_difference": abs(mean_plain - first_task[0]),
        "frozen_first_batch_loss_difference": abs(first_frozen[0] - first_task[0]),
    }
    print(json.dumps(out, indent=1))
    write_json(args.json, out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
