"""The eager forward pass replayed from CUDA graphs: one graph per batch shape.

On a GPU the encoder's forward pass of a small model is bound by the host, not the device:
each of its ~150 operations is queued by Python, and the thread that queues them shares the
interpreter with the pipeline's producer and writer threads (docs/benchmarks.md, "The batch
pipeline and the GPU"). A CUDA graph records a forward pass's kernels once and launches all
of them again in one call, so a batch costs the launching thread a copy of its inputs and one
replay.

:class:`GraphedForward` keeps, per calling thread, one captured graph per input shape
``(batch, width)`` and whether it has a mask: the model's own eager kernels (transformers
skips its host-side mask checks while a stream is capturing), no compiler. The encoder pads
batches to few shapes for it (``shapes="bucketed"``: 20 widths for a 512-token model, row
counts in powers of two; :mod:`workbench.encoding.batching`) and measures its batch budget
through the graphs. A graph's inputs and hidden states live at fixed addresses: each call
copies its inputs in, replays, and returns hidden states that the next call on this thread
overwrites, so the caller reads them (queues its pooling on the same stream) before calling
again, as :func:`workbench.encoding.pipeline.run_batches` does. Graphs of one thread share
one memory pool (safe: one graph runs at a time, and its outputs are read before the next);
threads do not share graphs or pools.

Memory: each graph holds its hidden states, ``(n_layers + 1) x batch x width x dim``
elements (a full batch: 88 MB for the packaged model at a 16,384-token budget in bfloat16;
654 MB for a 12-layer, 768-wide model at 32,768 tokens), for as long as the encoder lives; the
graphs of one width hold at most two full batches' worth (rows in powers of two), and 20,000
SemCor sentences meet 17.5 full batches' worth in all. When a capture runs out of memory the
runner drops the thread's graphs (:meth:`GraphedForward.clear`) and runs that batch eagerly.

Example::

    graphed = GraphedForward(model)              # model on cuda, in eval mode
    out = graphed(ids, mask)                     # first call with this shape: captures
    pooled = pool(out.hidden_states[6])          # read before the next call
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass

import torch

#: ``(batch, width, has a mask)``: what one graph is captured for.
ShapeKey = tuple[int, int, bool]


@dataclass(frozen=True)
class GraphOutput:
    """What a replay gives: every hidden state, ``(batch, width, dim)`` each, the embedding
    output first (the graph's own memory: valid until this thread's next call)."""

    hidden_states: tuple[torch.Tensor, ...]


@dataclass(frozen=True)
class Captured:
    """One captured forward pass.

    Attributes:
        ids, mask: the graph's input buffers, ``(batch, width)`` int64 (mask None: the graph
            was captured without one).
        hidden_states: its output buffers.
        replay: runs the graph on what the input buffers hold now.
    """

    ids: torch.Tensor
    mask: torch.Tensor | None
    hidden_states: tuple[torch.Tensor, ...]
    replay: Callable[[], None]


class GraphedForward:
    """``model(input_ids, attention_mask, output_hidden_states=True)`` replayed from CUDA
    graphs, one per input shape and calling thread, captured the first time a shape comes.

    Args:
        model: a HuggingFace encoder on a CUDA device, in eval mode. Its weights are read at
            the addresses they had at capture: updating them in place is seen by later
            replays, replacing them is not.
        warmup: eager runs of a new shape before capturing it (on a side stream, as CUDA
            graphs require: libraries allocate their workspaces there, not in the graph).

    Attributes:
        captures: graphs captured so far, over all threads.
    """

    def __init__(self, model: torch.nn.Module, warmup: int = 1) -> None:
        self.model = model
        self.warmup = warmup
        self.captures = 0
        self._local = threading.local()  # this thread's graphs and memory pool
        self._lock = threading.Lock()  # counts captures across threads

    def _graphs(self) -> dict[ShapeKey, Captured]:
        graphs = getattr(self._local, "graphs", None)
        if graphs is None:
            graphs = self._local.graphs = {}
        return graphs

    def __call__(self, ids: torch.Tensor, mask: torch.Tensor | None) -> GraphOutput:
        """Every hidden state for ``(batch, width)`` ``ids`` (``mask`` None: no padding)."""
        graphs = self._graphs()
        key: ShapeKey = (int(ids.shape[0]), int(ids.shape[1]), mask is not None)
        with torch.inference_mode():
            graph = graphs.get(key)
            if graph is None:
                graph = self.capture(ids, mask)
                graphs[key] = graph
                with self._lock:
                    self.captures += 1
            graph.ids.copy_(ids, non_blocking=True)
            if graph.mask is not None and mask is not None:
                graph.mask.copy_(mask, non_blocking=True)
            graph.replay()
        return GraphOutput(graph.hidden_states)

    @property
    def shapes(self) -> list[ShapeKey]:
        """The shapes this thread has graphs for."""
        return list(self._graphs())

    def clear(self) -> None:
        """Drop this thread's graphs and their memory pool: its next call captures again."""
        self._local.graphs = {}
        self._local.pool = None

    def capture(self, ids: torch.Tensor, mask: torch.Tensor | None) -> Captured:
        """Capture the forward pass for ``ids``' shape (and mask or none) in a new CUDA graph,
        sharing this thread's memory pool with its other graphs."""
        static_ids = ids.clone()
        static_mask = None if mask is None else mask.clone()

        def forward() -> tuple[torch.Tensor, ...]:
            out = self.model(
                input_ids=static_ids, attention_mask=static_mask, output_hidden_states=True
            )
            return tuple(out.hidden_states)

        # this thread's own side stream, for the warm-up and the capture: torch's default
        # capture stream is one per process, and two threads must not capture on one stream
        side = getattr(self._local, "stream", None)
        if side is None:
            side = self._local.stream = torch.cuda.Stream(device=ids.device)
        side.wait_stream(torch.cuda.current_stream(ids.device))
        with torch.cuda.stream(side):
            for _ in range(self.warmup):
                forward()
        torch.cuda.current_stream(ids.device).wait_stream(side)
        graph = torch.cuda.CUDAGraph()
        pool = getattr(self._local, "pool", None)
        # thread_local: the pipeline's other threads (pinning host buffers, waiting on copies)
        # go on while this one captures; nothing of theirs runs on the capturing stream
        with torch.cuda.graph(graph, pool=pool, stream=side, capture_error_mode="thread_local"):
            hidden = forward()
        if pool is None:
            self._local.pool = graph.pool()
        return Captured(static_ids, static_mask, hidden, graph.replay)
