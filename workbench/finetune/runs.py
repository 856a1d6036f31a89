"""Whole runs as the command line and the app start them: fine-tuning on a run's data
(:mod:`workbench.finetune.data.splits`), then the baselines on the same data, all written into
the training card; and the card's summary for the terminal.

:func:`train_with_baselines` is that whole run: :func:`~workbench.finetune.tasks.registry.finetune`,
then, if asked, :func:`run_baselines` written into the card with :func:`add_to_card`.

Example::

    data = builtin_data("wic", limits=(2000, 500, None))
    card = train_with_baselines("pair", data, TrainConfig(epochs=2), "runs/wic", baselines=True)
    print(summary({**card, "output": "runs/wic"}))
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from dataclasses import asdict
from pathlib import Path
from typing import Any

from workbench.encoding.encoder import Encoder
from workbench.errors import InputError
from workbench.finetune.data.readers import DataFile
from workbench.finetune.data.splits import TaskData
from workbench.finetune.evaluation.baselines import (
    BaselineResult,
    majority,
    probe_sequence,
    probe_tokens,
    probe_wic_targets,
)
from workbench.finetune.tasks.registry import finetune, task_kind
from workbench.finetune.training.config import TrainConfig
from workbench.finetune.training.store import read_card, write_card


def run_baselines(
    kind: str, data: TaskData, cfg: TrainConfig, model: str | None = None, device: str | None = None
) -> list[BaselineResult]:
    """The baselines for ``kind`` on ``data.train`` -> ``dev``
    (:mod:`workbench.finetune.evaluation.baselines`)."""
    dev = check_baselines(kind, data)
    out: list[BaselineResult] = []
    t0 = time.perf_counter()
    if kind in ("seqcls", "pair"):
        out.append(majority(data.train, dev))
        out.append(probe_sequence(kind, data.train, dev, cfg, model, device, data.labels))
        if data.pairs is not None:
            enc = Encoder(model=model, device=device)
            train_pairs, dev_pairs = data.pairs
            out.append(probe_wic_targets(train_pairs, dev_pairs, enc, seed=cfg.seed))
    elif kind == "token":
        enc = Encoder(model=model, device=device)
        out.append(probe_tokens(data.train, dev, enc, seed=cfg.seed))
    for result in out:
        result.details["seconds_all_baselines"] = round(time.perf_counter() - t0, 1)
    return out


def check_baselines(kind: str, data: TaskData) -> DataFile:
    """The dev split the baselines of ``kind`` are scored on; an :class:`InputError` unless
    :func:`run_baselines` can run (a kind with baselines, data with a dev split), so a caller
    can refuse before training."""
    if not task_kind(kind).baselines:
        raise InputError(f"Baselines exist for seqcls, pair and token tasks, not for {kind}.")
    if data.dev is None:
        raise InputError("Baselines need dev data (--dev).")
    return data.dev


def is_main_process() -> bool:
    """False in the other processes of a multi-GPU launch (``RANK`` set and not 0)."""
    return os.environ.get("RANK", "0") == "0"


def train_with_baselines(
    kind: str,
    data: TaskData,
    cfg: TrainConfig,
    output: str | Path,
    model: str | None = None,
    *,
    baselines: bool = False,
    say: Callable[[str], None] | None = None,
    card_extra: dict[str, Any] | None = None,
    **kwargs: Any,
) -> dict[str, Any]:
    """Fine-tune on ``data`` (:func:`~workbench.finetune.tasks.registry.finetune`, its test
    split scored and how built-in data was made written into the card), then, with
    ``baselines``, score :func:`run_baselines` on the same data in the main process and add them
    to the card.

    Args:
        kind: the task kind (``seqcls``, ``pair``, ``token``, ``mlm``, ``wsd``).
        data: the splits.
        cfg: the options (``cfg.device`` also runs the baselines).
        output: the model directory to write.
        model: the base model (None: the packaged default).
        baselines: also run the baselines (an :class:`InputError` for a kind without them or
            data without a dev split, raised before training starts).
        say: told what runs next (``"Scoring the baselines…"``).
        card_extra: more entries for the card (the command line that ran it).
        **kwargs: passed to :func:`~workbench.finetune.tasks.registry.finetune` (``resume``,
            ``overwrite``, ``progress``, ``callback``, ``keep_checkpoint``, ``stop``).

    Returns:
        The training card (in the other processes of a multi-GPU launch: without baselines).
    """
    if baselines:
        check_baselines(kind, data)
    result = finetune(
        kind,
        data.train,
        data.dev,
        cfg,
        output,
        model=model,
        labels=data.labels,
        test=data.test,
        card_extra={**data.extra, **(card_extra or {})},
        **kwargs,
    )
    card = result.card
    if baselines and is_main_process():
        if say is not None:
            say("Scoring the baselines…")
        found = run_baselines(kind, data, cfg, model, cfg.device)
        card = add_to_card(output, {"baselines": [asdict(b) for b in found]})
    return card


def add_to_card(directory: str | Path, entries: dict) -> dict:
    """Add entries to a model directory's training card; returns the new card."""
    card = read_card(directory)
    card.update(entries)
    write_card(card, Path(directory))
    return card


def summary(card: dict) -> str:
    """A few lines for the terminal: per-epoch dev metric, best, test, baselines."""
    metric = card["metric"]
    lines = [
        f"model directory: {card.get('output', '')}".rstrip(),
        f"task {card['task']} on {card['base_model']}; {card['parameters']['trainable']:,}"
        f" of {card['parameters']['total']:,} parameters trained; "
        f"{card['train_seconds']:.0f}s on {card['device']}",
    ]
    for e in card["epochs"]:
        dev = e["dev"].get(metric)
        if dev is not None:
            shown = f"  dev {metric} {dev:.4f}"
        elif e.get("cut"):  # a cut part not scored (a stop request's)
            shown = "  (not scored)"
        else:
            shown = "  (no dev data)"
        cut = f" (its first {e['cut']} batches)" if e.get("cut") else ""
        lines.append(f"  epoch {e['epoch']}{cut}: train_loss {e['train_loss']:.4f}{shown}")
    if card.get("best_epoch"):
        lines.append(f"best epoch {card['best_epoch']}: dev {metric} {card['best_metric']:.4f}")
    if card.get("test"):
        lines.append(f"test {metric} {card['test'][metric]:.4f}")
    for b in card.get("baselines", []):
        lines.append(f"baseline {b['name']}: dev {b['metric']} {b['value']:.4f}")
    speed = card.get("throughput")
    if speed:
        lines.append(
            f"training: {speed['steps_per_s']:.2f} steps/s, {speed['tokens_per_s']:,.0f} "
            f"tokens/s ({speed['context_tokens_per_s']:,.0f} context + "
            f"{speed['gloss_tokens_per_s']:,.0f} gloss)"
        )
    if card.get("glosses"):
        g = card["glosses"]
        lines.append(f"gloss cache: {g['cached']:,} glosses ({g['scope']}), {g['seconds']:.0f}s")
    evaluation = card.get("wsd_eval")
    if evaluation:
        f1s = "  ".join(f"{n} {100 * d['f1']:.1f}" for n, d in evaluation["datasets"].items())
        lines.append(f"WSD F1 of the saved bi-encoder: {f1s}")
        zero = evaluation.get("zero_shot")
        if zero:
            bases = "  ".join(f"{b} {100 * v:.1f}" for b, v in zero["baselines"].items())
            lines.append(f"zero-shot ({zero['n']} instances): F1 {100 * zero['f1']:.1f}; {bases}")
    return "\n".join(lines)
