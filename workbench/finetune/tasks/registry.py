"""The fine-tuning task kinds (:data:`TASKS`, the one registry every front end reads), and one
call that fine-tunes a model on one of them.

Example::

    from workbench.finetune.training.config import TrainConfig
    from workbench.finetune.tasks.registry import TASKS, finetune
    kind = TASKS["pair"]                 # kind.metric == "accuracy", kind.file_format, ...
    train, dev = kind.read("train.csv"), kind.read("dev.csv")
    result = finetune("pair", train, dev, TrainConfig(epochs=2), "runs/pair")
    Encoder(model="runs/pair")          # analyse the fine-tuned encoder
"""

from __future__ import annotations

import json
import warnings
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from workbench.encoding import models
from workbench.errors import InputError, ModelLoadError
from workbench.finetune.data.readers import DataFile, LabelSet
from workbench.finetune.tasks.base import Task
from workbench.finetune.tasks.kind import TaskKind
from workbench.finetune.tasks.mlm import MLM
from workbench.finetune.tasks.pair import PAIR
from workbench.finetune.tasks.sequence import SEQUENCE
from workbench.finetune.tasks.token import TOKEN
from workbench.finetune.tasks.wsd.task import WSD
from workbench.finetune.training.config import TaskOptions, TrainConfig, option_fields
from workbench.finetune.training.loop import FitResult, fit
from workbench.finetune.training.modeling import TaskModel
from workbench.finetune.training.store import HEAD_WEIGHTS
from workbench.wsd.biencoder import HEAD_CONFIG

if TYPE_CHECKING:
    from transformers import PreTrainedTokenizerBase


#: Every task kind by name, in the order menus list them; each declared by its task's module.
TASKS: dict[str, TaskKind] = {kind.name: kind for kind in (SEQUENCE, PAIR, TOKEN, MLM, WSD)}


def task_kind(name: str) -> TaskKind:
    """The :class:`TaskKind` called ``name``.

    Raises:
        InputError: no task kind has that name.
    """
    if name not in TASKS:
        raise InputError(f"Unknown task '{name}': choose one of {', '.join(TASKS)}.")
    return TASKS[name]


def check_examples(kind: str, data: DataFile) -> None:
    """Raise :class:`InputError` unless every example of ``data`` is of ``kind``'s type."""
    expected = task_kind(kind).example
    if not all(isinstance(e, expected) for e in data.examples):
        found = type(data.examples[0]).__name__
        raise InputError(
            f"Task '{kind}' needs {expected.__name__} examples, but "
            f"{data.source} holds {found} ones."
        )


def make_task(
    kind: str,
    cfg: TrainConfig,
    tokenizer: PreTrainedTokenizerBase,
    train: DataFile,
    labels: tuple[str, ...] | None = None,
) -> Task:
    """The task object of ``kind``; its label set is ``labels`` if given (a built-in task's
    full label set, so a small subset may lack some), else the labels found in ``train``."""
    spec = task_kind(kind)
    cfg = spec.task.configure(cfg)  # another task's options are refused first
    check_examples(kind, train)
    found = LabelSet.from_examples(train.examples) if spec.labelled else None
    if found is not None and labels is not None:
        found = LabelSet(tuple(labels))
        found.check(train.examples, train.source)  # the given set must cover train
    return spec.task(cfg, tokenizer, found)


def check_start(kind: str, cfg: TrainConfig, model: str | None) -> models.ModelSource:
    """Refuse what can be refused before any data is read or model loaded: options of another
    task (:meth:`~workbench.finetune.tasks.base.Task.configure`, before the model is looked
    for) and a base model the task cannot start from (``Task.check_source``). Returns the
    resolved model."""
    task = task_kind(kind).task
    cfg = task.configure(cfg)
    source = models.resolve_model(model)
    task.check_source(cfg, source)
    return source


def fit_lengths(
    kind: str, cfg: TrainConfig, source: models.ModelSource, tokenizer: PreTrainedTokenizerBase
) -> TrainConfig:
    """``cfg`` (with ``kind``'s options) with the input lengths (the options that count
    positions: ``max_length``, and the task's own, e.g. WSD's ``gloss_max_length``) cut to what
    the base model takes, before any data is encoded: more positions than the model has would
    fail in the middle of training. A value given away from the default is cut with a
    warning; a default the model is too short for is cut to it silently (the card records the
    length used)."""
    cfg = task_kind(kind).task.configure(cfg)
    limit = models.input_limit(source, tokenizer)

    def cut(options: Any) -> dict[str, int]:
        changes = {}
        for f in option_fields(options):
            value = getattr(options, f.name)
            if not f.metadata["positions"] or value <= limit:
                continue
            if value != f.default:
                warnings.warn(
                    f"--{f.name.replace('_', '-')} {value} is more than {source.name} takes "
                    f"({limit} positions): inputs are cut at {limit}",
                    stacklevel=3,
                )
            changes[f.name] = limit
        return changes

    options = cast(TaskOptions, cfg.task)
    return cfg.replace(**cut(cfg), task=replace(options, **cut(options)))


def finetune(
    kind: str,
    train: DataFile,
    dev: DataFile | None,
    cfg: TrainConfig,
    output: str | Path,
    model: str | None = None,
    labels: tuple[str, ...] | None = None,
    **kwargs: Any,
) -> FitResult:
    """Fine-tune ``model`` (None: the packaged default) on a task; see
    :func:`workbench.finetune.training.loop.fit`.

    Args:
        kind: a name in :data:`TASKS` (``seqcls``, ``pair``, ``token``, ``mlm``, ``wsd``).
        train, dev: data (:func:`read_table`, :func:`read_conll`, :func:`read_text`, or a
            built-in task); dev labels must all occur in train.
        cfg: the options.
        output: the model directory to write.
        model: base model name or directory.
        labels: the label set (default: the labels of ``train``).
        **kwargs: ``resume``, ``overwrite``, ``progress``, ``callback``, ``keep_checkpoint``,
            ``stop`` (:func:`~workbench.finetune.training.loop.fit`).

    Returns:
        :class:`workbench.finetune.training.loop.FitResult`.
    """
    source = check_start(kind, cfg, model)
    tokenizer = models.load_tokenizer(source)
    cfg = fit_lengths(kind, cfg, source, tokenizer)
    task = make_task(kind, cfg, tokenizer, train, labels)
    if dev is not None:
        check_examples(kind, dev)
    return fit(task, source, train, dev, output, **kwargs)


def load_finetuned(
    directory: str | Path,
) -> tuple[TaskModel, PreTrainedTokenizerBase, dict[str, Any]]:
    """Rebuild encoder + head from a model directory, for predictions (eval mode, CPU, float32;
    LoRA adapters merged in): the task its ``head.json`` names rebuilds its model
    (:meth:`~workbench.finetune.tasks.base.Task.load_model`).

    Returns:
        ``(model, tokenizer, head_config)``; ``model(**batch)`` returns ``(loss, logits)``.

    Raises:
        ModelLoadError: not a fine-tuned model directory, or one of a task not known here.
    """
    from safetensors.torch import load_file

    directory = Path(directory)
    if not (directory / HEAD_CONFIG).is_file():
        raise ModelLoadError(f"{directory} has no {HEAD_CONFIG}: not a fine-tuned model dir.")
    head = json.loads((directory / HEAD_CONFIG).read_text())
    if head.get("task") not in TASKS:
        raise ModelLoadError(f"{directory} holds a model of an unknown task {head.get('task')!r}.")
    weights = load_file(str(directory / HEAD_WEIGHTS))
    source = models.resolve_model(str(directory))
    tokenizer = models.load_tokenizer(source)
    model = TASKS[head["task"]].task.load_model(directory, head, weights, source)
    return model.eval(), tokenizer, head
