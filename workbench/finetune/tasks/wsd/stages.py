"""A WSD bi-encoder trained in two stages by one command (``workbench finetune wsd --then-frozen
N``): first the run its options describe, into ``OUT.first-stage`` beside ``OUT``; then its
context tower alone on N training sentences drawn again, with the gloss tower frozen at the first
stage's weights (each gloss encoded once, so a step costs the context pass alone: several times
cheaper), at its own learning rate and the next seed, into ``OUT``. The first stage's folder is
removed once ``OUT`` is complete (``keep_checkpoint`` keeps it).

A sitting's ``max_minutes`` covers both stages, and a ``stop`` request either. A stage cut short
keeps its checkpoint, and the same call with ``resume`` goes on where it stopped; a finished
first stage is used as it is once its card shows the same options, data and base model.

Example::

    data = builtin_data("semcor+examples", limits=(48000, None, None))
    more = builtin_data("semcor+examples", seed=1)   # seed: cfg.seed + 1
    result = train_then_frozen(data, more, cfg, "runs/two-stage", lr=3e-5)
    result.card["continued_from"]["train_seconds"]   # the first stage's training time
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from workbench.encoding import models
from workbench.errors import InputError
from workbench.fileio import remove_path
from workbench.finetune.data.splits import TaskData
from workbench.finetune.tasks.registry import finetune
from workbench.finetune.training.config import TrainConfig
from workbench.finetune.training.stopping import StopRequest
from workbench.finetune.training.store import (
    check_output,
    has_checkpoint,
    read_card,
    write_card,
)
from workbench.wsd.biencoder import CARD

#: What the first stage's folder is called: ``OUT`` plus this.
FIRST_STAGE = ".first-stage"

#: Options that say when a sitting stops, not what a step does (a resume may change them).
_LIMITS = ("max_minutes", "max_steps")


@dataclass(frozen=True)
class StagesResult:
    """What :func:`train_then_frozen` returns.

    Attributes:
        card: the training card of the stage that ran last (``OUT``'s once both are done).
        output: the directory it is in (``OUT.first-stage`` while the first stage is unfinished).
        stopped: why the command stopped before ``OUT`` was complete (None: it is).
    """

    card: dict[str, Any]
    output: Path
    stopped: str | None = None


def first_stage_dir(output: str | Path) -> Path:
    """Where the first stage of a two-stage run into ``output`` is trained: beside it."""
    output = Path(output)
    return output.with_name(output.name + FIRST_STAGE)


def second_stage_config(cfg: TrainConfig, lr: float) -> TrainConfig:
    """The second stage's options: the first's, at learning rate ``lr`` and seed + 1, with the
    gloss tower frozen (:attr:`~workbench.finetune.tasks.wsd.options.WsdOptions.freeze_glosses`)
    and so no gloss text mixed in (``gloss_mix``: the first stage's gloss tower is what it
    learnt) and every candidate compared (``negatives``: a frozen gloss costs no step time)."""
    return cfg.replace(lr=lr, seed=cfg.seed + 1).with_task(
        freeze_glosses=True, gloss_mix=0.0, negatives=0
    )


def _finished(directory: Path) -> bool:
    return (directory / CARD).is_file() and not has_checkpoint(directory)


def check_stages(output: str | Path, resume: bool, overwrite: bool) -> None:
    """Refuse, before any data is read or anything made, the outputs a two-stage run may not
    write into (:func:`~workbench.finetune.training.store.check_output` for each stage's folder):
    ``OUT`` is checked before the first stage trains, not hours later. With ``resume``, a
    finished first stage is taken as it is and the second stage resumes only if it has begun
    (a finished ``OUT`` is refused: there is nothing left to train).

    Raises:
        InputError, OutputError: as ``check_output`` does, naming the stage's folder.
    """
    output = Path(output)
    first = first_stage_dir(output)
    if resume and _finished(first):
        check_output(first, resume=False, overwrite=True)  # the workbench's own run folder
    else:
        check_output(first, resume, overwrite)
    check_output(output, resume and has_checkpoint(output), overwrite)


def _entry(card: dict[str, Any], key: str) -> dict[str, Any]:
    """``card[key]`` when it is a mapping, else empty (a card edited by hand, or old)."""
    value = card.get(key)
    return value if isinstance(value, dict) else {}


def _without_limits(options: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in options.items() if k not in _LIMITS}


def check_first_stage(
    first: Path, cfg: TrainConfig, data: TaskData, model: str | None
) -> dict[str, Any]:
    """The card of a finished first stage in ``first``, after checking it was trained with
    ``cfg`` (but for its time and step limits), on ``data`` and from ``model``.

    Raises:
        InputError: another run is there (naming what differs).
    """
    card = read_card(first)
    recorded = _entry(card, "data")
    dev = data.dev.sha256 if data.dev else None
    same = {
        "options": _without_limits({**cfg.default_dict(), **_entry(card, "options")})
        == _without_limits(cfg.to_dict()),
        "train data": _entry(recorded, "train").get("sha256") == data.train.sha256,
        "dev data": _entry(recorded, "dev").get("sha256") == dev,
        "base model": card.get("base_location") == models.resolve_model(model).location,
    }
    differs = [what for what, ok in same.items() if not ok]
    if differs:
        raise InputError(
            f"{first} holds a first stage trained with other {', '.join(differs)} than this "
            "command's: run the command that made it, or pass --overwrite to train both stages "
            "again."
        )
    return card


def continued_from(first_card: dict[str, Any], first: Path, kept: bool) -> dict[str, Any]:
    """The second stage's card entry that records the first stage it continued."""
    return {
        "note": "the first stage of this command (--then-frozen): the run its options describe, "
        "both towers trained; the context tower then went on alone on more sentences, the "
        "gloss tower frozen",
        "model": str(first) + ("" if kept else " (removed once the second stage was complete)"),
        "data": _entry(first_card, "data").get("train"),
        "options": first_card.get("options"),
        "train_seconds": first_card.get("train_seconds"),
        "test": first_card.get("test"),
    }


def train_then_frozen(
    data: TaskData,
    more: TaskData,
    cfg: TrainConfig,
    output: str | Path,
    model: str | None = None,
    *,
    lr: float,
    resume: bool = False,
    overwrite: bool = False,
    progress: bool = True,
    keep_checkpoint: bool = False,
    card_extra: dict[str, Any] | None = None,
    stop: StopRequest | None = None,
) -> StagesResult:
    """Train a WSD bi-encoder in two stages (this module's docstring).

    Args:
        data: the first stage's splits.
        more: the second stage's: its training sentences drawn again (``cfg.seed + 1``), the
            same dev and test.
        cfg: the first stage's options (the second's: :func:`second_stage_config`).
        output: the model directory to write (``OUT``).
        model: the base model (None: the packaged default).
        lr: the second stage's learning rate.
        resume, overwrite, progress: as :func:`~workbench.finetune.tasks.registry.finetune`,
            for each stage.
        keep_checkpoint: keep ``OUT/checkpoint`` and the first stage's folder.
        card_extra: more entries for both stages' cards (the command line that ran it).
        stop: a request to stop at the next optimizer step of either stage
            (:func:`~workbench.finetune.training.loop.fit`).

    Returns:
        :class:`StagesResult`; ``stopped`` says which stage a time or step limit cut short.
    """
    output = Path(output)
    first = first_stage_dir(output)
    check_stages(output, resume, overwrite)
    t0 = time.monotonic()
    if resume and _finished(first):
        first_card = check_first_stage(first, cfg, data, model)
    else:
        ran = finetune(
            "wsd", data.train, data.dev, cfg, first, model=model, test=data.test,
            resume=resume, overwrite=overwrite, progress=progress, stop=stop,
            card_extra={**data.extra, **(card_extra or {})},
        )  # fmt: skip
        first_card = ran.card
        if ran.stopped:  # a limit cut it short: its checkpoint stays for --resume
            return StagesResult(first_card, first, "the first stage stopped before its end")
    second = second_stage_config(cfg, lr)
    if cfg.max_minutes:
        left = cfg.max_minutes - (time.monotonic() - t0) / 60
        if left <= 0:
            return StagesResult(first_card, first, "the time limit came with the first stage's end")
        second = second.replace(max_minutes=left)
    ran = finetune(
        "wsd", more.train, more.dev, second, output, model=str(first), test=more.test,
        resume=resume and has_checkpoint(output), overwrite=overwrite, progress=progress,
        keep_checkpoint=keep_checkpoint, stop=stop,
        card_extra={**more.extra, **(card_extra or {})},
    )  # fmt: skip
    card = ran.card
    card.update(
        base_model=first_card.get("base_model"),
        base_location=first_card.get("base_location"),
        continued_from=continued_from(first_card, first, keep_checkpoint),
    )
    write_card(card, output)
    if ran.stopped:
        return StagesResult(card, output, "the second stage stopped before its end")
    if not keep_checkpoint:
        remove_path(first)
    return StagesResult(card, output)
