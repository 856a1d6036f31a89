"""The one training loop every task runs on (``accelerate``-based).

``fit(task, train, dev, cfg, output)`` does: seeding; the task model on the base encoder;
freezing / LoRA; AdamW with per-layer learning rates and a linear warm-up/decay schedule;
gradient accumulation; bf16 autocast where the device has bfloat16 (:func:`auto_precision`);
a dev evaluation, a checkpoint and the best-so-far weights after every epoch; early stopping;
a time limit (``max_minutes``: the epoch in progress ends at the next optimizer step and is
evaluated and saved); a request to stop (``stop``, :mod:`~workbench.finetune.training.stopping`:
Ctrl-C on the command line) ends it at the next step too, saves its checkpoint and raises
``KeyboardInterrupt``; at the end the best epoch's weights saved as a model directory
(:mod:`workbench.finetune.training.store`; a LoRA run's adapters unmerged) with the task's own
finishing work (:meth:`~workbench.finetune.tasks.base.Task.finish`: the WSD task scores its test
data through the saved directory) and, last, its training card, all beside ``output`` and then
swapped in
whole. The output is checked after the device and the data, and made only when training starts;
a batch whose loss is NaN or infinite stops the run (:class:`~workbench.errors.TrainingError`),
its last checkpoint kept.

Multi-GPU / multi-node: the loop uses :class:`accelerate.Accelerator` throughout, so the same
command runs data-parallel under ``accelerate launch`` or ``torchrun`` with no code change
(``batch_size`` is then per process; evaluation gathers predictions from all processes).
"""

from __future__ import annotations

import math
import os
import sys
import time
from collections.abc import Callable
from contextlib import nullcontext
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import torch
from torch import nn
from torch.optim.lr_scheduler import LRScheduler
from torch.utils.data import DataLoader

from workbench import __version__
from workbench.encoding import models
from workbench.encoding.device import DTYPE_ENV, cpu_bf16_native
from workbench.errors import DataError, InputError, ModelLoadError, TrainingError
from workbench.finetune.data.readers import DataFile
from workbench.finetune.tasks.base import Features, Task
from workbench.finetune.training import checkpoint as ckpt
from workbench.finetune.training.config import TrainConfig
from workbench.finetune.training.model_io import Batch
from workbench.finetune.training.modeling import TaskModel
from workbench.finetune.training.parameters import (
    add_lora,
    count_parameters,
    freeze,
    freeze_unused,
    param_groups,
)
from workbench.finetune.training.stopping import StopRequest
from workbench.finetune.training.store import (
    CHECKPOINT_DIR,
    adapter_base_of,
    check_output,
    forget_output,
    model_files,
    save_model_dir,
    staged_model_dir,
    start_output,
    write_card,
)

if TYPE_CHECKING:
    from accelerate import Accelerator


@dataclass(frozen=True)
class EpochRecord:
    """Metrics of one epoch: mean training loss, dev metrics, time (``seconds`` in all, of it
    ``eval_seconds`` on the dev set), optimizer steps so far, and the task's own counts
    (:meth:`~workbench.finetune.tasks.base.Task.epoch_stats`)."""

    epoch: int
    train_loss: float
    dev: dict[str, float]
    seconds: float
    steps: int
    eval_seconds: float = 0.0
    stats: dict[str, float] = field(default_factory=dict)
    cut: int = 0  # batches trained when a limit stopped the epoch (0: the epoch is whole)


@dataclass(frozen=True)
class FitResult:
    """What :func:`fit` returns (the card is also in ``<output>/training_card.json``)."""

    output: Path
    history: tuple[EpochRecord, ...]
    best_epoch: int
    best: float | None
    card: dict[str, Any]
    notes: tuple[str, ...]
    model: TaskModel | None = None  # the selected task model (encoder + head; LoRA unmerged)
    stopped: str | None = None  # a time or step limit's note when it ended the run early


Callback = Callable[[dict[str, Any]], None]

#: What ended an epoch that a :class:`StopRequest` cut short.
INTERRUPT = "interrupt"


def auto_precision(cuda: bool) -> str:
    """What ``precision="auto"`` trains in: bf16 autocast on a GPU that supports it and on a
    CPU where the dtype probe measured bfloat16 the faster
    (:func:`~workbench.encoding.device.cpu_bf16_native`), fp32 elsewhere;
    ``$WORKBENCH_DTYPE=float32`` makes it fp32 everywhere (the master weights and the optimizer
    stay float32 either way)."""
    if os.environ.get(DTYPE_ENV, "").strip() == "float32":
        return "fp32"
    if cuda:
        return "bf16" if torch.cuda.is_bf16_supported() else "fp32"
    return "bf16" if cpu_bf16_native() else "fp32"


def _accelerator(cfg: TrainConfig) -> Accelerator:
    from accelerate import Accelerator

    if cfg.device not in (None, "cpu", "cuda"):
        raise InputError(
            f"device must be cpu or cuda, not {cfg.device!r} (pick one GPU of "
            "several with CUDA_VISIBLE_DEVICES)."
        )
    if cfg.device == "cuda" and not torch.cuda.is_available():
        raise InputError("device=cuda was asked for, but CUDA is not available here.")
    cuda = torch.cuda.is_available() and cfg.device != "cpu"
    precision = auto_precision(cuda) if cfg.precision == "auto" else cfg.precision
    return Accelerator(
        mixed_precision="bf16" if precision == "bf16" else "no",
        gradient_accumulation_steps=cfg.grad_accum,
        cpu=not cuda,
    )


def _loader(
    acc: Accelerator,
    rows: list[dict[str, Any]],
    batch_size: int,
    collate: Callable[[list[dict[str, Any]]], Batch],
) -> DataLoader[Batch]:
    loader: DataLoader[Batch] = DataLoader(
        rows,  # type: ignore[arg-type]  # a list is a map-style dataset: all DataLoader needs
        batch_size=batch_size,
        shuffle=False,
        collate_fn=collate,
        # the seed an iterator draws when it starts comes from here, not from torch's global
        # generator, whose draws (dropout) a resumed run then repeats exactly
        generator=torch.Generator().manual_seed(0),
    )
    return acc.prepare_data_loader(loader)


def _stack(chunks: list[np.ndarray]) -> np.ndarray:
    """Concatenate per-batch arrays; 2-D ones are padded to the widest first (-100 / 0.0)."""
    if chunks[0].ndim == 1:
        return np.concatenate(chunks)
    width = max(c.shape[1] for c in chunks)
    fill = 0.0 if chunks[0].dtype.kind == "f" else -100
    return np.concatenate(
        [np.pad(c, ((0, 0), (0, width - c.shape[1])), constant_values=fill) for c in chunks]
    )


def evaluate(task: Task, model: nn.Module, feats: Features, acc: Accelerator) -> dict[str, float]:
    """Dev metrics of ``model`` (predictions gathered from every process, in order)."""
    model.eval()
    parts: list[list[np.ndarray]] | None = None
    loader = _loader(acc, feats.rows, task.cfg.eval_batch_size, task.collate)
    with torch.no_grad():
        for batch in loader:
            outs = task.predict(model, batch)
            padded = [
                acc.pad_across_processes(o, dim=1, pad_index=-100) if o.ndim == 2 else o
                for o in outs
            ]
            gathered = acc.gather_for_metrics(tuple(padded))
            if parts is None:
                parts = [[] for _ in gathered]
            for store, o in zip(parts, gathered, strict=True):
                store.append(o.float().cpu().numpy() if o.is_floating_point() else o.cpu().numpy())
    model.train()
    if parts is None:
        raise InputError("Nothing to evaluate: the evaluation data gave no batch.")
    return task.score(tuple(_stack(p) for p in parts), feats)


def _epoch_order(n: int, seed: int, epoch: int) -> list[int]:
    """The shuffled example order of an epoch: a function of (seed, epoch) only."""
    gen = torch.Generator().manual_seed(seed * 1_000_003 + epoch)
    return torch.randperm(n, generator=gen).tolist()


def _improved(task: Task, value: float, best: float | None) -> bool:
    if best is None:
        return True
    return value > best if task.greater_is_better else value < best


def _identity(
    task: Task, train: DataFile, dev: DataFile | None, source: models.ModelSource
) -> dict[str, Any]:
    """What a checkpoint must have been made with to be resumed: the task, the options, the
    data's checksums and the base model, by name and by the fingerprint of its weights (a
    base replaced in place is another base)."""
    options = task.cfg.to_dict()
    for limit in ("max_minutes", "max_steps"):  # when to stop, not what a step does: a resume
        options.pop(limit)  # may change it
    try:
        fingerprint = models.weights_fingerprint(source)
    except ModelLoadError:  # a hub model not downloaded yet cannot have been replaced
        fingerprint = ""
    return {
        "task": task.kind,
        "base": source.name,
        "base_fingerprint": fingerprint,
        "options": options,
        "train": train.sha256,
        "dev": dev.sha256 if dev else None,
    }


def _log(message: str, acc: Accelerator) -> None:
    if acc.is_main_process:
        print(message, file=sys.stderr, flush=True)


def _early_end(deadline: float | None, stop: StopRequest | None, acc: Accelerator) -> str | None:
    """``max_minutes`` when training time is up (``deadline`` on ``time.monotonic()``),
    :data:`INTERRUPT` when the run was asked to ``stop``, else None; every process gets the main
    process's answer in one collective per step, so all of them stop at the same step."""
    if deadline is None and stop is None:
        return None
    flags = [deadline is not None and time.monotonic() >= deadline, stop is not None and stop.asked]
    if acc.num_processes > 1:
        mine = torch.tensor([float(f and acc.is_main_process) for f in flags], device=acc.device)
        flags = [bool(v > 0) for v in acc.reduce(mine, "sum").tolist()]
    return "max_minutes" if flags[0] else INTERRUPT if flags[1] else None


def _train_epoch(
    task: Task,
    model: nn.Module,
    optimizer: torch.optim.Optimizer,
    scheduler: LRScheduler,
    feats: Features,
    epoch: int,
    acc: Accelerator,
    progress: bool,
    callback: Callback | None,
    deadline: float | None = None,
    max_steps: int | None = None,
    skip: int = 0,
    stop: StopRequest | None = None,
) -> tuple[float, int, str | None, int]:
    """One pass over the shuffled training features from batch ``skip`` on (the batches an
    earlier, cut run of this epoch trained), or its part before ``deadline``
    (``time.monotonic()``, checked after each optimizer step), ``max_steps`` optimizer steps or
    a request to ``stop``; returns (mean loss, optimizer steps, what ended it early:
    ``max_minutes``, ``max_steps``, :data:`INTERRUPT` or None, and where it cut the epoch: its
    batches trained by then, ``skip`` included, or 0 when the epoch was trained to its end)."""
    from tqdm.auto import tqdm

    cfg = task.cfg
    order = _epoch_order(len(feats.rows), cfg.seed, epoch)
    order = order[skip * cfg.batch_size * acc.num_processes :]
    gen = torch.Generator().manual_seed(cfg.seed * 7919 + epoch)  # MLM masks of this epoch
    loader = _loader(
        acc, [feats.rows[i] for i in order], cfg.batch_size, lambda rows: task.collate(rows, gen)
    )
    show = progress and acc.is_local_main_process
    bar = tqdm(loader, desc=f"epoch {epoch}/{cfg.epochs}", disable=not show, leave=False)
    total, count, steps, stopped = 0.0, 0, 0, None
    for i, batch in enumerate(bar):
        with acc.accumulate(model):
            loss, _ = model(**batch)
            value = float(loss.detach().item())
            check_loss(value, epoch, i + 1, acc)  # before a bad step reaches the weights
            acc.backward(loss)
            if acc.sync_gradients and cfg.max_grad_norm > 0:
                acc.clip_grad_norm_(model.parameters(), cfg.max_grad_norm)
            optimizer.step()
            if acc.sync_gradients:
                scheduler.step()
                steps += 1
                ended = _early_end(deadline, stop, acc)  # every process takes part
                stopped = "max_steps" if max_steps is not None and steps >= max_steps else ended
            optimizer.zero_grad()
        total, count = total + value, count + 1
        bar.set_postfix(loss=f"{total / count:.4f}")
        if callback is not None:
            callback(
                {
                    "event": "step",
                    "epoch": epoch,
                    "batch": i + 1,
                    "n_batches": len(loader),
                    "loss": value,
                }
            )
        if stopped:
            break
    bar.close()
    cut = skip + count if stopped and count < len(loader) else 0  # 0: the epoch is whole
    mean = acc.reduce(torch.tensor(total / max(count, 1), device=acc.device), "mean")
    return float(mean.item()), steps, stopped, cut


def check_loss(value: float, epoch: int, batch: int, acc: Accelerator) -> None:
    """Raise :class:`TrainingError` when a batch's loss is NaN or infinite in any process
    (every process gets the same answer, so all of them stop at the same batch)."""
    bad = not math.isfinite(value)
    if acc.num_processes > 1:
        flag = torch.tensor(float(bad), device=acc.device)
        bad = bool(acc.reduce(flag, "sum").item() > 0)
    if bad:
        raise TrainingError(
            f"the training loss became {value} in epoch {epoch}, batch {batch}: the run stopped "
            "there"
        )


def _restore(
    saved: dict[str, Any],
    directory: Path,
    acc: Accelerator,
    model: nn.Module,
    optimizer: torch.optim.Optimizer,
    scheduler: LRScheduler,
    cfg: TrainConfig,
    n_rows: int,
) -> ckpt.RunState:
    """Put a checkpoint read by :func:`~workbench.finetune.training.checkpoint.load_checkpoint` back
    into the model, optimizer, scheduler and random generators; the run's bookkeeping, its
    batch within an epoch and its steps first checked against what ``cfg`` makes of
    ``n_rows`` training rows (:class:`DataError` past them)."""
    state = ckpt.RunState(**saved["state"])
    batches = math.ceil(n_rows / (cfg.batch_size * acc.num_processes))
    steps = _planned_steps(cfg, n_rows, acc)
    if state.batch > batches or state.step > steps:
        raise DataError(
            f"{directory / ckpt.LAST} is damaged: it counts {state.batch:,} batches into an "
            f"epoch of {batches:,} and {state.step:,} optimizer steps of the run's {steps:,}; "
            "start a new run (without --resume)"
        )
    ckpt.load_trained(acc.unwrap_model(model), saved["model"], directory / ckpt.LAST)
    optimizer.load_state_dict(saved["optimizer"])
    scheduler.load_state_dict(saved["scheduler"])
    ckpt.set_rng_state(saved["rng"])
    if state.best_epoch > state.epoch:  # written when a cut part of an epoch competed
        _log(f"the best weights so far were a cut part of epoch {state.best_epoch}'s: "
             "only whole epochs compete now, so they are set aside", acc)  # fmt: skip
        state.best, state.best_epoch = None, 0
    within = f", batch {state.batch} of epoch {state.epoch + 1}" if state.batch else ""
    _log(f"resumed from {directory / ckpt.LAST} after epoch {state.epoch}{within}", acc)
    return state


def _after_epoch(
    task: Task,
    acc: Accelerator,
    model: nn.Module,
    optimizer: torch.optim.Optimizer,
    scheduler: LRScheduler,
    state: ckpt.RunState,
    record: EpochRecord,
    cut: int,
    directory: Path,
    identity: dict[str, Any],
) -> None:
    """Book-keeping after an epoch, or its part before a limit ``cut`` it after that many
    batches (a resume goes on from there): best weights, early-stopping counter,
    checkpoint. Only whole epochs compete for the best weights and count for early stopping:
    a cut part's dev figures are in the history, but a run resumed over several sittings
    selects the same weights as the run done in one."""
    if state.history is None:  # fit() starts every run with a list; a bare RunState has none
        state.history = []
    state.history.append(asdict(record))
    state.epoch = record.epoch - 1 if cut else record.epoch
    state.batch = cut
    value = None if cut else record.dev.get(task.metric)
    if value is not None and _improved(task, value, state.best):
        state.best, state.best_epoch, state.bad_epochs = value, record.epoch, 0
        if acc.is_main_process:
            ckpt.save_weights(acc.unwrap_model(model), directory / ckpt.BEST)
    elif value is not None:
        state.bad_epochs += 1
    if acc.is_main_process:
        ckpt.save_checkpoint(
            directory, acc.unwrap_model(model), optimizer, scheduler, state, identity
        )
    acc.wait_for_everyone()


def _describe(record: EpochRecord, task: Task) -> str:
    """One line on an epoch: its loss, its dev measures (when scored) and its time."""
    parts = [f"train_loss={record.train_loss:.4f}"]
    parts += [f"{k}={v:.4f}" for k, v in record.dev.items()]
    if record.cut:
        parts.append(f"(cut after {record.cut} batches)")
    return f"epoch {record.epoch}/{task.cfg.epochs}: {'  '.join(parts)}  ({record.seconds:.1f}s)"


def _setup_model(
    task: Task, source: models.ModelSource, train_f: Features
) -> tuple[TaskModel, list[str], tuple[int, int]]:
    """The task model with freezing / LoRA applied; notes; (trainable, total) parameters."""
    cfg = task.cfg
    model, notes = task.build_model(source)
    encoders = task.encoders(model)  # the transformers that train, as the task says
    if cfg.lora_r:  # the base is frozen, adapters + head train
        for i, wrapped in enumerate(add_lora(encoders, cfg, task.top_layers)):
            task.set_encoder(model, i, wrapped)
    else:
        freeze(model, encoders, cfg, task.top_layers)
    unused = freeze_unused(model, task.collate(train_f.rows[:2], torch.Generator().manual_seed(0)))
    if unused:
        notes.append(
            f"{len(unused)} parameter tensor(s) get no gradient from this task and stay "
            f"fixed: {', '.join(unused[:4])}{' ...' if len(unused) > 4 else ''}"
        )
    return model, notes, count_parameters(model)


def _planned_steps(cfg: TrainConfig, n_rows: int, acc: Accelerator) -> int:
    """Optimizer steps of the whole run (every epoch): the length of the schedule."""
    batches = math.ceil(n_rows / (cfg.batch_size * acc.num_processes))
    return math.ceil(batches / cfg.grad_accum) * cfg.epochs


def _optimizer(
    task: Task, model: TaskModel, n_rows: int, acc: Accelerator
) -> tuple[torch.optim.Optimizer, LRScheduler]:
    """AdamW over the parameter groups and the linear warm-up/decay schedule."""
    from transformers import get_linear_schedule_with_warmup

    cfg = task.cfg
    optimizer = torch.optim.AdamW(param_groups(model, task.encoders(model), cfg))
    total = _planned_steps(cfg, n_rows, acc)
    return optimizer, get_linear_schedule_with_warmup(
        optimizer, int(cfg.warmup_ratio * total), total
    )


def _run_epochs(
    task: Task,
    acc: Accelerator,
    model: nn.Module,
    optimizer: torch.optim.Optimizer,
    scheduler: LRScheduler,
    feats: tuple[Features, Features | None],
    state: ckpt.RunState,
    where: tuple[Path, dict[str, Any]],
    progress: bool,
    callback: Callback | None,
    stop: StopRequest | None = None,
) -> str | None:
    """Train epoch after epoch from ``state.epoch + 1``, evaluating and checkpointing each.

    Returns:
        None, or why the run ended before its last epoch: the ``max_minutes`` or ``max_steps``
        note for the card (the epoch it cut short is evaluated and checkpointed, but its
        weights do not compete for the best: see :func:`_after_epoch`).

    Raises:
        KeyboardInterrupt: after the checkpoint of the step a request to ``stop`` was honoured
            at (an epoch cut there is checkpointed without its dev scoring).
    """
    cfg = task.cfg
    train_f, dev_f = feats
    task.epoch_stats()  # counts start with the first training batch (not the set-up's probe)
    deadline = time.monotonic() + 60 * cfg.max_minutes if cfg.max_minutes > 0 else None
    for epoch in range(state.epoch + 1, cfg.epochs + 1):
        if cfg.early_stopping and state.bad_epochs >= cfg.early_stopping:
            _log(f"early stopping: no dev improvement for {state.bad_epochs} epoch(s)", acc)
            break
        left = cfg.max_steps - state.step if cfg.max_steps else None
        if left is not None and left <= 0:  # a resumed run that had reached its step limit
            return _stop_note(task, "max_steps", state.step, len(train_f.rows), epoch - 1, acc)
        t0 = time.perf_counter()
        try:
            with stop.stepping() if stop is not None else nullcontext():
                loss, steps, stopped, cut = _train_epoch(
                    task,
                    model,
                    optimizer,
                    scheduler,
                    train_f,
                    epoch,
                    acc,
                    progress,
                    callback,
                    deadline,
                    left,
                    state.batch if epoch == state.epoch + 1 else 0,
                    stop,
                )
        except TrainingError as exc:
            raise TrainingError(f"{exc}; {_kept(state, where[0])}") from None
        stats = task.epoch_stats()
        t1 = time.perf_counter()
        asked_cut = stopped == INTERRUPT and cut > 0  # asked to stop: no dev scoring of a cut
        metrics = {} if dev_f is None or asked_cut else evaluate(task, model, dev_f, acc)
        t2 = time.perf_counter()
        record = EpochRecord(epoch, loss, metrics, t2 - t0, state.step + steps, t2 - t1, stats, cut)
        state.step += steps
        _after_epoch(task, acc, model, optimizer, scheduler, state, record, cut, *where)
        _log(_describe(record, task), acc)
        if callback is not None:
            callback({"event": "epoch", **asdict(record)})
        if stopped == INTERRUPT:
            planned = _planned_steps(cfg, len(train_f.rows), acc)
            _log(
                f"stopped by request after {state.step} of {planned} planned optimizer steps; "
                f"the checkpoint is in {where[0]}: the same command with --resume goes on "
                "from that step",
                acc,
            )
            raise KeyboardInterrupt
        if stopped:
            return _stop_note(task, stopped, state.step, len(train_f.rows), epoch, acc)
    return None


def _kept(state: ckpt.RunState, directory: Path) -> str:
    """What a stopped run keeps, for its error message."""
    if state.epoch == 0:
        return (
            "no epoch had finished, so there is no checkpoint; lower --lr (or check the data "
            "and the options) and start again"
        )
    return (
        f"the last good checkpoint (after epoch {state.epoch}) is kept in {directory}; lower "
        "--lr (or check the data and the options) and start again with --overwrite"
    )


def _stop_note(
    task: Task, limit: str, step: int, n_rows: int, epoch: int, acc: Accelerator
) -> str | None:
    """The card's note on a run that ``limit`` (``max_minutes`` or ``max_steps``) ended at
    optimizer step ``step`` in ``epoch``; None when that was the end of the schedule anyway."""
    cfg = task.cfg
    planned = _planned_steps(cfg, n_rows, acc)
    if step >= planned:
        return None
    value = f"{cfg.max_minutes:g}" if limit == "max_minutes" else str(cfg.max_steps)
    note = (
        f"training stopped by {limit}={value} after {step} of {planned} planned optimizer "
        f"steps, in epoch {epoch} of {cfg.epochs} (the learning rate had not decayed to 0); "
        "its checkpoint is kept: the same command with --resume goes on from that step"
    )
    _log(note, acc)
    return note


def _card(
    task: Task,
    source: models.ModelSource,
    data: tuple[DataFile, DataFile | None, DataFile | None],
    state: ckpt.RunState,
    acc: Accelerator,
    facts: dict[str, Any],
) -> dict[str, Any]:
    """The training card (see :mod:`workbench.finetune.training.store`)."""
    train, dev, test = data
    history = state.history or []
    return {
        "workbench_version": __version__,
        "task": task.kind,
        "metric": task.metric,
        "base_model": source.name,
        "base_location": source.location,
        "labels": list(task.labels.names) if task.labels else None,
        "data": {
            "train": train.card(),
            "dev": dev.card() if dev else None,
            "test": test.card() if test else None,
        },
        "options": task.cfg.to_dict(),
        "epochs": history,
        "best_epoch": state.best_epoch,
        "best_metric": state.best,
        "device": str(acc.device),
        "mixed_precision": str(acc.mixed_precision),
        "num_processes": acc.num_processes,
        "train_seconds": sum(h["seconds"] for h in history),
        **facts,
    }


def fit(
    task: Task,
    source: models.ModelSource,
    train: DataFile,
    dev: DataFile | None,
    output: str | Path,
    *,
    resume: bool = False,
    overwrite: bool = False,
    progress: bool = True,
    callback: Callback | None = None,
    keep_checkpoint: bool = False,
    test: DataFile | None = None,
    card_extra: dict[str, Any] | None = None,
    stop: StopRequest | None = None,
) -> FitResult:
    """Train ``task`` on ``train``, select on ``dev``, save the model directory ``output``.

    Args:
        task: a task object (its ``cfg`` holds every option).
        source: the base model (:func:`workbench.encoding.models.resolve_model`).
        train, dev: the data (``dev`` None: no evaluation, the last epoch is kept).
        output: the model directory to write; checkpoints go to ``output/checkpoint``.
        resume: continue from ``output/checkpoint/last.safetensors`` (same options and
            data; a damaged checkpoint is a DataError, an old pickled one is never loaded).
        overwrite: replace a finished model in ``output`` (only once the new one is complete),
            or start an unfinished run there again (its checkpoint is deleted).
        progress: show a progress bar per epoch.
        callback: called with ``{"event": "step", ...}`` per batch and
            ``{"event": "epoch", **EpochRecord}`` per epoch (the app's live chart).
        keep_checkpoint: keep ``output/checkpoint`` after a successful run (it is kept anyway
            when ``max_minutes`` or ``max_steps`` ended the run early, so that ``resume`` can
            go on from there).
        test: optional held-out data, scored once with the selected model (in the card).
        card_extra: more entries for the training card (e.g. how built-in data was made).
        stop: a :class:`~workbench.finetune.training.stopping.StopRequest`: once asked, the
            run stops at its next optimizer step, writes that step's checkpoint and raises
            ``KeyboardInterrupt`` (``resume`` goes on from there).

    Returns:
        A :class:`FitResult`.
    """
    from accelerate.utils import set_seed

    cfg, output = task.cfg, Path(output)
    acc = _accelerator(cfg)
    set_seed(cfg.seed)
    task.check(train, dev)
    if test is not None:  # refused now, not after the training
        task.check(train, test)
    check_output(output, resume, overwrite)  # after the other checks; nothing made or deleted
    directory, identity = output / CHECKPOINT_DIR, _identity(task, train, dev, source)
    # a missing, damaged or foreign checkpoint is refused before any work
    saved = ckpt.load_checkpoint(directory, identity, cfg.default_dict()) if resume else None
    train_f = task.features(train, train=True)
    dev_f = task.features(dev, train=False) if dev is not None else None
    model, notes, (trainable, n_params) = _setup_model(task, source, train_f)
    notes = [*notes, *train_f.notes, *(dev_f.notes if dev_f else [])]
    notes += task.prepare([train_f, *([dev_f] if dev_f else [])], progress)
    for note in notes:
        _log(note, acc)
    optimizer, scheduler = _optimizer(task, model, len(train_f.rows), acc)
    model, optimizer = acc.prepare(model, optimizer)
    state = ckpt.RunState(history=[])
    if saved is not None:
        state = _restore(saved, directory, acc, model, optimizer, scheduler, cfg, len(train_f.rows))
    made = acc.is_main_process and start_output(output, resume, overwrite)  # training starts
    acc.wait_for_everyone()
    try:
        cut_short = _run_epochs(
            task,
            acc,
            model,
            optimizer,
            scheduler,
            (train_f, dev_f),
            state,
            (directory, identity),
            progress,
            callback,
            stop,
        )
    except BaseException:
        if acc.is_main_process:  # stopped before its first checkpoint: nothing is left
            forget_output(output, made)
        raise
    if cut_short is not None:
        notes.append(cut_short)
    final = acc.unwrap_model(model)
    if state.best_epoch and (directory / ckpt.BEST).is_file():
        ckpt.load_trained(final, ckpt.load_weights(directory / ckpt.BEST), directory / ckpt.BEST)
    test_metrics = None
    if test is not None and task.scores_test:
        test_metrics = evaluate(task, model, task.features(test, train=False), acc)
        _log("test: " + "  ".join(f"{k}={v:.4f}" for k, v in test_metrics.items()), acc)
    final.eval()
    card = _card(
        task,
        source,
        (train, dev, test),
        state,
        acc,
        {
            "parameters": {"trainable": trainable, "total": n_params},
            "notes": notes,
            "test": test_metrics,
            **(card_extra or {}),
        },
    )
    if acc.is_main_process:  # the old model goes only when the new one is complete
        encoder, *_ = task.encoders(final)
        base = adapter_base_of(source, encoder) if cfg.lora_r or task.top_layers else None
        with staged_model_dir(output, keep_checkpoint or cut_short is not None) as staging:
            task.save_parts(final, staging, base)
            head = (task.head_config(), task.head_state(final))
            save_model_dir(encoder, task.tokenizer, *head, card, staging, base, task.top_layers)
            card.update(task.finish(staging, final, card, (train, dev, test)) or {})
            card["files"] = model_files(staging)
            write_card(card, staging)  # the card last: the directory is complete
    acc.wait_for_everyone()
    history = tuple(EpochRecord(**h) for h in state.history or [])
    return FitResult(
        output, history, state.best_epoch, state.best, card, tuple(notes), final, cut_short
    )
