"""What every task provides to the shared training loop, and the shared batching helpers.

A task turns examples into *features* (one dict of int lists per model input), pads features
into batches, builds its model, says which of the model's transformers train and what of it is
saved (and rebuilds it from a saved directory), and scores gathered predictions. The loop
(:mod:`workbench.finetune.training.loop`) does everything else the same way for every task, and
asks the task, never a model's class, whatever differs.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, cast

import numpy as np
import torch
from torch import nn

from workbench.encoding.adapters import AdapterBase
from workbench.encoding.models import ModelSource
from workbench.errors import InputError
from workbench.finetune.data.bio import IGNORE_INDEX
from workbench.finetune.data.readers import DataFile, LabelSet
from workbench.finetune.training.config import TaskOptions, TrainConfig, task_options_dict
from workbench.finetune.training.model_io import Batch
from workbench.finetune.training.modeling import TaskModel

if TYPE_CHECKING:
    from transformers import PreTrainedTokenizerBase

# padding value of each feature key; keys not listed are not tensors (metadata)
PAD_VALUES = {
    "input_ids": None,  # the tokenizer's pad id
    "attention_mask": 0,
    "token_type_ids": 0,
    "labels": IGNORE_INDEX,
    "eval_labels": IGNORE_INDEX,
    "word_ids": -1,
}


@dataclass
class Features:
    """Tokenized examples of one split.

    Attributes:
        rows: one dict per model input (``input_ids``, ``attention_mask``, ... as int lists,
            ``labels`` an int or an int list).
        notes: what was changed on the way (truncations, chunking), for the user and the card.
    """

    rows: list[dict[str, Any]]
    notes: list[str] = field(default_factory=list)


def pad_batch(rows: list[dict[str, Any]], pad_id: int) -> Batch:
    """Pad the list-valued keys of ``rows`` to the longest row; stack scalar keys.

    Returns:
        ``{key: tensor (batch, seq)}`` for sequence keys, ``{key: tensor (batch,)}`` for ints.
    """
    out: Batch = {}
    for key, pad in PAD_VALUES.items():
        if key not in rows[0]:
            continue
        values = [r[key] for r in rows]
        if isinstance(values[0], int):
            out[key] = torch.tensor(values, dtype=torch.long)
            continue
        width = max(len(v) for v in values)
        fill = pad_id if pad is None else pad
        arr = np.full((len(values), width), fill, dtype=np.int64)
        for i, v in enumerate(values):
            arr[i, : len(v)] = v
        out[key] = torch.from_numpy(arr)
    return out


class Task:
    """Base class of the tasks (sequence, pair, token, mlm, wsd).

    Subclasses set the class attributes and implement :meth:`features`, :meth:`build_model`,
    :meth:`predict` and :meth:`score`.
    """

    kind: ClassVar[str] = ""
    metric: ClassVar[str] = ""  # the dev metric used for model selection and early stopping
    greater_is_better: ClassVar[bool] = True
    scores_test: ClassVar[bool] = True  # the loop scores test data; False: :meth:`finish` does
    #: the dataclass of the task's own options (``cfg.task``); the command line's flags of the
    #: task are made from its fields
    Options: ClassVar[type[TaskOptions]] = TaskOptions
    options: TaskOptions  # cfg.task, of the type Options (a subclass narrows the annotation)

    def __init__(
        self, cfg: TrainConfig, tokenizer: PreTrainedTokenizerBase, labels: LabelSet | None
    ) -> None:
        self.cfg = self.configure(cfg)
        self.options = cast(TaskOptions, self.cfg.task)
        self.tokenizer = tokenizer
        self.labels = labels

    @classmethod
    def configure(cls, cfg: TrainConfig) -> TrainConfig:
        """``cfg`` with this task's options in ``task``: those it holds, or the defaults of
        :attr:`Options` when it holds none.

        Raises:
            InputError: ``cfg.task`` holds the options of another task.
        """
        if cfg.task is None:
            return cfg.replace(task=cls.Options())
        if type(cfg.task) is not cls.Options:
            raise InputError(
                f"The {cls.kind} task takes {cls.Options.__name__}, not "
                f"{type(cfg.task).__name__} (the options of another task): leave them out."
            )
        return cfg

    @property
    def label_set(self) -> LabelSet:
        """The task's labels (the classification and tagging tasks are built with them)."""
        if self.labels is None:
            raise InputError(f"The '{self.kind}' task needs a label set; it was built without.")
        return self.labels

    # -- data ----------------------------------------------------------------------------
    def check(self, train: DataFile, dev: DataFile | None) -> None:
        """Raise DataError for dev labels the training data does not have."""
        if dev is not None and self.labels is not None:
            self.labels.check(dev.examples, dev.source)

    def features(self, data: DataFile, train: bool) -> Features:
        raise NotImplementedError

    def collate(self, rows: list[dict[str, Any]], gen: torch.Generator | None = None) -> Batch:
        """Pad a list of feature rows into a batch (``gen``: the epoch's random generator)."""
        return pad_batch(rows, self.tokenizer.pad_token_id or 0)

    # -- model ---------------------------------------------------------------------------
    @classmethod
    def check_source(cls, cfg: TrainConfig, source: ModelSource) -> None:
        """Raise InputError for a base model this task cannot start from with ``cfg``, before
        any data is read or model loaded (every model is accepted unless a task says
        otherwise)."""

    def build_model(self, source: ModelSource) -> tuple[TaskModel, list[str]]:
        """The task model on the pretrained encoder of ``source``, and notes for the user."""
        raise NotImplementedError

    @property
    def top_layers(self) -> int:
        """How many top layers of each transformer train, the ones below and the embeddings
        frozen (0: the options decide alone; the WSD task's ``top_layers``)."""
        return 0

    def encoders(self, model: TaskModel) -> list[nn.Module]:
        """The transformers of ``model`` that train (frozen and wrapped with LoRA alike, their
        layers given learning rates by depth): by default its ``encoder``."""
        return [cast(nn.Module, model.encoder)]

    def set_encoder(self, model: TaskModel, index: int, encoder: nn.Module) -> None:
        """Put ``encoder`` in the place of ``model``'s transformer number ``index`` of
        :meth:`encoders` (LoRA wraps them)."""
        model.encoder = encoder

    def head_state(self, model: TaskModel) -> dict[str, torch.Tensor]:
        """The weights saved in ``head.safetensors``: by default those of ``model.head``
        (CPU copies)."""
        return module_state(cast(nn.Module, model.head))

    def save_parts(self, model: TaskModel, output: Path, base: AdapterBase | None) -> None:
        """Write what else of ``model`` its directory ``output`` holds, beside the encoder
        and the head (the WSD bi-encoder's gloss encoder, as a model directory of its own);
        ``base``: what LoRA adapters or trained top layers are saved against. Nothing by
        default."""

    @classmethod
    def load_model(
        cls,
        directory: Path,
        head: dict[str, Any],
        weights: dict[str, torch.Tensor],
        source: ModelSource,
    ) -> TaskModel:
        """Rebuild the task model saved in ``directory`` (float32, on the CPU): ``head`` is its
        ``head.json``, ``weights`` its ``head.safetensors``, ``source`` the directory
        resolved as a model (its encoder)."""
        raise NotImplementedError

    def prepare(self, feats: list[Features], progress: bool) -> list[str]:
        """Work on the built model before training starts, over every feature row of ``feats``
        (the WSD task computes the cached lower layers of a ``top_layers`` run); notes for
        the user. Nothing by default."""
        return []

    def head_config(self) -> dict[str, Any]:
        """What is needed to rebuild the head (saved in ``head.json``): the task, its labels
        and its options (:meth:`load_model` reads them)."""
        return {
            "task": self.kind,
            "labels": list(self.labels.names) if self.labels else None,
            **task_options_dict(self.options),
        }

    # -- evaluation ----------------------------------------------------------------------
    def predict(self, model: nn.Module, batch: Batch) -> tuple[torch.Tensor, ...]:
        """Tensors to gather over the dev set (each with the batch as first axis); ``model`` is
        the task model, possibly wrapped for data-parallel training."""
        raise NotImplementedError

    def score(self, outputs: tuple[np.ndarray, ...], feats: Features) -> dict[str, float]:
        """Metrics from the gathered outputs of :meth:`predict` (rows in feature order)."""
        raise NotImplementedError

    # -- book-keeping ----------------------------------------------------------------------
    def epoch_stats(self) -> dict[str, float]:
        """Counts of the training epoch just ended, for its record in the card (the WSD task
        counts its tokens); none by default."""
        return {}

    def finish(
        self,
        output: Path,
        model: TaskModel,
        card: dict[str, Any],
        data: tuple[DataFile, DataFile | None, DataFile | None],
    ) -> dict[str, Any]:
        """Work after the model directory ``output`` is written (main process only): the WSD
        task saves its sense counts and POS probe there and scores its test data through it.
        Returns more entries for the training card."""
        return {}


def module_state(module: nn.Module) -> dict[str, torch.Tensor]:
    """A module's weights as CPU copies (what is saved of a head)."""
    return {k: v.detach().cpu().contiguous().clone() for k, v in module.state_dict().items()}


def special_template(tokenizer: PreTrainedTokenizerBase) -> tuple[list[int], list[int]]:
    """The special token ids a tokenizer puts before and after one sequence ([CLS] .. [SEP]),
    read off a probe encoding (works for any fast tokenizer)."""
    probe = tokenizer([["a"]], is_split_into_words=True, add_special_tokens=True)
    ids, wids = probe["input_ids"][0], probe.word_ids(0)
    first = next(i for i, w in enumerate(wids) if w is not None)
    last = max(i for i, w in enumerate(wids) if w is not None)
    return list(ids[:first]), list(ids[last + 1 :])
