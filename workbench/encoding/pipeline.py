"""Run the encoder's batches as a pipeline that keeps the device busy.

Each batch passes six stages: **prep** (pad, pooling plan, output rows:
:class:`~workbench.encoding.batching.BatchBuilder`), **h2d** (inputs to the device),
**forward** (the model, all hidden states), **pooling** (subwords -> kept words and kept
layers, on the device, cast there to the store dtype:
:func:`~workbench.encoding.pooling.pool_words`), **d2h** (pooled rows to the host) and
**write** (rows into the output, in RAM or a memory map).

On a CUDA device the stages overlap (``transfer="staged"``, ``prefetch=4``):

- a producer thread (:class:`~workbench.encoding.workers.Prefetcher`) prepares the next
  batches while the current one runs, each packed into one pinned int64 host buffer (ids,
  mask, pooling indices: :func:`pack`); numpy's copies release the GIL, and so does the Rust
  tokenizer, which the same thread runs on the input's next chunk
  (:mod:`workbench.encoding.stream`) while the device works on this one;
- that buffer goes to the device in one non-blocking copy (:func:`to_device`);
- the pooled rows go to pinned host buffers on a side stream (:func:`to_host`) while the next
  batch computes, and a writer thread (:class:`~workbench.encoding.workers.RowWriter`) waits
  for each copy and writes its rows into the output; at most ``in_flight`` batches wait for it.

With ``PipelineConfig(producer="process")`` the producer's work (tokenizing, planning, building
each batch) runs in a worker process instead and a receiver thread here reads each batch into
pinned buffers (:mod:`workbench.encoding.batch_process`): the launching thread then shares the
GIL with no Python-heavy thread; same batches, same vectors.

On the CPU the same functions run in the calling thread (``prefetch=0``,
``transfer="direct"``): a producer or writer thread only competes with torch's threads for
the cores there (docs/benchmarks.md, "Extraction"). Either way the vectors are bit-identical
to a plain loop over the batches on the CPU.

Failures: an exception in the producer, the forward pass or the writer ends the run; both
threads are stopped and joined before it reaches the caller, as the project's error (a
:class:`~workbench.errors.WorkbenchError` passes unchanged, an out-of-memory or any other
failure becomes an :class:`~workbench.errors.EncodingError` naming the batch).
``KeyboardInterrupt`` stops and joins them the same way.

Example::

    builder = BatchBuilder(prep, specials, layout.rows, "mean")
    with torch.inference_mode():
        work = [(builder, batch) for batch in builder.batches()]
        run_batches(work, runner, [0, 6], torch.from_numpy(out), "cpu")
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Sequence
from contextlib import AbstractContextManager, ExitStack
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

import numpy as np

from workbench.encoding.batching import GPU_MIN_FILL, MIN_FILL, BatchBuilder, HostBatch, Shapes
from workbench.encoding.pooling import PoolingIndex, pool_words
from workbench.encoding.runner import ForwardOutput
from workbench.encoding.stream import first_chunk_words
from workbench.encoding.workers import Clock, Prefetcher, RowWriter
from workbench.errors import EncodingError, InputError, WorkbenchError

if TYPE_CHECKING:
    import torch

Transfer = Literal["auto", "direct", "staged"]
#: ``input`` (checking it, the output rows and array), ``tokenize`` and ``layout`` (each
#: chunk's tokens, windows and batches) and ``finish`` (the result) are timed by
#: ``Encoder.encode``; the rest per batch by :func:`run_batches_timed`.
STAGES: tuple[str, ...] = (
    "input", "tokenize", "layout", "prep", "h2d", "forward", "pooling", "d2h", "write", "finish",
)  # fmt: skip
#: What :func:`run_batches` runs: each batch (window indices) with the builder that prepares it.
Work = Iterable[tuple[BatchBuilder, np.ndarray]]
Producer = Literal["thread", "process"]


@dataclass(frozen=True)
class PipelineConfig:
    """How :func:`run_batches` overlaps the stages of the batches.

    Attributes:
        prefetch: batches a producer thread prepares ahead of the model; ``None``: 4 on cuda,
            0 elsewhere (prepared in the calling thread, just before they run).
        transfer: ``staged``: pooled rows go to host buffers (pinned, on a side stream, on
            cuda) and a writer thread writes them into the output; ``direct``: the loop
            writes them itself; ``auto``: staged on cuda, direct elsewhere.
        in_flight: staged batches waiting for the writer at most (bounds the host buffers).
        shapes: ``exact`` pads each batch to its longest window; ``bucketed`` to few
            distinct shapes (for CUDA graphs); ``auto``: bucketed when the model is compiled
            with ``mode="reduce-overhead"``, else exact.
        stream_words: words in the input's first chunk, tokenized before the first batch
            runs; each later chunk is twice the one before, tokenized by the producer while
            the device runs the one before (:mod:`workbench.encoding.stream`); ``0``: the
            whole input at once; ``None``: a quarter of the batch budget on cuda
            (:func:`~workbench.encoding.stream.first_chunk_words`), 0 elsewhere.
        min_fill: share of the budget an ``exact`` batch holds before a drop in length
            closes it (:func:`~workbench.encoding.batching.plan_batches`); ``None``:
            :data:`~workbench.encoding.batching.GPU_MIN_FILL` on cuda, ``MIN_FILL`` elsewhere.
        producer: where batches prepared ahead (``prefetch`` > 0) are prepared: ``thread``, a
            producer thread of this process; ``process``, a worker process
            (:mod:`workbench.encoding.batch_process`: tokenizing and building leave this
            process's GIL to the thread launching the device's work; same batches, same
            vectors).
        prefault: zero an in-RAM output with torch's threads before the run, so the writer
            copies into pages already mapped rather than faulting each one in as it writes
            (docs/benchmarks.md, "The batch pipeline and the GPU": half of a copy into fresh
            memory is the faults); a memory-mapped output is never zeroed (that would write
            the file twice). Off by default until a GPU measures it.
    """

    prefetch: int | None = None  # None: 4 on cuda, 0 (in the calling thread) elsewhere
    transfer: Transfer = "auto"  # auto: staged on cuda, direct elsewhere
    in_flight: int = 3  # staged batches queued for the writer thread at most
    shapes: Literal["auto"] | Shapes = "auto"  # auto: bucketed for CUDA graphs only
    stream_words: int | None = None  # None: max_batch_tokens // 4 on cuda, 0 (one chunk) elsewhere
    min_fill: float | None = None  # None: 0.25 on cuda, 0.1 elsewhere
    producer: Producer = "thread"  # or "process": batches prepared in a worker process
    prefault: bool = False  # zero an in-RAM output in parallel before the run

    def __post_init__(self) -> None:
        if self.producer not in ("thread", "process"):
            raise InputError(f"Unknown producer '{self.producer}'; choose 'thread' or 'process'.")

    def prefetch_on(self, device: str) -> int:
        """Batches prepared ahead on ``device`` (0: in the calling thread)."""
        if self.prefetch is not None:
            return max(0, int(self.prefetch))
        return 4 if device.startswith("cuda") else 0

    def stream_on(self, device: str, max_batch_tokens: int) -> int:
        """Words in the first chunk of an input on ``device`` (0: one chunk)."""
        if self.stream_words is not None:
            return max(0, int(self.stream_words))
        return first_chunk_words(max_batch_tokens) if device.startswith("cuda") else 0

    def min_fill_on(self, device: str) -> float:
        """The share of the budget a batch holds before a drop in length closes it."""
        if self.min_fill is not None:
            return min(max(float(self.min_fill), 0.0), 1.0)
        return GPU_MIN_FILL if device.startswith("cuda") else MIN_FILL

    def staged_on(self, device: str) -> bool:
        """Whether pooled rows are staged and written by a writer thread on ``device``."""
        if self.transfer == "auto":
            return device.startswith("cuda")
        return self.transfer == "staged"


@dataclass
class StageTimes:
    """Where an encoding call's time goes: each stage's seconds (:data:`STAGES`) with the
    stages run one after another (:func:`run_batches_timed`), or, ``overlapped``, what each
    thread of the real, overlapped run (:func:`run_batches`) did and waited for.

    Attributes:
        seconds: stage -> seconds, summed over the batches (``overlapped``: only the stages
            timed outside the batches: input, tokenize and layout (on the producer thread
            when streamed; in a worker process, its ``worker: input`` in ``threads``), finish).
        batches, tokens: batches run and subwords they held (specials, padding excluded; in
            turn only).
        overlapped: profile the overlapped run instead of running the stages in turn.
        threads: ``overlapped``: ``"thread: activity"`` -> seconds, for the calling thread
            (``main: wait for a batch``, ``main: launch`` (inputs to the device, the forward
            pass, pooling and the copy back queued; the forward waits for the device where
            the model synchronises), ``main: wait for the writer``, ``main: finish``; without
            a writer thread, as on a CPU, ``main: run and write``), the producer's and the
            writer's (:class:`~workbench.encoding.workers.Prefetcher`,
            :class:`~workbench.encoding.workers.RowWriter`).
    """

    seconds: dict[str, float] = field(default_factory=lambda: dict.fromkeys(STAGES, 0.0))
    batches: int = 0
    tokens: int = 0
    overlapped: bool = False
    threads: dict[str, float] = field(default_factory=dict)

    def shares(self) -> dict[str, float]:
        """Each stage's fraction of the total."""
        total = sum(self.seconds.values()) or 1.0
        return {k: v / total for k, v in self.seconds.items()}


@dataclass(frozen=True)
class PackedBatch:
    """A :class:`HostBatch`'s arrays in two host buffers, each copied to the device at once.

    Attributes:
        ints: ``(2 * batch * width + n_single + 2 * n_parts,)`` int64: ids, mask, single
            positions, multi positions, multi segments (pinned for a CUDA device).
        weights: ``(n_parts,)`` float32 multi weights.
        shape: ``(batch, width)`` of ids and mask.
        sizes: length of each of the five parts of ``ints``.
        n_multi: averaged words.
    """

    ints: torch.Tensor
    weights: torch.Tensor
    shape: tuple[int, int]
    sizes: tuple[int, ...]
    n_multi: int


@dataclass(frozen=True)
class DeviceBatch:
    """A batch's model inputs ``(batch, width)`` and pooling indices, on the device; ``mask``
    is None for a batch without padding."""

    ids: torch.Tensor
    mask: torch.Tensor | None
    index: PoolingIndex


def pack(hb: HostBatch, pin: bool) -> PackedBatch:
    """Copy a batch's arrays into one int64 and one float32 host buffer (pinned if ``pin``),
    so that it reaches the device in two non-blocking copies."""
    import torch

    plan = hb.plan
    parts = hb.device_arrays()
    sizes = tuple(len(p) for p in parts)
    ints = torch.empty(sum(sizes), dtype=torch.int64, pin_memory=pin)
    np.concatenate(parts, out=ints.numpy())
    weights = torch.empty(len(plan.multi_weights), dtype=torch.float32, pin_memory=pin)
    weights.numpy()[:] = plan.multi_weights
    rows, width = hb.ids.shape
    return PackedBatch(ints, weights, (rows, width), sizes, len(plan.multi_words))


def to_device(hb: HostBatch, packed: PackedBatch | None, device: str) -> DeviceBatch:
    """The batch on ``device``: a packed batch in two non-blocking copies (asynchronous from
    pinned memory), else (CPU) tensors sharing the host arrays' memory.

    A batch without padding gets no mask: what transformers does itself after checking the
    mask's values (``mask.all()``), a check that on a GPU waits for all queued work; with
    SDPA it also allows the fused kernels that take no mask. Same results.
    """
    import torch

    if packed is None:
        mask = torch.from_numpy(hb.mask) if hb.padded else None
        return DeviceBatch(torch.from_numpy(hb.ids), mask, PoolingIndex.of(hb.plan))
    ints = packed.ints.to(device, non_blocking=True)
    weights = packed.weights.to(device, non_blocking=True)
    ids, mask, single, multi, segments = torch.split(ints, list(packed.sizes))
    return DeviceBatch(
        ids.view(packed.shape),
        mask.view(packed.shape) if hb.padded else None,
        PoolingIndex(single, multi, segments, weights, packed.n_multi),
    )


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


def _failure(exc: Exception, stage: str, hb: HostBatch | None) -> WorkbenchError:
    """The project's error for an exception in a stage (a WorkbenchError passes unchanged)."""
    if isinstance(exc, WorkbenchError):
        return exc
    where = f" on a batch of {hb.ids.shape[0]} x {hb.ids.shape[1]} tokens" if hb else ""
    text = str(exc).strip().splitlines()[0][:300] if str(exc).strip() else type(exc).__name__
    if "out of memory" in text.lower() or "can't allocate memory" in text.lower():
        return EncodingError(
            f"The device ran out of memory in the {stage} stage{where}: {text}. "
            "Lower max_batch_tokens, or keep fewer layers (layers=...)."
        )
    name = type(exc).__name__
    return EncodingError(f"Encoding failed in the {stage} stage{where}: {name}: {text}")


#: ``source(depth, clock)``: a context manager giving each batch prepared, in run order, at most
#: ``depth`` ahead (:meth:`workbench.encoding.batch_process.BatchProcess.batches`).
BatchSource = Callable[
    [int, Clock], AbstractContextManager[Iterable[tuple[HostBatch, PackedBatch | None]]]
]


def run_batches(
    work: Work,
    forward: Callable[[torch.Tensor, torch.Tensor | None], ForwardOutput],
    layers: Sequence[int],
    dest: torch.Tensor,
    device: str,
    config: PipelineConfig | None = None,
    on_batch: Callable[[int], None] | None = None,
    clock: Clock | None = None,
    source: BatchSource | None = None,
) -> None:
    """Run every batch through the model and write its kept words into ``dest``.

    Args:
        work: each batch's window indices with the builder that prepares it
            (:meth:`BatchBuilder.build`), in run order; iterated by the producer thread, so a
            generator may tokenize as it goes.
        forward: ``forward(ids, mask)`` -> the model's output with every hidden state (``mask``
            None: no padding).
        layers: hidden-state indices to keep, in output order.
        dest: the output ``(n_rows, len(layers), dim)`` CPU tensor; its dtype is the store
            dtype (float32 or float16).
        device: where the model runs.
        config: how stages overlap (default :class:`PipelineConfig`).
        on_batch: called with each batch's word count (:attr:`HostBatch.n_owned`) once it is
            running.
        clock: gets each thread's time per activity (:attr:`StageTimes.threads`).
        source: gives the prepared batches instead of a producer thread building ``work``'s
            (then not read here): a worker process's (``config.producer == "process"``).

    Raises:
        WorkbenchError: bad input found while preparing a batch (as raised there);
            :class:`EncodingError`: an out-of-memory or another failure in a stage.
    """
    import torch

    config = config or PipelineConfig()
    cuda = device.startswith("cuda")
    staged = config.staged_on(device)
    on_host = device == "cpu"

    def produce(item: tuple[BatchBuilder, np.ndarray]) -> tuple[HostBatch, PackedBatch | None]:
        hb = item[0].build(item[1])
        return hb, (None if on_host or not hb.plan.n_words else pack(hb, pin=cuda))

    stream = torch.cuda.Stream(device=device) if cuda and staged else None
    clock = clock or Clock()
    hb: HostBatch | None = None
    stage = "prep"
    with ExitStack() as threads:  # on leaving: the writer, then the producer, stopped and joined
        depth = config.prefetch_on(device)
        batches: Iterable[tuple[HostBatch, PackedBatch | None]]
        if source is None:
            batches = threads.enter_context(Prefetcher(produce, work, depth, clock=clock))
        else:
            batches = threads.enter_context(source(depth, clock))
        writer = (
            threads.enter_context(RowWriter(dest, config.in_flight, clock=clock))
            if staged
            else None
        )
        try:
            t = time.perf_counter()
            for hb, packed in batches:
                t = clock.add("main: wait for a batch", t)
                if hb.plan.n_words:
                    stage = "h2d"
                    db = to_device(hb, packed, device)
                    stage = "forward"
                    out = forward(db.ids, db.mask)
                    stage = "pooling"
                    hidden = [out.hidden_states[k] for k in layers]
                    pooled = pool_words(db.index, hidden, dest.dtype)
                    del out, hidden
                    rows = torch.from_numpy(hb.rows)
                    stage = "write"
                    if writer is not None:
                        host, ready = to_host(pooled, stream)
                        t = clock.add("main: launch", t)
                        writer.put(rows, host, ready)
                        t = clock.add("main: wait for the writer", t)
                    else:
                        dest.index_copy_(0, rows, pooled.to("cpu"))
                        t = clock.add("main: run and write", t)
                if on_batch is not None:
                    on_batch(hb.n_owned)
                stage, hb = "prep", None
                t = time.perf_counter()
            if writer is not None:
                stage = "write"
                writer.finish()
                clock.add("main: finish", t)
        except Exception as exc:
            raise _failure(exc, stage, hb) from exc


def run_batches_timed(
    work: Work,
    forward: Callable[[torch.Tensor, torch.Tensor | None], ForwardOutput],
    layers: Sequence[int],
    dest: torch.Tensor,
    device: str,
    times: StageTimes,
) -> None:
    """:func:`run_batches` one stage at a time, waiting for the device after each, adding
    each stage's seconds to ``times``: where the time goes, not how fast the overlapped run
    is. Same stage functions, same results; the time ``work`` takes to give each batch (a
    chunk's tokenizing) is its own to record."""
    import torch

    cuda = device.startswith("cuda")
    stream = torch.cuda.Stream(device=device) if cuda else None

    def sync() -> None:
        if cuda:
            torch.cuda.synchronize(device)

    clock = time.perf_counter()

    def lap(stage: str) -> None:
        nonlocal clock
        sync()
        now = time.perf_counter()
        times.seconds[stage] += now - clock
        clock = now

    for builder, batch in work:
        clock = time.perf_counter()
        hb = builder.build(batch)
        packed = None if device == "cpu" or not hb.plan.n_words else pack(hb, pin=cuda)
        lap("prep")
        times.batches += 1
        times.tokens += hb.n_tokens
        if not hb.plan.n_words:
            continue
        db = to_device(hb, packed, device)
        lap("h2d")
        out = forward(db.ids, db.mask)
        lap("forward")
        pooled = pool_words(db.index, [out.hidden_states[k] for k in layers], dest.dtype)
        del out
        lap("pooling")
        host, ready = to_host(pooled, stream)
        if ready is not None:
            ready.synchronize()
        lap("d2h")
        dest.index_copy_(0, torch.from_numpy(hb.rows), host)
        lap("write")
