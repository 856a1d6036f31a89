"""Batches of windows: which windows run together, and what each batch hands the model.

:func:`plan_batches` groups the windows of a :class:`~workbench.encoding.prepare.Prepared`
input into batches under a padded-token budget, longest first. :class:`BatchBuilder` turns
one batch into a :class:`HostBatch`: the padded ``(ids, mask)`` arrays, the gather plan that
pools its subwords into the kept words (:func:`workbench.encoding.pooling.pooling_plan_flat`),
and the output row of each pooled word. Both are plain numpy on the host; building a batch
is what the encoder's producer thread does ahead of the model
(:mod:`workbench.encoding.pipeline`).

Shapes: ``"exact"`` pads each batch to its own longest window (least padding: the CPU path);
``"bucketed"`` rounds the width up to the next step of a ladder (:func:`bucket_width`:
multiples of 8 up to 64, of 16 up to 128, of 32 up to 256, of 64 up to 512: 20 widths for
a 512-token model, at most about a quarter of a row's tokens added) and the row count up to a
power of two, at most the budget's (:func:`bucket_rows`: dummy rows of padding), so a run
sees few distinct input shapes: what CUDA graphs need, since each shape is captured once. On
20,000 SemCor sentences streamed at a 16,384-token budget this pads to 1.34 tokens for each
real one in 61 shapes (exact shapes: 1.07; multiples of 32 with full row counts: 2.17;
docs/benchmarks.md, "The forward pass replayed from CUDA graphs").

Example::

    builder = BatchBuilder(prep, SpecialTokens((101,), (102,), 0), layout.rows, "mean")
    for batch in plan_batches(builder.lengths, max_batch_tokens=8192):
        hb = builder.build(batch)      # hb.ids (B, W), hb.plan, hb.rows
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import numpy as np

from workbench.encoding.alignment import Window
from workbench.encoding.pooling import Pooling, PoolingPlan, pooled_order, pooling_plan_flat
from workbench.encoding.prepare import Prepared

Shapes = Literal["exact", "bucketed"]
BUCKET_STEP = 8  # "bucketed" widths up to 64 are multiples of this; the step doubles per octave
MIN_FILL = 0.1  # an "exact" batch holds this share of the budget before a length drop closes it
#: :data:`MIN_FILL` on a GPU, where a batch costs a fixed time however small: on an H200 the
#: packaged model's bare forward took 2.2 ms for 8,192 tokens and 2.3 ms for 16,384
#: (docs/benchmarks.md, "The batch pipeline and the GPU"), so fewer, fuller batches win.
GPU_MIN_FILL = 0.25


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
class HostBatch:
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

    def device_arrays(self) -> list[np.ndarray]:
        """The flat arrays the device needs, in the order they are packed for it: ids, mask,
        single positions, multi positions, multi segments (the multi weights aside)."""
        plan = self.plan
        return [
            self.ids.reshape(-1),
            self.mask.reshape(-1),
            plan.single_positions,
            plan.multi_positions,
            plan.multi_segments,
        ]


def bucket_width(width: int, limit: int) -> int:
    """``width`` rounded up to the next step of the bucket ladder, at most ``limit`` (and never
    below ``width``): multiples of :data:`BUCKET_STEP` up to 64, then the step doubles with each
    doubling of the width (16 up to 128, 32 up to 256, 64 up to 512, ...), so each octave of
    widths has four buckets and a row gets at most a quarter of its width in padding.

    Example: ``bucket_width(13, 512) == 16``, ``bucket_width(65, 512) == 80``,
    ``bucket_width(300, 512) == 320``, ``bucket_width(500, 490) == 500``.
    """
    step = max(BUCKET_STEP, 1 << max(0, (width - 1).bit_length() - 3))
    return min(-(-width // step) * step, max(limit, width))


def bucket_rows(rows: int, full: int) -> int:
    """Rows of a bucketed batch holding ``rows`` windows: ``rows`` rounded up to a power of two,
    at most ``full`` (the budget's rows at this width), never below ``rows``."""
    return max(rows, min(full, 1 << max(0, rows - 1).bit_length()))


def plan_batches(
    lengths: np.ndarray,
    max_batch_tokens: int,
    shapes: Shapes = "exact",
    specials: int = 0,
    max_width: int = 512,
    min_fill: float = MIN_FILL,
) -> list[np.ndarray]:
    """Window indices grouped into batches, longest first.

    ``exact``: a batch closes when one more window would take its padded size (windows x the
    longest one) past ``max_batch_tokens``, or, once it holds ``min_fill`` of the budget, when
    the next window is more than 3% shorter than its longest, so many batches hold windows of
    one length (the padding this leaves is measured in docs/benchmarks.md, "Extraction").
    ``bucketed``: a batch holds windows of one bucket width (``length +
    specials`` rounded up, at most ``max_width``), as many as the budget allows.

    Args:
        lengths: ``(n_windows,)`` subwords of each window (specials excluded).
        max_batch_tokens: padded tokens per batch.
        shapes: ``exact`` or ``bucketed`` (see the module docstring).
        specials: special tokens per window (for ``bucketed`` widths).
        max_width: the model's input limit (for ``bucketed`` widths).
        min_fill: the share of the budget a batch holds before a drop in length closes it
            (``exact``): less padding when small, larger batches when large.
    """
    order = np.argsort(-np.asarray(lengths), kind="stable")
    batches: list[np.ndarray] = []
    current: list[int] = []
    width = 0
    min_tokens = int(max_batch_tokens * min_fill)
    for idx in order.tolist():
        length = int(lengths[idx])
        if shapes == "bucketed":
            length = bucket_width(length + specials, max_width)
        if current:
            full = width * (len(current) + 1) > max_batch_tokens
            if shapes == "bucketed":
                closes = full or length != width
            else:
                closes = full or (length < 0.97 * width and width * len(current) >= min_tokens)
            if closes:
                batches.append(np.array(current))
                current = []
        if not current:
            width = length
        current.append(idx)
    if current:
        batches.append(np.array(current))
    return batches


class BatchBuilder:
    """Builds the :class:`HostBatch` of a batch of windows (thread-safe: it only reads).

    Args:
        prep: the tokenized input and its windows.
        specials: the special tokens around each window.
        rows: ``(n_words,)`` output row of each running word of ``prep`` (``-1``: not kept);
            None for a builder that only pads inputs (:meth:`inputs`).
        pooling: ``first``, ``mean`` or ``last``.
        shapes: ``exact`` pads to the batch's longest window; ``bucketed`` to its bucket
            width and its rows to a power of two, at most ``max_batch_tokens // width``.
        max_batch_tokens: the budget (for ``bucketed`` row counts).
        max_width: the model's input limit (for ``bucketed`` widths).
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
        shapes: Shapes = "exact",
        max_batch_tokens: int = 8192,
        max_width: int = 512,
        gather: bool = True,
        min_fill: float = MIN_FILL,
    ) -> None:
        self.prep = prep
        self.min_fill = min_fill
        self.gather = gather  # False: every batch's words window by window (the reference)
        self.specials = specials
        self.rows = rows
        self.pooling = pooling
        self.shapes = shapes
        self.max_batch_tokens = max_batch_tokens
        self.max_width = max_width
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
        return plan_batches(
            self.lengths,
            self.max_batch_tokens,
            self.shapes,
            self.specials.count,
            self.max_width,
            self.min_fill,
        )

    def _padded(self, batch: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The padded ``(ids, mask)`` int64 arrays ``(batch, width)`` of a batch of windows,
        gathered from the flat arrays in a few array operations."""
        sp = self.specials
        head, tail, prefix = sp.head, sp.tail, len(sp.head)
        n = len(batch)
        a, length = self._w_a[batch], self.lengths[batch]
        width = int(length.max()) + sp.count
        n_rows = n
        if self.shapes == "bucketed":
            width = bucket_width(width, self.max_width)
            n_rows = bucket_rows(n_rows, self.max_batch_tokens // width)
        ids = np.full((n_rows, width), sp.pad, dtype=np.int64)
        ids[:, :prefix] = head  # dummy rows too: specials only, so no row is fully masked
        row, k = _ranges(length)  # subword k of row `row`
        ids[row, prefix + k] = self.prep.flat_ids[a[row] + k]
        end = np.full(n_rows, prefix, dtype=np.int64)
        end[:n] += length
        for t, token in enumerate(tail):
            ids[np.arange(n_rows), end + t] = token
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

    def build(self, batch: np.ndarray) -> HostBatch:
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
        return HostBatch(ids, mask, plan, targets[pooled_order(plan)], n_tokens, n_owned, padded)

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


@dataclass(frozen=True)
class ChunkBuilders:
    """Makes the :class:`BatchBuilder` of each chunk of an input
    (:class:`~workbench.encoding.stream.BatchStream`'s ``make_builder``); plain data, so a
    stream pickles to a worker process with it.

    Attributes:
        specials, pooling, shapes, max_batch_tokens, max_width, min_fill: as
            :class:`BatchBuilder` takes them.
        rows: ``(n_words,)`` output row of each running word of the whole input (``-1``: not
            kept), or None for builders that only pad inputs.
    """

    specials: SpecialTokens
    rows: np.ndarray | None
    pooling: Pooling
    shapes: Shapes
    max_batch_tokens: int
    max_width: int
    min_fill: float

    def __call__(self, prep: Prepared, first: int, last: int) -> BatchBuilder:
        """The builder of a chunk whose running words are the input's ``first`` to ``last``."""
        rows = None if self.rows is None else self.rows[first:last]
        return BatchBuilder(
            prep,
            self.specials,
            rows,
            self.pooling,
            self.shapes,
            self.max_batch_tokens,
            self.max_width,
            min_fill=self.min_fill,
        )


def _ranges(lengths: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """For runs of ``lengths`` items: each item's run and its place in the run."""
    total = int(lengths.sum())
    run = np.repeat(np.arange(len(lengths), dtype=np.int64), lengths)
    first = np.zeros(len(lengths), dtype=np.int64)
    np.cumsum(lengths[:-1], out=first[1:])
    return run, np.arange(total, dtype=np.int64) - first[run]
