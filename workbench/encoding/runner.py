"""Run the encoder's forward pass eagerly, through ``torch.compile``, or from CUDA graphs.

``torch.compile`` (inductor, weights frozen as constants) fuses the model's element-wise work
(bias adds, GELU, layer norm, the attention reshapes) into the matrix products around it.
Modes (:data:`CompileMode`, torch's names, and ``cudagraphs``):

- ``default`` (``compile=True``): dynamic shapes, one graph for every batch shape. Compiling
  is paid once per process (less when inductor's on-disk cache is warm) and the compiled model
  is only somewhat faster on a CPU, so it pays for long runs only and is off by default
  (docs/benchmarks.md, "Extraction", has the figures).
- ``reduce-overhead`` / ``max-autotune``: also CUDA graphs on a GPU (each input shape is
  captured once and replayed: no per-kernel launch cost), with shapes left to torch's
  automatic dynamism; the encoder then pads batches to few distinct shapes
  (``shapes="bucketed"``, :mod:`workbench.encoding.batching`). Each replay reuses the graph's
  output memory, so a batch's hidden states are read (pooled) before the next batch runs.
- ``max-autotune-no-cudagraphs``: inductor's autotuned kernels without CUDA graphs.
- ``cudagraphs``: no compiler: the model's own eager kernels captured in one CUDA graph per
  bucketed batch shape and replayed (:mod:`workbench.encoding.graphs`), so a batch costs the
  launching thread one replay instead of ~150 operations queued from Python. cuda only;
  elsewhere a warning says so and the model runs eagerly.

Batches of one sequence always run eagerly when compiled: torch specialises sizes of 1, and
compiling a second graph for them would cost more than it saves. If compilation or a capture
fails (no C++ compiler, an operation inductor cannot handle, a model that waits for the device
inside its forward pass), a warning says why and every batch runs eagerly. A capture that runs
out of memory drops the thread's graphs instead (their memory is freed, that batch runs
eagerly, later batches are captured again), so an out-of-memory of the batch itself surfaces
as it would eagerly (the budget's measurement stops there; ``encode`` names the batch).
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any, Literal, Protocol

import torch

from workbench.encoding.budget import is_out_of_memory
from workbench.encoding.graphs import GraphedForward
from workbench.errors import InputError

CompileMode = Literal[
    "default", "reduce-overhead", "max-autotune", "max-autotune-no-cudagraphs", "cudagraphs"
]
COMPILE_MODES: tuple[str, ...] = (
    "default",
    "reduce-overhead",
    "max-autotune",
    "max-autotune-no-cudagraphs",
    "cudagraphs",
)
CUDA_GRAPH_MODES: tuple[str, ...] = ("reduce-overhead", "max-autotune", "cudagraphs")


def compile_mode(compile: bool | str) -> CompileMode | None:
    """The torch.compile mode of an ``Encoder(compile=...)`` value: ``False`` -> None (eager),
    ``True`` -> ``default``, a mode name -> itself.

    Raises:
        InputError: an unknown mode.
    """
    if compile is False:
        return None
    if compile is True:
        return "default"
    if compile not in COMPILE_MODES:
        raise InputError(
            f"Unknown compile mode '{compile}'; choose one of {', '.join(COMPILE_MODES)} "
            "(or True / False)."
        )
    return compile  # type: ignore[return-value]


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
        device: where it runs (``mps`` is never compiled; ``cudagraphs`` needs cuda).
        compile: ``False`` (eager), ``True`` (``default``) or a :data:`CompileMode`.

    Attributes:
        mode: the compile mode in use (None: eager).
        compiled: whether batches currently go through the compiled graph or the CUDA graphs.
        graphs: the CUDA graphs of ``cudagraphs`` (None in other modes).
        error: why compilation or capturing was abandoned, if it was.
    """

    def __init__(
        self, model: torch.nn.Module, device: str, compile: bool | CompileMode = False
    ) -> None:
        self.model = model
        self.mode = compile_mode(compile)
        self.error: str | None = None
        self.graphs: GraphedForward | None = None
        self._compiled: Callable[..., Any] | None = None  # torch.compile's wrapper
        if self.mode is not None and device.startswith("mps"):
            self.error = "torch.compile is not used on mps"
        elif self.mode == "cudagraphs" and not device.startswith("cuda"):
            self.error = f"CUDA graphs need a cuda device, not {device}"
        elif self.mode == "cudagraphs":
            self.graphs = GraphedForward(model)
        elif self.mode == "default":
            self._compiled = torch.compile(model, dynamic=True, options={"freezing": True})
        elif self.mode is not None:  # torch's automatic dynamism: graphs per bucketed shape
            self._compiled = torch.compile(model, mode=self.mode)
        if self.error is not None:
            warnings.warn(f"compile={compile!r} ignored: {self.error}.", stacklevel=3)
            self.mode = None

    @property
    def cuda_graphs(self) -> bool:
        """Whether the compile mode captures CUDA graphs (on a GPU)."""
        return self.mode in CUDA_GRAPH_MODES

    @property
    def compiled(self) -> bool:
        return self._compiled is not None or self.graphs is not None

    def __call__(
        self, input_ids: torch.Tensor, attention_mask: torch.Tensor | None
    ) -> ForwardOutput:
        """The model's output for ``(batch, seq)`` ids; ``attention_mask`` None: no padding."""
        if self.graphs is not None:
            try:
                return self.graphs(input_ids, attention_mask)
            except Exception as exc:  # noqa: BLE001 - any capture failure: eager is the reference
                if is_out_of_memory(exc):  # the graphs' memory: free it, this batch runs eagerly
                    self.graphs.clear()
                else:
                    self.graphs = None
                    self._fall_back("CUDA graph capture", exc)
        kwargs = {
            "input_ids": input_ids,
            "attention_mask": attention_mask,
            "output_hidden_states": True,
        }
        if self._compiled is None or input_ids.shape[0] < 2:
            return self.model(**kwargs)
        try:
            if self.cuda_graphs:  # a new step: the previous replay's outputs may be reused
                torch.compiler.cudagraph_mark_step_begin()
            return self._compiled(**kwargs)
        except Exception as exc:  # noqa: BLE001 - any compiler failure: eager is the reference
            self._compiled = None
            self._fall_back("torch.compile", exc)
            return self.model(**kwargs)

    def _fall_back(self, what: str, exc: Exception) -> None:
        """Record and warn that ``what`` failed with ``exc``: eager from now on."""
        self.error = f"{type(exc).__name__}: {str(exc).strip().splitlines()[0][:300]}"
        warnings.warn(f"{what} failed ({self.error}); running the model uncompiled.", stacklevel=4)
