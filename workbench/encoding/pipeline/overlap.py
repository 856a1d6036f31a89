"""The encoder's batches run with the stages of consecutive batches overlapping.

:class:`PipelineConfig` is the one option that chooses how
:meth:`workbench.encoding.encoder.Encoder.encode` runs: the plain loop (each batch built, run,
pooled and written in turn, in the calling thread), or :func:`run_overlapped`, by default on
cuda. Same batches, same stage functions; on the CPU the vectors are bit-identical.

:func:`run_overlapped` passes each batch through the same six stages as the plain loop:
**prep** (pad, pooling plan, output rows: :meth:`~workbench.encoding.batching.BatchBuilder.build`),
**h2d** (:meth:`~workbench.encoding.batching.Batch.to_device`), **forward** (the model, all hidden
states), **pooling** (:func:`~workbench.encoding.pooling.pool_words`, on the device, cast there
to the store dtype), **d2h** and **write** (the rows into the output), but:

- a producer thread (:class:`~workbench.encoding.pipeline.threads.Prefetcher`) tokenizes the
  input chunk by chunk (:class:`~workbench.encoding.pipeline.stream.BatchStream`) and builds the
  next ``prefetch`` batches while the device runs this one, each packed into one host buffer
  (pinned on cuda: :meth:`~workbench.encoding.batching.Batch.pack`) that reaches the device in
  one non-blocking copy; numpy's copies and the Rust tokenizer release the GIL;
- the pooled rows go to pinned host buffers on a side stream (:func:`to_host`) while the next
  batch computes, and a writer thread (:class:`~workbench.encoding.pipeline.threads.RowWriter`)
  waits for each copy and writes its rows into the output; at most ``in_flight`` batches wait
  for it.

Failures: an exception in the producer, the forward pass or the writer ends the run; both
threads are stopped and joined before it reaches the caller, as the project's error
(:func:`~workbench.encoding.batching.batch_error`). ``KeyboardInterrupt`` stops and joins them
the same way.

Example::

    stream = BatchStream(words, preparer, make_builder, first_words=2048)
    with torch.inference_mode():
        run_overlapped(stream, runner, [0, 6], torch.from_numpy(out), "cuda", PipelineConfig())
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Sequence
from contextlib import ExitStack
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from workbench.encoding.batching import (
    GPU_MIN_FILL,
    MIN_FILL,
    Batch,
    BatchBuilder,
    PackedBatch,
    batch_error,
)
from workbench.encoding.pipeline.stream import first_chunk_words
from workbench.encoding.pipeline.threads import Clock, Prefetcher, RowWriter
from workbench.encoding.pooling import pool_words
from workbench.encoding.runner import ForwardOutput

if TYPE_CHECKING:
    import torch

#: What :func:`run_overlapped` runs: each group of windows with the builder that builds it.
Work = Iterable[tuple[BatchBuilder, np.ndarray]]


@dataclass(frozen=True)
class PipelineConfig:
    """How ``Encoder.encode`` runs its batches: the plain loop or overlapped.

    Attributes:
        overlap: ``True``: :func:`run_overlapped` (a producer and a writer thread, the input
            tokenized chunk by chunk); ``False``: the plain loop in the calling thread (on a
            CPU a thread only competes with torch's threads for the cores); ``None``: overlap
            on cuda only.
        prefetch: batches the producer thread prepares ahead of the model (overlapped).
        in_flight: batches waiting for the writer thread at most (bounds the pinned buffers).
        stream_words: words in the input's first chunk when overlapped, each later chunk
            twice the one before (:mod:`workbench.encoding.pipeline.stream`); ``0``: the whole
            input at once; ``None``: a quarter of the batch budget on cuda
            (:func:`~workbench.encoding.pipeline.stream.first_chunk_words`), 0 elsewhere.
            The plain loop tokenizes the whole input at once.
        min_fill: share of the budget a batch holds before a drop in length closes it
            (:func:`~workbench.encoding.batching.plan_batches`); ``None``:
            :data:`~workbench.encoding.batching.GPU_MIN_FILL` on cuda, ``MIN_FILL`` elsewhere.

    Example: ``Encoder(device="cuda", pipeline=PipelineConfig(overlap=False))`` runs the plain
    loop on a GPU.
    """

    overlap: bool | None = None  # None: on cuda only
    prefetch: int = 4  # batches prepared ahead by the producer thread
    in_flight: int = 3  # batches queued for the writer thread at most
    stream_words: int | None = None  # None: max_batch_tokens // 4 on cuda, 0 (one chunk) elsewhere
    min_fill: float | None = None  # None: 0.25 on cuda, 0.1 elsewhere

    def overlap_on(self, device: str) -> bool:
        """Whether batches run overlapped on ``device``."""
        return device.startswith("cuda") if self.overlap is None else bool(self.overlap)

    def stream_on(self, device: str, max_batch_tokens: int) -> int:
        """Words in the first chunk of an input on ``device`` (0: one chunk, as always in the
        plain loop)."""
        if not self.overlap_on(device):
            return 0
        if self.stream_words is not None:
            return max(0, int(self.stream_words))
        return first_chunk_words(max_batch_tokens) if device.startswith("cuda") else 0

    def min_fill_on(self, device: str) -> float:
        """The share of the budget a batch holds before a drop in length closes it."""
        if self.min_fill is not None:
            return min(max(float(self.min_fill), 0.0), 1.0)
        return GPU_MIN_FILL if device.startswith("cuda") else MIN_FILL


def to_host(pooled: torch.Tensor, stream: Any) -> tuple[torch.Tensor, Any]:
    """Start copying pooled rows to the host; returns ``(host tensor, ready event or None)``.

    On cuda the copy goes into a pinned buffer on ``stream`` (a side stream, after the
    compute stream's work so far), so it overlaps the next batch; wait on the event before
    reading the buffer. On the CPU the rows already are on the host (no copy); elsewhere
    (mps) the copy is synchronous.
    """
    import torch

    if pooled.device.type == "cpu":
        return pooled, None
    if pooled.device.type != "cuda" or stream is None:
        return pooled.to("cpu"), None
    stream.wait_stream(torch.cuda.current_stream(pooled.device))
    with torch.cuda.stream(stream):
        host = torch.empty(pooled.shape, dtype=pooled.dtype, pin_memory=True)
        host.copy_(pooled, non_blocking=True)
        ready = torch.cuda.Event()
        ready.record(stream)
    pooled.record_stream(stream)  # its memory is not reused before the copy is done
    return host, ready


def run_overlapped(
    work: Work,
    forward: Callable[[torch.Tensor, torch.Tensor | None], ForwardOutput],
    layers: Sequence[int],
    dest: torch.Tensor,
    device: str,
    config: PipelineConfig,
    on_batch: Callable[[int], None] | None = None,
    seconds: dict[str, float] | None = None,
) -> None:
    """Run every batch through the model and write its kept words into ``dest``, the stages
    of consecutive batches overlapping (see the module's notes).

    Args:
        work: each batch's windows with the builder that builds it, in run order
            (a :class:`~workbench.encoding.pipeline.stream.BatchStream`); iterated by the
            producer thread, so a generator may tokenize as it goes.
        forward: ``forward(ids, mask)`` -> the model's output with every hidden state (``mask``
            None: no padding).
        layers: hidden-state indices to keep, in output order.
        dest: the output ``(n_rows, len(layers), dim)`` CPU tensor; its dtype is the store
            dtype (float32 or float16).
        device: where the model runs.
        config: ``prefetch`` and ``in_flight``.
        on_batch: called with each batch's word count (:attr:`Batch.n_owned`) once it is
            running.
        seconds: gets each thread's seconds per activity (``main: wait for a batch``,
            ``main: launch``, ``main: wait for the writer``, ``main: finish``, ``producer:
            prepare``, ``writer: write``, ...; :class:`~workbench.encoding.pipeline.threads.Clock`),
            for a profile of the run.

    Raises:
        WorkbenchError: bad input found while preparing a batch (as raised there);
            :class:`EncodingError`: an out-of-memory or another failure in a stage.
    """
    import torch

    cuda = device.startswith("cuda")
    on_host = device == "cpu"

    def produce(item: tuple[BatchBuilder, np.ndarray]) -> tuple[Batch, PackedBatch | None]:
        batch = item[0].build(item[1])
        return batch, (None if on_host or not batch.plan.n_words else batch.pack(pin=cuda))

    stream = torch.cuda.Stream(device=device) if cuda else None
    clock = Clock(seconds)
    batch: Batch | None = None
    stage = "prep"
    with ExitStack() as threads:  # on leaving: the writer, then the producer, stopped and joined
        batches = threads.enter_context(Prefetcher(produce, work, config.prefetch, clock=clock))
        writer = threads.enter_context(RowWriter(dest, config.in_flight, clock=clock))
        try:
            t = time.perf_counter()
            for batch, packed in batches:
                t = clock.add("main: wait for a batch", t)
                if batch.plan.n_words:
                    stage = "h2d"
                    on_device = batch.to_device(device, packed)
                    stage = "forward"
                    out = forward(on_device.ids, on_device.mask)
                    stage = "pooling"
                    hidden = [out.hidden_states[k] for k in layers]
                    pooled = pool_words(on_device.index, hidden, dest.dtype)
                    del out, hidden
                    stage = "write"
                    host, ready = to_host(pooled, stream)
                    t = clock.add("main: launch", t)
                    writer.put(torch.from_numpy(batch.rows), host, ready)
                    t = clock.add("main: wait for the writer", t)
                if on_batch is not None:
                    on_batch(batch.n_owned)
                stage, batch = "prep", None
                t = time.perf_counter()
            stage = "write"
            writer.finish()
            clock.add("main: finish", t)
        except Exception as exc:
            raise batch_error(exc, stage, batch) from exc
