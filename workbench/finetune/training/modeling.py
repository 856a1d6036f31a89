"""The models of the classification and masked-LM tasks: a pretrained encoder plus a small new
head; and :data:`TaskModel`, every task model the loop trains (the WSD bi-encoder's model and
loss are beside its task, :mod:`workbench.finetune.tasks.wsd.model`).

Every task model has an ``encoder`` attribute (the ``AutoModel``-style transformer, possibly
wrapped by peft's LoRA) and a ``head``, except the WSD bi-encoder, whose second transformer, the
``gloss_encoder``, takes the head's place
(:func:`workbench.finetune.training.parameters.task_encoders` lists a model's transformers);
``forward(**batch)`` returns ``(loss, logits)`` (:mod:`workbench.finetune.training.model_io`).
Which of their parameters train, and at which learning rate, is
:mod:`workbench.finetune.training.parameters`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, TypeAlias

import torch
from torch import nn

from workbench.encoding.pooling import pool_sequence
from workbench.finetune.data.bio import IGNORE_INDEX
from workbench.finetune.tasks.wsd.model import BiEncoderModel
from workbench.finetune.training.model_io import ModelOutput, encoder_config, encoder_inputs

if TYPE_CHECKING:
    from transformers import PreTrainedModel


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


class MaskedLMModel(nn.Module):
    """Wraps an ``AutoModelForMaskedLM``; ``encoder`` is its base transformer."""

    def __init__(self, lm: PreTrainedModel) -> None:
        super().__init__()
        self.lm = lm

    @property
    def encoder(self) -> nn.Module:
        return getattr(self.lm, self.lm.base_model_prefix)

    def set_encoder(self, encoder: nn.Module) -> None:
        setattr(self.lm, self.lm.base_model_prefix, encoder)

    def forward(self, labels: torch.Tensor | None = None, **batch: torch.Tensor) -> ModelOutput:
        out = self.lm(**encoder_inputs(batch))
        loss = None
        if labels is not None:
            loss = nn.functional.cross_entropy(
                out.logits.float().flatten(0, 1), labels.flatten(), ignore_index=IGNORE_INDEX
            )
        return loss, out.logits


#: A task model: an ``encoder`` (the transformer) under a new head, or the WSD bi-encoder.
TaskModel: TypeAlias = SequenceModel | TokenModel | MaskedLMModel | BiEncoderModel
