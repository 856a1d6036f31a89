"""The encoder's forward pass on torch: the model with every hidden state, eagerly or through
``torch.compile`` (the other backend, ONNX Runtime, is
:class:`workbench.encoding.exported.runtime.OnnxModel`; both give a batch's pooled word rows
through ``pooled``, the one seam of the encoder's loop).

``compile=True`` runs the model through ``torch.compile`` (inductor, dynamic shapes, weights
frozen as constants), which fuses the model's element-wise work (bias adds, GELU, layer norm,
the attention reshapes) into the matrix products around it. Compiling is paid once per process
(less when inductor's on-disk cache is warm), so it is off by default; docs/benchmarks.md,
"Extraction", has what it gains. Batches of one sequence always run eagerly: torch specialises
sizes of 1, and a second graph for them would cost more than it saves. If compilation fails (no
C++ compiler, an operation inductor cannot handle), a warning says why and every batch runs
eagerly from then on. ``mps`` is never compiled.

Example::

    runner = ModelRunner(model, "cpu", compile=False)
    out = runner(ids, None)                  # ids (batch, width) int64; None: no padding
    out.hidden_states[0].shape               # (batch, width, dim): the embedding output
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, Protocol

import numpy as np

from workbench.encoding.batching import Batch
from workbench.encoding.pooling import pool_words
from workbench.encoding.stage_clock import no_clock

if TYPE_CHECKING:
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
        compile: run it through ``torch.compile`` (see the module's notes).

    Attributes:
        compiled: whether batches currently go through the compiled model.
        error: why compilation was abandoned, if it was.
    """

    def __init__(self, model: torch.nn.Module, device: str, compile: bool = False) -> None:
        self.model = model
        self.device = device
        self.error: str | None = None
        self._compiled: Callable[..., Any] | None = None  # torch.compile's wrapper
        if compile and device.startswith("mps"):
            self.error = "torch.compile is not used on mps"
            warnings.warn(f"compile=True ignored: {self.error}.", stacklevel=3)
        elif compile:
            import torch

            self._compiled = torch.compile(model, dynamic=True, options={"freezing": True})

    @property
    def compiled(self) -> bool:
        return self._compiled is not None

    def __call__(
        self, input_ids: torch.Tensor, attention_mask: torch.Tensor | None
    ) -> ForwardOutput:
        """The model's output for ``(batch, seq)`` ids; ``attention_mask`` None: no padding."""
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
                f"torch.compile failed ({self.error}); running the model uncompiled.",
                stacklevel=3,
            )
            return self.model(**kwargs)

    def pooled(
        self,
        batch: Batch,
        layers: Sequence[int],
        dtype: np.dtype,
        lap: Callable[[str], None] = no_clock,
    ) -> np.ndarray:
        """A batch's word rows ``(batch.plan.n_words, len(layers), dim)`` in ``dtype``, in the
        order of ``batch.rows``: moved to the device, run, pooled there, copied back; ``lap``
        is told as each of those stages ends (``h2d``, ``forward``, ``pooling``, ``d2h``:
        :mod:`workbench.encoding.stage_clock`)."""
        import torch

        with torch.inference_mode():
            on_device = batch.to_device(self.device)
            lap("h2d")
            out = self(on_device.ids, on_device.mask)
            lap("forward")
            hidden = [out.hidden_states[k] for k in layers]
            torch_dtype = torch.from_numpy(np.empty(0, dtype=dtype)).dtype
            pooled = pool_words(on_device.index, hidden, torch_dtype)
            del out, hidden
            lap("pooling")
            host = pooled.to("cpu").numpy()
            lap("d2h")
            return host
