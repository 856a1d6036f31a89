"""Run the encoder's forward pass eagerly or through ``torch.compile``.

``torch.compile`` (inductor, dynamic shapes, weights frozen as constants) fuses the model's
element-wise work (bias adds, GELU, layer norm, the attention reshapes) into the matrix
products around it. On the 2-core CPU of docs/benchmarks.md ``encode`` with the default model
runs about 10% faster once compiled; compiling costs 10-25 s once per process (the low end
when inductor's on-disk cache is warm), so it pays for long runs only and is off by default.

Batches of one sequence always run eagerly: torch specialises sizes of 1, and compiling a
second graph for them would cost more than it saves. If compilation fails (no C++ compiler,
an operation inductor cannot handle), a warning says why and every batch runs eagerly.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any, Protocol

import torch


class ForwardOutput(Protocol):
    """What callers read off the model's output (a ``transformers`` ``ModelOutput``)."""

    @property
    def hidden_states(self) -> tuple[torch.Tensor, ...]:
        """Every hidden state, ``(batch, seq, dim)`` each: the embedding output first."""
        ...


class ModelRunner:
    """Calls ``model(input_ids, attention_mask, output_hidden_states=True)``.

    Args:
        model: a loaded HuggingFace encoder, in eval mode, on ``device``.
        device: where it runs (``mps`` is never compiled).
        compile: compile the forward pass with ``torch.compile``.

    Attributes:
        compiled: whether batches currently go through the compiled graph.
        error: why compilation was abandoned, if it was.
    """

    def __init__(self, model: torch.nn.Module, device: str, compile: bool = False) -> None:
        self.model = model
        self.error: str | None = None
        self._compiled: Callable[..., Any] | None = None  # torch.compile's wrapper
        if compile and device.startswith("mps"):
            self.error = "torch.compile is not used on mps"
            warnings.warn(f"compile=True ignored: {self.error}.", stacklevel=3)
        elif compile:
            self._compiled = torch.compile(model, dynamic=True, options={"freezing": True})

    @property
    def compiled(self) -> bool:
        return self._compiled is not None

    def __call__(self, input_ids: torch.Tensor, attention_mask: torch.Tensor) -> ForwardOutput:
        kwargs = {
            "input_ids": input_ids,
            "attention_mask": attention_mask,
            "output_hidden_states": True,
        }
        if self._compiled is None or input_ids.shape[0] < 2:
            return self.model(**kwargs)
        try:
            return self._compiled(**kwargs)
        except Exception as exc:  # noqa: BLE001 - any compiler failure: eager is the reference
            self._compiled = None
            self.error = f"{type(exc).__name__}: {str(exc).strip().splitlines()[0][:300]}"
            warnings.warn(
                f"torch.compile failed ({self.error}); running the model uncompiled.", stacklevel=3
            )
            return self.model(**kwargs)
