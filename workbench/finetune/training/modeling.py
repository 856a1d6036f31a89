"""The models of the classification tasks: a pretrained encoder plus a small new head; and
:data:`TaskModel`, what the loop trains (the masked-LM and the WSD bi-encoder's models are
beside their tasks, :mod:`workbench.finetune.tasks.mlm`, :mod:`workbench.finetune.tasks.wsd.model`).

These models have an ``encoder`` attribute (the ``AutoModel``-style transformer, possibly
wrapped by peft's LoRA) and a ``head``; ``forward(**batch)`` returns ``(loss, logits)``
(:mod:`workbench.finetune.training.model_io`). Which transformers of a model train and what of
it is saved, its task says (:meth:`~workbench.finetune.tasks.base.Task.encoders`,
:meth:`~workbench.finetune.tasks.base.Task.head_state`); which of their parameters train, and
at which learning rate, is :mod:`workbench.finetune.training.parameters`.
"""

from __future__ import annotations

from typing import TypeAlias

import torch
from torch import nn

from workbench.encoding.pooling import pool_sequence
from workbench.finetune.data.bio import IGNORE_INDEX
from workbench.finetune.training.model_io import ModelOutput, encoder_config, encoder_inputs


class ClassificationHead(nn.Module):
    """Dropout + linear layer over one vector per input: (batch, dim) -> (batch, n_labels)."""

    def __init__(self, dim: int, n_labels: int, dropout: float) -> None:
        super().__init__()
        self.dropout = nn.Dropout(dropout)
        self.out = nn.Linear(dim, n_labels)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.out(self.dropout(x))


class SequenceModel(nn.Module):
    """Encoder + classification head on the [CLS] (or mean) vector; cross-entropy loss.

    Serves both sequence classification and sentence-pair classification (the pair is one
    input, ``[CLS] a [SEP] b [SEP]``).
    """

    def __init__(self, encoder: nn.Module, n_labels: int, pooling: str, dropout: float) -> None:
        super().__init__()
        self.encoder = encoder
        self.head = ClassificationHead(encoder_config(encoder).hidden_size, n_labels, dropout)
        self.pooling = pooling

    def forward(self, labels: torch.Tensor | None = None, **batch: torch.Tensor) -> ModelOutput:
        hidden = self.encoder(**encoder_inputs(batch)).last_hidden_state
        logits = self.head(pool_sequence(hidden, batch["attention_mask"], self.pooling))
        loss = nn.functional.cross_entropy(logits.float(), labels) if labels is not None else None
        return loss, logits


class TokenModel(nn.Module):
    """Encoder + per-token linear head; cross-entropy over tokens whose label is not -100."""

    def __init__(self, encoder: nn.Module, n_labels: int, dropout: float) -> None:
        super().__init__()
        self.encoder = encoder
        self.head = ClassificationHead(encoder_config(encoder).hidden_size, n_labels, dropout)

    def forward(self, labels: torch.Tensor | None = None, **batch: torch.Tensor) -> ModelOutput:
        hidden = self.encoder(**encoder_inputs(batch)).last_hidden_state
        logits = self.head(hidden)
        loss = None
        if labels is not None:
            loss = nn.functional.cross_entropy(
                logits.float().flatten(0, 1), labels.flatten(), ignore_index=IGNORE_INDEX
            )
        return loss, logits


#: A task model: any module whose ``forward(**batch)`` returns ``(loss, logits)``; which of its
#: parts are the transformers that train, and what of it is saved, its task says
#: (:class:`~workbench.finetune.tasks.base.Task`).
TaskModel: TypeAlias = nn.Module
