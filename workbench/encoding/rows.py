"""Where each kept word's vector goes in the encoder's output, and the output array itself.

The output of :meth:`workbench.encoding.encoder.Encoder.encode` has one row per kept word, in input
order (sentence by sentence, word by word). :class:`RowLayout` maps each (sentence, word
position) to its row (``-1`` where the word is not kept) and carries the per-row tables that
:class:`~workbench.encoding.embeddings.LayerwiseEmbeddings` stores beside the vectors.

Example:
    >>> layout = RowLayout.build([["a", "b", "c"], ["d"]], keep_masks([["a", "b", "c"], ["d"]],
    ...                          [[0, 2], [0]]))
    >>> layout.n, layout.row_of[0].tolist(), layout.words
    (3, [0, -1, 1], ['a', 'c', 'd'])
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from itertools import chain
from pathlib import Path
from typing import Any

import numpy as np

from workbench.encoding.alignment import run_starts
from workbench.errors import InputError, LimitError
from workbench.limits import check_allocation, check_disk

Progress = bool | Callable[[float], None] | None
AUTO_PROGRESS_MIN_WORDS = 5_000  # a progress bar appears by itself from this many words on


def keep_masks(
    words: list[list[str]], keep: Sequence[Sequence[int]] | None
) -> list[np.ndarray] | None:
    """Per sentence, a boolean mask of the word positions to keep (None: every word).

    Raises:
        InputError: ``keep`` has another number of entries than there are sentences, or names
            a position outside its sentence.
    """
    if keep is None:
        return None
    if len(keep) != len(words):
        raise InputError(f"keep has {len(keep)} entries for {len(words)} sentences.")
    masks = []
    for i, (sent, positions) in enumerate(zip(words, keep)):
        mask = np.zeros(len(sent), dtype=bool)
        for p in positions:
            if not 0 <= int(p) < len(sent):
                raise InputError(f"keep: position {p} is outside sentence {i} ({len(sent)} words).")
            mask[int(p)] = True
        masks.append(mask)
    return masks


@dataclass(frozen=True)
class RowLayout:
    """Output row of every kept word.

    Attributes:
        n: number of rows (kept words).
        rows: ``(n_words,)`` int64 row of each running word of the input (sentence by
            sentence), ``-1`` if not kept.
        sentence_words: ``(n_sentences + 1,)`` int64 where each sentence's words start.
        sentence, position: ``(n,)`` sentence index and word position of each row.
        words: the word of each row.
    """

    n: int
    rows: np.ndarray
    sentence_words: np.ndarray
    sentence: np.ndarray
    position: np.ndarray
    words: list[str]

    @classmethod
    def build(cls, words: list[list[str]], masks: list[np.ndarray] | None) -> RowLayout:
        """The layout of ``words`` keeping the words ``masks`` marks (None: every word)."""
        first = run_starts(map(len, words))
        lengths = np.diff(first)
        n_words = int(first[-1])
        sentence = np.repeat(np.arange(len(words), dtype=np.int64), lengths)
        flat_words = list(chain.from_iterable(words))
        if masks is None:
            kept = np.arange(n_words, dtype=np.int64)
            rows, kept_words = kept, flat_words
        else:
            kept = np.flatnonzero(np.concatenate(masks)) if words else np.zeros(0, np.int64)
            rows = np.full(n_words, -1, dtype=np.int64)
            rows[kept] = np.arange(len(kept))
            sentence = sentence[kept]
            kept_words = [flat_words[k] for k in kept.tolist()]
        return cls(len(kept), rows, first, sentence, kept - first[sentence], kept_words)

    @property
    def row_of(self) -> list[np.ndarray]:
        """Per sentence, ``(n_words,)`` row of each word (views of ``rows``)."""
        return np.split(self.rows, self.sentence_words[1:-1])

    def chunk_rows(self, start: int, stop: int) -> np.ndarray:
        """``rows`` of the words of sentences ``start`` to ``stop`` (a view)."""
        return self.rows[self.sentence_words[start] : self.sentence_words[stop]]

    def spans(self, word_spans: np.ndarray) -> np.ndarray:
        """``(n, 2)`` subword span of each row within its sentence (specials excluded), from
        every running word's span ``(n_words, 2)``
        (:meth:`workbench.encoding.prepare.Prepared.word_spans`)."""
        kept = self.rows >= 0
        return np.ascontiguousarray(word_spans[kept] if not kept.all() else word_spans)


def allocate(
    shape: tuple[int, int, int], dtype: np.dtype, out: str | os.PathLike[str] | None
) -> np.ndarray:
    """The output array: in memory, or a ``.npy`` memory map at ``out`` for larger-than-RAM runs.

    ``np.empty``, not ``np.zeros``: every row is written anyway, and zeroed memory costs page
    faults (docs/benchmarks.md, "Extraction").

    Raises:
        LimitError: an array in memory larger than the memory available now
            (:func:`workbench.limits.check_allocation`), or a memory map larger than the disk's
            free space (:func:`workbench.limits.check_disk`): a text of millions of one-letter
            words asks for tens of GiB of vectors, refused before anything is encoded.
    """
    n_words, n_layers, dim = shape
    nbytes = int(np.prod(shape, dtype=np.float64)) * dtype.itemsize
    what = f"the vectors of {n_words:,} words x {n_layers} hidden states x {dim} ({dtype})"
    if out is None:
        check_allocation(nbytes, what)
        try:
            return np.empty(shape, dtype=dtype)
        except MemoryError as exc:  # more than the system lends, whatever it said it had
            raise LimitError(f"cannot allocate the vectors of {n_words:,} words: {exc}") from exc
    path = Path(out)
    path.parent.mkdir(parents=True, exist_ok=True)
    check_disk(nbytes, path.parent, what)
    return np.lib.format.open_memmap(path, mode="w+", dtype=dtype, shape=shape)


def progress_part(progress: Progress, start: float, stop: float) -> Progress:
    """The part ``start`` .. ``stop`` (fractions of the whole) of a job's ``progress``, for one
    of its steps: a callback gets ``start + f * (stop - start)`` for the step's own fraction
    ``f``, so it moves from 0 to 1 once over the whole job; a bar (True) or None passes
    unchanged (each step shows its own bar)."""
    if not callable(progress):
        return progress
    report = progress

    def part(fraction: float) -> None:
        report(start + fraction * (stop - start))

    return part


def progress_reporter(
    progress: Progress, n_words: int
) -> tuple[Any, Callable[[float], None] | None]:
    """A tqdm bar counting ``n_words`` words and/or a callback, as asked (auto: a bar for long
    runs only)."""
    if callable(progress):
        return None, progress
    show = progress if progress is not None else n_words >= AUTO_PROGRESS_MIN_WORDS
    if not show:
        return None, None
    from tqdm.auto import tqdm

    return tqdm(total=n_words, unit="word", unit_scale=True, desc="encoding"), None
