"""Typed, frozen options of a fine-tuning run: the loop's own (:class:`TrainConfig`) and, in
its ``task`` field, the task's (a :class:`TaskOptions` subclass declared with the task).

Every option is one field made by :func:`option`, which carries its help text, its range (a
:class:`~workbench.bounds.Bound`, for numbers) and its choices in the field's metadata: the
dataclass refuses a bad value when it is made (:class:`Options`), and the command line builds
its flags, types, choices and help from the same fields (:func:`option_fields`), so a new option
is one field in one place.

Example::

    cfg = TrainConfig(epochs=3, lr=5e-5, freeze_layers=2, layer_lr_decay=0.9)
    cfg = TrainConfig(epochs=1, task=WsdOptions(gloss_max_length=64))  # a task's own options
"""

from __future__ import annotations

from dataclasses import MISSING, Field, asdict, dataclass, field, fields, replace
from typing import Any, Literal, TypeVar

from workbench.bounds import (
    COUNT,
    NON_NEGATIVE,
    NON_NEGATIVE_INT,
    POSITIVE,
    PROBABILITY,
    SEED,
    Bound,
)
from workbench.errors import InputError

Precision = Literal["auto", "fp32", "bf16"]
HeadPooling = Literal["cls", "mean"]

T = TypeVar("T")


def option(
    default: T,
    help: str,
    bound: Bound | None = None,
    choices: tuple[str, ...] | None = None,
    checked: bool = True,
    positions: bool = False,
) -> T:
    """One option field: its ``default``, its ``help`` text (the command line's), its range
    ``bound`` (numbers) or ``choices`` (strings; ``checked``: refused by the dataclass too, not
    only by the command line), and whether it counts input ``positions`` (cut to what the base
    model takes, :func:`~workbench.finetune.tasks.registry.fit_lengths`)."""
    meta = {
        "help": help,
        "bound": bound,
        "choices": choices,
        "checked": checked,
        "positions": positions,
    }
    return field(default=default, metadata=meta)


def option_fields(options: Any) -> list[Field[Any]]:
    """The option fields of an options dataclass or instance (those made by :func:`option`),
    in their order."""
    return [f for f in fields(options) if "help" in f.metadata]


def bounds(options: Any) -> dict[str, Bound]:
    """The range of every numeric option of an options dataclass: ``{name: bound}``."""
    return {f.name: f.metadata["bound"] for f in option_fields(options) if f.metadata["bound"]}


def _either(choices: tuple[str, ...], quoted: bool) -> str:
    names = [repr(c) if quoted else c for c in choices]
    return names[0] if len(names) == 1 else f"{', '.join(names[:-1])} or {names[-1]}"


@dataclass(frozen=True)
class Options:
    """Base of the option dataclasses: making one refuses NaN, infinities and numbers out of
    their range, and strings not among their choices (:class:`InputError`, naming the
    option)."""

    def __post_init__(self) -> None:
        for f in option_fields(self):
            value, bound, choices = (
                getattr(self, f.name),
                f.metadata["bound"],
                f.metadata["choices"],
            )
            if bound is not None and not (value is None and f.default is None):
                if not bound.accepts(value):
                    raise InputError(
                        f"Bad training option: {f.name} must be {bound.describe()}, not {value!r}."
                    )
            if choices and f.metadata["checked"] and value not in choices:
                raise InputError(
                    f"Bad training option: {f.name} must be "
                    f"{_either(choices, quoted=len(choices) == 2)}."
                )


@dataclass(frozen=True)
class TaskOptions(Options):
    """The options of one task (a subclass, declared with the task, holds its fields; a task
    without options of its own takes this empty one)."""


def task_options_dict(options: TaskOptions | None) -> dict[str, Any]:
    """A task's options as a plain dict (none: ``{}``)."""
    return asdict(options) if options is not None else {}


@dataclass(frozen=True)
class TrainConfig(Options):
    """Options of one fine-tuning run: the loop's, the same for every task, and the task's own
    in ``task`` (None: the task's defaults).

    Example::

        cfg = TrainConfig(epochs=3, lr=5e-5, freeze_layers=2, layer_lr_decay=0.9)
    """

    # optimisation: AdamW with linear warm-up then linear decay to 0
    epochs: int = option(
        3, "passes over the training data (upper bound with --early-stopping)", COUNT
    )
    batch_size: int = option(
        16, "examples per forward pass (per process under accelerate/torchrun)", COUNT
    )
    grad_accum: int = option(
        1, "forward passes per optimizer step (effective batch = batch size * this)", COUNT
    )
    lr: float = option(5e-5, "peak learning rate (top layer and head)", POSITIVE)
    head_lr: float | None = option(None, "learning rate of the new head (default: --lr)", POSITIVE)
    weight_decay: float = option(
        0.01, "AdamW weight decay (not on biases and LayerNorms)", NON_NEGATIVE
    )
    warmup_ratio: float = option(
        0.1, "fraction of steps with linear warm-up (then linear decay to 0)", PROBABILITY
    )
    max_grad_norm: float = option(1.0, "gradient clipping norm (0: off)", NON_NEGATIVE)
    # which weights train
    freeze_embeddings: bool = option(False, "keep the embedding layer fixed")
    freeze_layers: int = option(0, "keep the lowest N transformer layers fixed", NON_NEGATIVE_INT)
    layer_lr_decay: float = option(
        1.0,
        "layer k from the top trains with lr * decay**k (1.0: no decay)",
        Bound(low=0, high=1, low_open=True),
    )
    lora_r: int = option(
        0,
        "LoRA rank (0: full fine-tuning); the adapters are saved unmerged "
        "in PEFT's format, a few MB against the base model",
        NON_NEGATIVE_INT,
    )
    lora_alpha: int = option(16, "LoRA alpha (scaling numerator)", COUNT)
    lora_dropout: float = option(0.05, "LoRA dropout (on the LoRA branch)", PROBABILITY)
    lora_targets: str = option(
        "",
        "modules that get LoRA adapters, comma-separated, e.g. "
        "query,key,value,dense ('': peft's default for the model type)",
    )
    # model inputs
    max_length: int = option(
        256,
        "subword tokens per input, incl. special tokens; longer inputs: see the task's docs",
        Bound(low=8, integer=True),
        positions=True,
    )
    # run control
    precision: Precision = option(
        "auto",
        "auto: bf16 autocast on a GPU that has it and on a "
        "CPU with bfloat16 instructions (unless "
        "WORKBENCH_DTYPE=float32), else fp32",
        choices=("auto", "fp32", "bf16"),
    )
    early_stopping: int = option(
        0, "stop after N epochs without dev improvement (0: off)", NON_NEGATIVE_INT
    )
    max_minutes: float = option(
        0.0,
        "end training after this many minutes of it: the epoch "
        "in progress ends at the next optimizer step, is evaluated and "
        "saved, and no other starts (0: no limit)",
        NON_NEGATIVE,
    )
    max_steps: int = option(
        0,
        "end training after this many optimizer steps in all, the "
        "learning-rate schedule still planned over every epoch: a "
        "time-limited run's cut (its card says the step) on any machine "
        "(0: no limit)",
        NON_NEGATIVE_INT,
    )
    seed: int = option(0, "random seed (shuffling, dropout, masks, head init)", SEED)
    eval_batch_size: int = option(64, "examples per forward pass at evaluation", COUNT)
    device: str | None = option(
        None, "cpu or cuda (default: cuda if available)", choices=("cpu", "cuda"), checked=False
    )
    # the task's own options (None: its defaults; Task.configure fills them in)
    task: TaskOptions | None = None

    def __post_init__(self) -> None:
        super().__post_init__()
        targets = all(t.strip().replace("_", "").isalnum() for t in self.lora_targets.split(","))
        if self.lora_targets and not targets:
            raise InputError(
                "Bad training option: lora_targets must be module names separated "
                "by commas (e.g. query,value)."
            )
        if self.task is not None and not isinstance(self.task, TaskOptions):
            raise InputError(
                f"Bad training option: task must hold a task's options "
                f"(a TaskOptions), not {self.task!r}."
            )

    def to_dict(self) -> dict[str, Any]:
        """Plain dict of every option, the task's after the loop's (for the training card and
        a checkpoint's identity)."""
        common = {f.name: getattr(self, f.name) for f in option_fields(self)}
        return {**common, **task_options_dict(self.task)}

    def default_dict(self) -> dict[str, Any]:
        """Every option at its default, as :meth:`to_dict` names them (the task's too, its
        options' class's defaults): what a checkpoint written before an option existed ran
        with."""
        task = type(self.task)() if self.task is not None else None
        return TrainConfig(task=task).to_dict()

    def replace(self, **changes: Any) -> TrainConfig:
        """A copy with some options changed (the loop's; ``task`` for the task's)."""
        return replace(self, **changes)

    def with_task(self, **changes: Any) -> TrainConfig:
        """A copy with some of the task's own options changed.

        Raises:
            InputError: no task options to change (``task`` is None).
        """
        if self.task is None:
            raise InputError("These options hold no task options to change: pass task=...")
        return replace(self, task=replace(self.task, **changes))


def default_of(f: Field[Any]) -> Any:
    """The default of an option field."""
    return None if f.default is MISSING else f.default
