"""Batches of windows: which windows run together, and the one type a batch has.

:func:`plan_batches` groups the windows of a :class:`~workbench.encoding.prepare.Prepared`
input into batches under a padded-token budget, longest first. :class:`BatchBuilder` turns
one group of windows into a :class:`Batch`: the padded ``(ids, mask)`` arrays, the gather plan
that pools its subwords into the kept words (:func:`workbench.encoding.pooling.pooling_plan_flat`)
and the output row of each pooled word, all numpy on the host. A :class:`Batch` owns how it
reaches the device: :meth:`Batch.device_arrays` names the arrays the device needs,
:meth:`Batch.pack` copies them into one host buffer (pinned for cuda) and
:meth:`Batch.to_device` gives them on the device (a :class:`DeviceBatch`): one copy of the
packed buffer, or, on the CPU, tensors sharing the arrays' memory. A new array for the device
is one more entry of :meth:`Batch.device_arrays` and one more read in :meth:`Batch.on_device`.

Batches pad each to its own longest window (least padding).

Example::

    builder = BatchBuilder(prep, SpecialTokens((101,), (102,), 0), layout.rows, "mean")
    for windows in plan_batches(builder.lengths, max_batch_tokens=8192):
        batch = builder.build(windows)      # batch.ids (B, W), batch.plan, batch.rows
        on_device = batch.to_device("cpu")  # on_device.ids (B, W), on_device.index
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from workbench.encoding.alignment import Window
from workbench.encoding.pooling import (
    Pooling,
    PoolingIndex,
    PoolingPlan,
    pooled_order,
    pooling_plan_flat,
)
from workbench.encoding.prepare import Prepared
from workbench.errors import EncodingError, WorkbenchError

if TYPE_CHECKING:
    import torch

CPU_BATCH_TOKENS = (
    8192  # padded tokens per batch on a CPU or mps (docs/benchmarks.md, "Extraction")
)
MIN_FILL = 0.1  # a batch holds this share of the budget before a drop in length closes it
#: :data:`MIN_FILL` on a GPU, where a batch costs about the same time however small it is, so
#: fewer, fuller batches win (docs/benchmarks.md, "The batch pipeline and the GPU").
GPU_MIN_FILL = 0.25
ALIGN = 8  # bytes: each array of a packed buffer starts at a multiple of this


@dataclass(frozen=True)
class SpecialTokens:
    """The ids around every window: ``head`` before it ([CLS]), ``tail`` after it ([SEP]),
    ``pad`` in the padding."""

    head: tuple[int, ...]
    tail: tuple[int, ...]
    pad: int

    @property
    def count(self) -> int:
        """Special tokens per window."""
        return len(self.head) + len(self.tail)


@dataclass(frozen=True)
class DeviceBatch:
    """A batch's model inputs ``(batch, width)`` and pooling indices, on the device; ``mask``
    is None for a batch without padding."""

    ids: torch.Tensor
    mask: torch.Tensor | None
    index: PoolingIndex


@dataclass(frozen=True)
class PackedBatch:
    """A batch's device arrays in one host buffer, copied to the device at once.

    Attributes:
        buffer: ``(n_bytes,)`` uint8 (pinned for a CUDA device): each array's bytes, each
            starting at a multiple of :data:`ALIGN`.
        parts: ``(name, offset, n_bytes, dtype, shape)`` of each array, in
            :meth:`Batch.device_arrays` order (``dtype``: torch's).
    """

    buffer: torch.Tensor
    parts: tuple[tuple[str, int, int, torch.dtype, tuple[int, ...]], ...]


@dataclass(frozen=True)
class Batch:
    """One batch as the host prepares it.

    Attributes:
        ids, mask: ``(batch, width)`` int64 padded input ids and attention mask.
        plan: pools the batch's hidden states, flattened to ``(batch * width, dim)``, into
            its kept words.
        rows: ``(plan.n_words,)`` int64 output row of each pooled word, in the order
            :func:`workbench.encoding.pooling.pool_words` returns them (one-subword words
            first).
        n_tokens: subwords of its windows (no specials, no padding).
        n_owned: words whose vectors its windows give (kept or not): the progress it makes.
        padded: whether any position is padding (else the model needs no mask).
    """

    ids: np.ndarray
    mask: np.ndarray
    plan: PoolingPlan
    rows: np.ndarray
    n_tokens: int
    n_owned: int
    padded: bool

    def device_arrays(self) -> dict[str, np.ndarray]:
        """The arrays the device needs, by name, contiguous: ``ids``, ``mask`` ``(batch,
        width)`` int64; the pooling plan's ``single_positions`` ``(n_single,)``,
        ``multi_positions``, ``multi_segments`` ``(n_parts,)`` int64 and ``multi_weights``
        ``(n_parts,)`` float32."""
        plan = self.plan
        return {
            "ids": np.ascontiguousarray(self.ids, dtype=np.int64),
            "mask": np.ascontiguousarray(self.mask, dtype=np.int64),
            "single_positions": np.ascontiguousarray(plan.single_positions, dtype=np.int64),
            "multi_positions": np.ascontiguousarray(plan.multi_positions, dtype=np.int64),
            "multi_segments": np.ascontiguousarray(plan.multi_segments, dtype=np.int64),
            "multi_weights": np.ascontiguousarray(plan.multi_weights, dtype=np.float32),
        }

    def on_device(self, tensors: dict[str, torch.Tensor]) -> DeviceBatch:
        """The :class:`DeviceBatch` of :meth:`device_arrays`' tensors (same names, shapes)."""
        index = PoolingIndex(
            tensors["single_positions"],
            tensors["multi_positions"],
            tensors["multi_segments"],
            tensors["multi_weights"],
            len(self.plan.multi_words),
        )
        return DeviceBatch(tensors["ids"], tensors["mask"] if self.padded else None, index)

    def pack(self, pin: bool) -> PackedBatch:
        """:meth:`device_arrays` copied into one host buffer (pinned if ``pin``), so that the
        batch reaches the device in one copy (non-blocking from pinned memory)."""
        import torch

        arrays = self.device_arrays()
        parts, offset = [], 0
        for name, array in arrays.items():
            dtype = torch.from_numpy(array[:0]).dtype
            parts.append((name, offset, array.nbytes, dtype, array.shape))
            offset += -(-array.nbytes // ALIGN) * ALIGN
        buffer = torch.empty(offset, dtype=torch.uint8, pin_memory=pin)
        host = buffer.numpy()
        for (_, start, size, _, _), array in zip(parts, arrays.values()):
            host[start : start + size].view(array.dtype)[:] = array.reshape(-1)
        return PackedBatch(buffer, tuple(parts))

    def to_device(self, device: str, packed: PackedBatch | None = None) -> DeviceBatch:
        """The batch on ``device``: the packed buffer (``packed``, else packed now, pinned on
        cuda) in one non-blocking copy, viewed as its arrays there; on the CPU without
        ``packed``, tensors sharing :meth:`device_arrays`' memory (no copy).

        A batch without padding gets no mask: what transformers does itself after checking the
        mask's values (``mask.all()``), a check that on a GPU waits for all queued work; with
        SDPA it also allows the fused kernels that take no mask. Same results.
        """
        import torch

        if packed is None and device == "cpu":
            arrays = self.device_arrays()
            return self.on_device({k: torch.from_numpy(v) for k, v in arrays.items()})
        if packed is None:
            packed = self.pack(pin=device.startswith("cuda"))
        data = packed.buffer.to(device, non_blocking=True)
        tensors = {
            name: data[start : start + size].view(dtype).view(shape)
            for name, start, size, dtype, shape in packed.parts
        }
        return self.on_device(tensors)


def batch_error(exc: Exception, stage: str, batch: Batch | None) -> WorkbenchError:
    """The project's error for an exception in a stage of running a batch (``prep``, ``h2d``,
    ``forward``, ``pooling``, ``d2h``, ``write``): a :class:`WorkbenchError` passes unchanged,
    an out-of-memory or any other failure becomes an :class:`EncodingError` naming the stage
    and the batch's shape."""
    if isinstance(exc, WorkbenchError):
        return exc
    where = f" on a batch of {batch.ids.shape[0]} x {batch.ids.shape[1]} tokens" if batch else ""
    text = str(exc).strip().splitlines()[0][:300] if str(exc).strip() else type(exc).__name__
    if "out of memory" in text.lower() or "can't allocate memory" in text.lower():
        return EncodingError(
            f"The device ran out of memory in the {stage} stage{where}: {text}. "
            "Lower max_batch_tokens, or keep fewer layers (layers=...)."
        )
    name = type(exc).__name__
    return EncodingError(f"Encoding failed in the {stage} stage{where}: {name}: {text}")


def plan_batches(
    lengths: np.ndarray, max_batch_tokens: int, min_fill: float = MIN_FILL
) -> list[np.ndarray]:
    """Window indices grouped into batches, longest first.

    A batch closes when one more window would take its padded size (windows x the longest
    one) past ``max_batch_tokens``, or, once it holds ``min_fill`` of the budget, when the next
    window is more than 3% shorter than its longest, so many batches hold windows of one
    length (docs/benchmarks.md, "Extraction", has the padding this leaves).

    Args:
        lengths: ``(n_windows,)`` subwords of each window (specials excluded).
        max_batch_tokens: padded tokens per batch.
        min_fill: the share of the budget a batch holds before a drop in length closes it:
            less padding when small, larger batches when large.

    Example: ``plan_batches(np.array([3, 9, 9, 4]), 20)`` -> ``[array([1, 2]), array([3]),
    array([0])]`` (the 3 is more than 3% shorter than the 4, whose batch holds 10% already).
    """
    order = np.argsort(-np.asarray(lengths), kind="stable")
    batches: list[np.ndarray] = []
    current: list[int] = []
    width = 0
    min_tokens = int(max_batch_tokens * min_fill)
    for idx in order.tolist():
        length = int(lengths[idx])
        if current:
            full = width * (len(current) + 1) > max_batch_tokens
            if full or (length < 0.97 * width and width * len(current) >= min_tokens):
                batches.append(np.array(current))
                current = []
        if not current:
            width = length
        current.append(idx)
    if current:
        batches.append(np.array(current))
    return batches


class BatchBuilder:
    """Builds the :class:`Batch` of a group of windows (thread-safe: it only reads).

    Args:
        prep: the tokenized input and its windows.
        specials: the special tokens around each window.
        rows: ``(n_words,)`` output row of each running word of ``prep`` (``-1``: not kept);
            None for a builder that only pads inputs (:meth:`inputs`).
        pooling: ``first``, ``mean`` or ``last``.
        max_batch_tokens: padded tokens per batch (:func:`plan_batches`).
        gather: take a batch's words from flat arrays of the whole input in a few array
            operations (default); False: window by window, the reference (same result).
        min_fill: share of the budget a batch holds before a drop in length closes it
            (:func:`plan_batches`).

    Attributes:
        lengths: ``(n_windows,)`` int64 subwords of each window (specials excluded).
    """

    def __init__(
        self,
        prep: Prepared,
        specials: SpecialTokens,
        rows: np.ndarray | None,
        pooling: Pooling,
        max_batch_tokens: int = CPU_BATCH_TOKENS,
        gather: bool = True,
        min_fill: float = MIN_FILL,
    ) -> None:
        self.prep = prep
        self.min_fill = min_fill
        self.gather = gather  # False: every batch's words window by window (the reference)
        self.specials = specials
        self.rows = rows
        self.pooling = pooling
        self.max_batch_tokens = max_batch_tokens
        # a batch is gathered from the input's flat arrays (Prepared), not looped over: each
        # window's sentence, words and subword range in ``prep.flat_ids`` (``_w_a`` to
        # ``_w_b``), whether it owns all its words (the usual case), every word's output row
        wins = prep.windows

        def per_window(values, dtype=np.int64) -> np.ndarray:
            return np.fromiter(values, dtype=dtype, count=len(wins))

        self._w_start = per_window(w.word_start for w in wins)
        self._w_end = per_window(w.word_end for w in wins)
        self._w_owned = per_window(len(w.owned) for w in wins)
        self._w_full = self._w_owned == self._w_end - self._w_start
        # the running index of each window's sentence's first word
        self._w_first = prep.sentence_words[per_window(w.sentence for w in wins)]
        self._w_a = prep.word_offsets[self._w_first + self._w_start]
        self._w_b = prep.word_offsets[self._w_first + self._w_end]
        self.lengths = self._w_b - self._w_a

    def batches(self) -> list[np.ndarray]:
        """The batches to run (:func:`plan_batches` with this builder's settings)."""
        return plan_batches(self.lengths, self.max_batch_tokens, self.min_fill)

    def _padded(self, batch: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The padded ``(ids, mask)`` int64 arrays ``(batch, width)`` of a batch of windows,
        gathered from the flat arrays in a few array operations."""
        sp = self.specials
        head, tail, prefix = sp.head, sp.tail, len(sp.head)
        n = len(batch)
        a, length = self._w_a[batch], self.lengths[batch]
        width = int(length.max()) + sp.count
        ids = np.full((n, width), sp.pad, dtype=np.int64)
        ids[:, :prefix] = head
        row, k = _ranges(length)  # subword k of row `row`
        ids[row, prefix + k] = self.prep.flat_ids[a[row] + k]
        end = prefix + length
        for t, token in enumerate(tail):
            ids[np.arange(n), end + t] = token
        mask = (np.arange(width) < (end + len(tail))[:, None]).astype(np.int64)
        return ids, mask

    def inputs(
        self, batch: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray, list[Window], list[tuple[int, int]]]:
        """The padded ``(ids, mask)`` int64 arrays ``(batch, width)`` of a batch of windows,
        with the windows and each one's subword range ``(a, b)`` in its sentence."""
        ids, mask = self._padded(batch)
        windows = [self.prep.windows[i] for i in batch.tolist()]
        first = self.prep.word_offsets[self._w_first[batch]]  # sentence start in flat_ids
        bounds = list(zip((self._w_a[batch] - first).tolist(), (self._w_b[batch] - first).tolist()))
        return ids, mask, windows, bounds

    def build(self, batch: np.ndarray) -> Batch:
        """Pad the batch's windows into one input and plan the pooling of its kept words."""
        all_rows = self.rows
        if all_rows is None:
            raise ValueError("this builder has no output rows: it only pads inputs")
        ids, mask = self._padded(batch)
        width = ids.shape[1]
        prefix = len(self.specials.head)
        if self.gather and self._w_full[batch].all():  # the usual case: gather every word
            start = self._w_first[batch] + self._w_start[batch]
            row, j = _ranges(self._w_end[batch] - self._w_start[batch])
            word = start[row] + j  # running index of each word
            # input position -> flattened batch position
            shift = row * width + prefix - self._w_a[batch][row]
            off = self.prep.word_offsets
            starts, ends = off[word] + shift, off[word + 1] + shift
            targets = all_rows[word]
            kept = targets >= 0
            if not kept.all():
                starts, ends, targets = starts[kept], ends[kept], targets[kept]
        else:  # windows of a long sentence own part of their words: one window at a time
            starts, ends, targets = self._owned_words(batch, width, prefix, all_rows)
        plan = pooling_plan_flat(starts, ends, self.pooling)
        padded = not bool(mask.all())
        n_tokens, n_owned = int(self.lengths[batch].sum()), int(self._w_owned[batch].sum())
        return Batch(ids, mask, plan, targets[pooled_order(plan)], n_tokens, n_owned, padded)

    def _owned_words(
        self, batch: np.ndarray, width: int, prefix: int, all_rows: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Flattened subword ranges and output rows of the kept words each window owns."""
        starts: list[np.ndarray] = []
        ends: list[np.ndarray] = []
        target_parts: list[np.ndarray] = []
        for r, i in enumerate(batch.tolist()):
            w = self.prep.windows[i]
            word = int(self._w_first[i]) + np.asarray(w.owned, dtype=np.int64)  # running index
            rows = all_rows[word]
            kept = rows >= 0
            if not kept.all():
                word, rows = word[kept], rows[kept]
            shift = r * width + prefix - int(self._w_a[i])
            starts.append(self.prep.word_offsets[word] + shift)
            ends.append(self.prep.word_offsets[word + 1] + shift)
            target_parts.append(rows)
        return np.concatenate(starts), np.concatenate(ends), np.concatenate(target_parts)


def _ranges(lengths: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """For runs of ``lengths`` items: each item's run and its place in the run."""
    total = int(lengths.sum())
    run = np.repeat(np.arange(len(lengths), dtype=np.int64), lengths)
    first = np.zeros(len(lengths), dtype=np.int64)
    np.cumsum(lengths[:-1], out=first[1:])
    return run, np.arange(total, dtype=np.int64) - first[run]
