"""Sequence classification: a head on the final [CLS] (or mean-pooled) vector, cross-entropy.

Texts longer than ``max_length`` subword tokens are truncated (documented handling); the
number truncated is reported in the features' notes and in the training card.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import torch
from torch import nn

from workbench.bounds import PROBABILITY
from workbench.encoding.models import ModelSource, load_model
from workbench.finetune.data.readers import DataFile, TextExample
from workbench.finetune.tasks.base import Features, Task
from workbench.finetune.tasks.kind import TaskKind
from workbench.finetune.training.config import HeadPooling, TaskOptions, option
from workbench.finetune.training.encoders import load_encoder
from workbench.finetune.training.model_io import Batch
from workbench.finetune.training.modeling import SequenceModel


@dataclass(frozen=True)
class SequenceOptions(TaskOptions):
    """The options of the sequence and pair classification tasks: their head."""

    head_pooling: HeadPooling = option(
        "cls", "the head reads [CLS] or the mean of the last layer", choices=("cls", "mean")
    )
    head_dropout: float = option(0.1, "dropout before the head", PROBABILITY)


class SequenceTask(Task):
    """``text -> label``; metric: accuracy (macro-F1 reported too)."""

    kind = "seqcls"
    metric = "accuracy"
    Options = SequenceOptions
    options: SequenceOptions

    def _texts(self, data: DataFile) -> tuple[list[str], list[str] | None]:
        return [ex.text for ex in data.examples], None

    def features(self, data: DataFile, train: bool) -> Features:
        first, second = self._texts(data)
        tok = self.tokenizer
        full = tok(first, second, truncation=False, add_special_tokens=True)
        too_long = [i for i, ids in enumerate(full["input_ids"]) if len(ids) > self.cfg.max_length]
        enc = full
        if too_long:
            mode = "longest_first" if second is not None else True
            enc = tok(first, second, truncation=mode, max_length=self.cfg.max_length)
        rows: list[dict[str, Any]] = []
        for i, ex in enumerate(data.examples):
            row = {
                k: enc[k][i] for k in ("input_ids", "attention_mask", "token_type_ids") if k in enc
            }
            row["labels"] = self.label_set.id(ex.label)
            rows.append(row)
        notes = []
        if too_long:
            notes.append(
                f"{data.source}: {len(too_long)} of {len(rows)} inputs were longer than "
                f"max_length={self.cfg.max_length} subword tokens and were truncated "
                f"(first: example {too_long[0]})"
            )
        return Features(rows, notes)

    def build_model(self, source: ModelSource) -> tuple[SequenceModel, list[str]]:
        encoder = load_encoder(source)
        model = SequenceModel(
            encoder, len(self.label_set.names), self.options.head_pooling, self.options.head_dropout
        )
        return model, []

    @classmethod
    def load_model(
        cls,
        directory: Path,
        head: dict[str, Any],
        weights: dict[str, torch.Tensor],
        source: ModelSource,
    ) -> SequenceModel:
        encoder = load_model(source, torch.float32)
        model = SequenceModel(
            encoder, len(head["labels"]), head["head_pooling"], head["head_dropout"]
        )
        model.head.load_state_dict(weights)
        return model

    def predict(self, model: nn.Module, batch: Batch) -> tuple[torch.Tensor, ...]:
        labels = batch.pop("labels")
        _, logits = model(**batch)
        return logits.argmax(-1), labels

    def score(self, outputs: tuple[np.ndarray, ...], feats: Features) -> dict[str, float]:
        pred, gold = outputs
        return classification_scores(pred, gold, len(self.label_set.names))


def classification_scores(pred: np.ndarray, gold: np.ndarray, n_labels: int) -> dict[str, float]:
    """Accuracy and macro-F1 (over the labels present in gold or predictions)."""
    pred, gold = np.asarray(pred), np.asarray(gold)
    f1s = []
    for c in range(n_labels):
        tp = int(np.sum((pred == c) & (gold == c)))
        fp = int(np.sum((pred == c) & (gold != c)))
        fn = int(np.sum((pred != c) & (gold == c)))
        if tp + fp + fn:
            f1s.append(2 * tp / (2 * tp + fp + fn))
    return {
        "accuracy": float(np.mean(pred == gold)) if len(gold) else 0.0,
        "macro_f1": float(np.mean(f1s)) if f1s else 0.0,
    }


#: The sequence classification task kind (:data:`~workbench.finetune.tasks.registry.TASKS`).
SEQUENCE = TaskKind(
    SequenceTask, TextExample, "sequence classification", "CSV/JSONL with text,label"
)
