"""What every task model shares: the padded batch it takes (:data:`Batch`), the ``(loss,
logits)`` it returns (:data:`ModelOutput`), the part of a batch its transformer reads
(:func:`encoder_inputs`) and that transformer's config (:func:`encoder_config`).

Example::

    hidden = model.encoder(**encoder_inputs(batch)).last_hidden_state
    dim = encoder_config(model.encoder).hidden_size
"""

from __future__ import annotations

from typing import TYPE_CHECKING, TypeAlias

import torch
from torch import nn

from workbench.errors import ModelLoadError

if TYPE_CHECKING:
    from transformers import PretrainedConfig

MODEL_INPUTS = ("input_ids", "attention_mask", "token_type_ids")

#: A padded batch: ``{key: tensor (batch, seq) or (batch,)}``.
Batch: TypeAlias = dict[str, torch.Tensor]
#: What a task model's ``forward(**batch)`` returns: ``(loss or None without labels, logits)``.
ModelOutput: TypeAlias = tuple[torch.Tensor | None, torch.Tensor]


def encoder_inputs(batch: Batch) -> Batch:
    """The subset of a batch the transformer takes."""
    return {k: v for k, v in batch.items() if k in MODEL_INPUTS}


def encoder_config(encoder: nn.Module) -> PretrainedConfig:
    """The ``transformers`` config of an encoder (an ``AutoModel``, possibly LoRA-wrapped)."""
    config = getattr(encoder, "config", None)
    if config is None:
        raise ModelLoadError(
            f"{type(encoder).__name__} has no transformers config: a task model needs an "
            "AutoModel-style encoder."
        )
    return config
