"""What every task model shares: the padded batch it takes (:data:`Batch`), the ``(loss,
logits)`` it returns (:data:`ModelOutput`), the part of a batch its transformer reads
(:func:`encoder_inputs`), that transformer's config (:func:`encoder_config`) and its stack of
layers (:func:`transformer_layers`).

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


def transformer_layers(encoder: nn.Module) -> nn.ModuleList:
    """The encoder's stack of transformer layers (the ModuleList of num_hidden_layers blocks)."""
    n = int(encoder_config(encoder).num_hidden_layers)
    for _, module in encoder.named_modules():
        if isinstance(module, nn.ModuleList) and len(module) == n:
            return module
    raise ModelLoadError(
        f"Could not find the {n} transformer layers of {type(encoder).__name__} "
        "(no ModuleList of that length): freezing and layer-wise decay need them."
    )
