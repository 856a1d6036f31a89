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

from workbench.errors import InputError

Progress = bool | Callable[[float], None] | None
AUTO_PROGRESS_MIN_WORDS = 5_000  # a progress bar appears by itself from this many words on


def keep_masks(words: list[list[str]], keep: Sequence[Sequence[int]] | None) -> list[np.ndarray]:
    """Per sentence, a boolean mask of the word positions to keep (all when ``keep`` is None).

    Raises:
        InputError: ``keep`` has another number of entries than there are sentences, or names
            a position outside its sentence.
    """
    if keep is None:
        return [np.ones(len(w), dtype=bool) for w in words]
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
        row_of: per sentence, ``(n_words,)`` row of each word, ``-1`` if not kept.
        sentence, position: ``(n,)`` sentence index and word position of each row.
        words: the word of each row.
    """

    n: int
    row_of: list[np.ndarray]
    sentence: np.ndarray
    position: np.ndarray
    words: list[str]

    @classmethod
    def build(cls, words: list[list[str]], masks: list[np.ndarray]) -> RowLayout:
        lengths = np.fromiter(map(len, words), dtype=np.int64, count=len(words))
        first = np.zeros(len(words) + 1, dtype=np.int64)
        np.cumsum(lengths, out=first[1:])
        kept = np.flatnonzero(np.concatenate(masks)) if len(words) else np.zeros(0, np.int64)
        flat_rows = np.full(int(first[-1]), -1, dtype=np.int64)
        flat_rows[kept] = np.arange(len(kept))
        sentence = np.repeat(np.arange(len(words), dtype=np.int64), lengths)[kept]
        position = kept - first[sentence]
        flat_words = list(chain.from_iterable(words))
        kept_words = flat_words if len(kept) == len(flat_words) else [flat_words[k] for k in kept]
        row_of = np.split(flat_rows, first[1:-1])
        return cls(len(kept), row_of, sentence, position, kept_words)

    def spans(self, offsets: list[np.ndarray]) -> np.ndarray:
        """``(n, 2)`` subword span of each row within its sentence (specials excluded), from
        each sentence's word offsets ``(n_words + 1,)``."""
        out = np.zeros((self.n, 2), dtype=np.int64)
        if not self.row_of:
            return out
        rows = np.concatenate(self.row_of)
        sel = rows >= 0
        out[rows[sel], 0] = np.concatenate([o[:-1] for o in offsets])[sel]
        out[rows[sel], 1] = np.concatenate([o[1:] for o in offsets])[sel]
        return out


def allocate(
    shape: tuple[int, int, int], dtype: np.dtype, out: str | os.PathLike[str] | None
) -> np.ndarray:
    """The output array: in memory, or a ``.npy`` memory map at ``out`` for larger-than-RAM runs.

    ``np.empty``, not ``np.zeros``: every row is written anyway, and zeroed memory costs page
    faults (docs/benchmarks.md, "Extraction").
    """
    if out is None:
        return np.empty(shape, dtype=dtype)
    path = Path(out)
    path.parent.mkdir(parents=True, exist_ok=True)
    return np.lib.format.open_memmap(path, mode="w+", dtype=dtype, shape=shape)


def progress_reporter(
    progress: Progress, total_tokens: int, n_words: int
) -> tuple[Any, Callable[[float], None] | None]:
    """A tqdm bar and/or a callback, as asked (auto: a bar for long runs only)."""
    if callable(progress):
        return None, progress
    show = progress if progress is not None else n_words >= AUTO_PROGRESS_MIN_WORDS
    if not show:
        return None, None
    from tqdm.auto import tqdm

    return tqdm(total=total_tokens, unit="tok", unit_scale=True, desc="encoding"), None
