"""Batches of windows: which windows run together, and what each batch hands the model.

:func:`plan_batches` groups the windows of a :class:`~workbench.encoding.prepare.Prepared`
input into batches under a padded-token budget, longest first. :class:`BatchBuilder` turns
one batch into a :class:`HostBatch`: the padded ``(ids, mask)`` arrays, the gather plan that
pools its subwords into the kept words (:func:`workbench.encoding.pooling.pooling_plan_flat`),
and the output row of each pooled word. Both are plain numpy on the host; building a batch
is what the encoder's producer thread does ahead of the model
(:mod:`workbench.encoding.pipeline`).

Shapes: ``"exact"`` pads each batch to its own longest window (least padding: the CPU path);
``"bucketed"`` rounds the width up to a multiple of :data:`BUCKET_WIDTH` and fills every
batch of one width to the same number of rows (dummy rows of padding), so a run sees at most
``max_length / BUCKET_WIDTH`` distinct input shapes: what CUDA graphs need, since each shape
is captured once.

Example::

    builder = BatchBuilder(prep, SpecialTokens((101,), (102,), 0), layout.row_of, "mean")
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
BUCKET_WIDTH = 32  # "bucketed" widths are multiples of this (with specials)


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
        n_tokens: subwords of its windows (no specials, no padding): the progress it makes.
        padded: whether any position is padding (else the model needs no mask).
    """

    ids: np.ndarray
    mask: np.ndarray
    plan: PoolingPlan
    rows: np.ndarray
    n_tokens: int
    padded: bool


def bucket_width(width: int, limit: int) -> int:
    """``width`` rounded up to a multiple of :data:`BUCKET_WIDTH`, at most ``limit``."""
    return min(-(-width // BUCKET_WIDTH) * BUCKET_WIDTH, max(limit, width))


def plan_batches(
    lengths: np.ndarray,
    max_batch_tokens: int,
    shapes: Shapes = "exact",
    specials: int = 0,
    max_width: int = 512,
) -> list[np.ndarray]:
    """Window indices grouped into batches, longest first.

    ``exact``: a batch closes when one more window would take its padded size (windows x the
    longest one) past ``max_batch_tokens``, or, once it holds a tenth of the budget, when the
    next window is more than 3% shorter than its longest, so many batches hold windows of one
    length (the padding this leaves is measured in docs/benchmarks.md, "Extraction").
    ``bucketed``: a batch holds windows of one bucket width (``length +
    specials`` rounded up, at most ``max_width``), as many as the budget allows.

    Args:
        lengths: ``(n_windows,)`` subwords of each window (specials excluded).
        max_batch_tokens: padded tokens per batch.
        shapes: ``exact`` or ``bucketed`` (see the module docstring).
        specials: special tokens per window (for ``bucketed`` widths).
        max_width: the model's input limit (for ``bucketed`` widths).
    """
    order = np.argsort(-np.asarray(lengths), kind="stable")
    batches: list[np.ndarray] = []
    current: list[int] = []
    width = 0
    min_tokens = max_batch_tokens // 10
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
        row_of: per sentence, ``(n_words,)`` output row of each word (``-1``: not kept).
        pooling: ``first``, ``mean`` or ``last``.
        shapes: ``exact`` pads to the batch's longest window; ``bucketed`` to its bucket
            width and to ``max_batch_tokens // width`` rows.
        max_batch_tokens: the budget (for ``bucketed`` row counts).
        max_width: the model's input limit (for ``bucketed`` widths).

    Attributes:
        lengths: ``(n_windows,)`` int64 subwords of each window (specials excluded).
    """

    def __init__(
        self,
        prep: Prepared,
        specials: SpecialTokens,
        row_of: list[np.ndarray],
        pooling: Pooling,
        shapes: Shapes = "exact",
        max_batch_tokens: int = 8192,
        max_width: int = 512,
    ) -> None:
        self.prep = prep
        self.specials = specials
        self.row_of = row_of
        self.pooling = pooling
        self.shapes = shapes
        self.max_batch_tokens = max_batch_tokens
        self.max_width = max_width
        self.lengths = np.array([prep.window_length(w) for w in prep.windows], dtype=np.int64)

    def batches(self) -> list[np.ndarray]:
        """The batches to run (:func:`plan_batches` with this builder's settings)."""
        return plan_batches(
            self.lengths, self.max_batch_tokens, self.shapes, self.specials.count, self.max_width
        )

    def inputs(
        self, batch: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray, list[Window], list[tuple[int, int]]]:
        """The padded ``(ids, mask)`` int64 arrays ``(batch, width)`` of a batch of windows,
        with the windows and each one's subword range ``(a, b)`` in its sentence."""
        prep, sp = self.prep, self.specials
        head, tail, prefix = sp.head, sp.tail, len(sp.head)
        windows = [prep.windows[i] for i in batch.tolist()]
        bounds = [
            (int(prep.offsets[w.sentence][w.word_start]), int(prep.offsets[w.sentence][w.word_end]))
            for w in windows
        ]
        width = max(b - a for a, b in bounds) + sp.count
        n_rows = len(windows)
        if self.shapes == "bucketed":
            width = bucket_width(width, self.max_width)
            n_rows = max(n_rows, self.max_batch_tokens // width)
        ids = np.full((n_rows, width), sp.pad, dtype=np.int64)
        mask = np.zeros((n_rows, width), dtype=np.int64)
        for r, (w, (a, b)) in enumerate(zip(windows, bounds)):
            end = prefix + b - a
            ids[r, :prefix] = head
            ids[r, prefix:end] = prep.ids[w.sentence][a:b]
            ids[r, end : end + len(tail)] = tail
            mask[r, : end + len(tail)] = 1
        if n_rows > len(windows):  # dummy rows: specials only, so no row is fully masked
            ids[len(windows) :, :prefix] = head
            ids[len(windows) :, prefix : prefix + len(tail)] = tail
            mask[len(windows) :, : sp.count] = 1
        return ids, mask, windows, bounds

    def build(self, batch: np.ndarray) -> HostBatch:
        """Pad the batch's windows into one input and plan the pooling of its kept words."""
        ids, mask, windows, bounds = self.inputs(batch)
        width = ids.shape[1]
        prefix = len(self.specials.head)
        starts: list[np.ndarray] = []
        ends: list[np.ndarray] = []
        target_parts: list[np.ndarray] = []
        n_tokens = 0
        for r, (w, (a, b)) in enumerate(zip(windows, bounds)):
            n_tokens += b - a
            if len(w.owned) == w.word_end - w.word_start:
                own = np.arange(w.word_start, w.word_end)
            else:
                own = np.asarray(w.owned, dtype=np.int64)
            rows = self.row_of[w.sentence][own]
            kept = rows >= 0
            if not kept.all():
                own, rows = own[kept], rows[kept]
            off = self.prep.offsets[w.sentence]
            shift = r * width + prefix - a  # sentence offset -> flattened batch position
            starts.append(off[own] + shift)
            ends.append(off[own + 1] + shift)
            target_parts.append(rows)
        plan = pooling_plan_flat(np.concatenate(starts), np.concatenate(ends), self.pooling)
        targets = np.concatenate(target_parts)
        padded = not bool(mask.all())
        return HostBatch(ids, mask, plan, targets[pooled_order(plan)], n_tokens, padded)
