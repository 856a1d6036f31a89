"""A transformer cut in two: its frozen lower part run once, its top layers run from there.

A model whose embeddings and lowest layers are frozen gives the top layers the same input for
the same tokens at every step. :func:`lower_states` runs the model up to the cut (embeddings and
the ``below`` lowest layers, no gradient, eval mode) and returns the hidden states that enter
layer ``below``; :func:`top_states` runs only the layers from ``below`` up, starting from such
hidden states, and returns the last hidden state, with gradients for the top layers (and their
LoRA adapters). Both run the model's own ``forward`` with its layer stack cut for the call and
(for the top) its embeddings' output replaced, so the model builds its attention mask and any
relative position bias as it always does: ``top_states(m, lower_states(m, ids, mask, b), mask,
b)`` equals ``m(ids, mask).last_hidden_state`` up to float rounding, for BERT, MPNet and any
encoder with an ``embeddings`` module and one stack of layers.

Example::

    below = cut_point(encoder, top=2)                        # 4 for a 6-layer model
    hidden = lower_states(encoder, ids, mask, below)         # (batch, seq, dim), no grad
    last = top_states(encoder, hidden, mask, below)          # (batch, seq, dim), trains
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import torch
from torch import nn

from workbench.errors import InputError, ModelLoadError
from workbench.finetune.training.model_io import transformer_layers


def cut_point(encoder: nn.Module, top: int) -> int:
    """The number of layers below the ``top`` trained ones.

    Raises:
        InputError: ``top`` is not between 1 and the model's number of layers.
    """
    n = len(transformer_layers(encoder))
    if not 1 <= top <= n:
        raise InputError(f"top_layers={top}, but the model has {n} layers: choose 1 to {n}.")
    return n - top


def embeddings_module(encoder: nn.Module) -> nn.Module:
    """The module that turns token ids into the first hidden states (``embeddings`` of the
    bare transformer, under a LoRA wrapper too).

    Raises:
        ModelLoadError: the model has no such module (it cannot be cut).
    """
    get_base = getattr(encoder, "get_base_model", None)
    base = get_base() if callable(get_base) else encoder
    found = getattr(base, "embeddings", None)
    if not isinstance(found, nn.Module):
        raise ModelLoadError(
            f"{type(base).__name__} has no 'embeddings' module: its lower layers cannot be "
            "cached (train it without top_layers)."
        )
    return found


def frozen_modules(encoder: nn.Module, below: int) -> list[nn.Module]:
    """The modules below the cut: the embeddings and the ``below`` lowest layers."""
    return [embeddings_module(encoder), *list(transformer_layers(encoder))[:below]]


def top_parameter_names(encoder: nn.Module, top: int) -> set[str]:
    """The names (as ``encoder.named_parameters()`` gives them) of the parameters of its ``top``
    highest layers."""
    layers = list(transformer_layers(encoder))[cut_point(encoder, top) :]
    ids = {id(p) for layer in layers for p in layer.parameters()}
    return {name for name, p in encoder.named_parameters() if id(p) in ids}


@contextmanager
def _layers_cut(encoder: nn.Module, keep: slice) -> Iterator[None]:
    """The encoder with only ``layers[keep]`` in its layer stack, for the duration."""
    layers = transformer_layers(encoder)
    for module in encoder.modules():
        for name, child in module.named_children():
            if child is layers:
                module._modules[name] = nn.ModuleList(list(layers)[keep])
                try:
                    yield
                finally:
                    module._modules[name] = layers
                return
    raise ModelLoadError(f"the layer stack of {type(encoder).__name__} has no owner module")


@torch.no_grad()
def lower_states(
    encoder: nn.Module, ids: torch.Tensor, mask: torch.Tensor, below: int
) -> torch.Tensor:
    """The hidden states entering layer ``below`` ``(batch, seq, dim)``: the embeddings and
    the ``below`` lowest layers of ``encoder`` in eval mode (no dropout), without gradient."""
    was_training = encoder.training
    encoder.eval()
    try:
        with _layers_cut(encoder, slice(0, below)):
            out = encoder(input_ids=ids, attention_mask=mask).last_hidden_state
    finally:
        encoder.train(was_training)
    return out


def top_states(
    encoder: nn.Module, hidden: torch.Tensor, mask: torch.Tensor, below: int
) -> torch.Tensor:
    """The last hidden state ``(batch, seq, dim)`` of ``encoder`` from the hidden states
    ``hidden`` ``(batch, seq, dim)`` entering layer ``below``: only the layers from ``below``
    up run (in the encoder's own mode, dropout included when training)."""
    emb = embeddings_module(encoder)
    handle = emb.register_forward_hook(lambda module, args, output: hidden.to(output.dtype))
    try:
        with _layers_cut(encoder, slice(below, None)):
            ids = torch.zeros(mask.shape, dtype=torch.long, device=mask.device)
            return encoder(input_ids=ids, attention_mask=mask).last_hidden_state
    finally:
        handle.remove()
