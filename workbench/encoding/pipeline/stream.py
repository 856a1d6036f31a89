"""An input's batches, chunk by chunk, so that tokenizing overlaps the device.

Tokenizing a large input can take longer than a GPU takes to run it, and the batches cannot
be planned before the input's lengths are known (docs/benchmarks.md, "The batch pipeline and
the GPU", has the figures). :class:`BatchStream` cuts the input into chunks of whole sentences
(:func:`chunk_bounds`: the first holds about ``first_words`` words, each later one twice the one
before, so the device starts early and later chunks are long enough to sort into full
batches), and for each chunk tokenizes it (:class:`~workbench.encoding.prepare.Preparer`, each
distinct word once over all chunks), plans its windows and batches, and yields them. Iterated
by the producer thread of :func:`~workbench.encoding.pipeline.overlap.run_overlapped`, the next
chunk is tokenized while the device runs this one. With one chunk (``first_words`` 0) it is the
whole input at once, the batches of the encoder's plain loop.

The vectors do not depend on the chunks: a word's row comes from its sentence's own window(s);
only which sentences share a batch changes (between chunkings, equal up to the float rounding
of other batch shapes).

Example::

    stream = BatchStream(words, Preparer(tok, 510), lambda p, a, b: BatchBuilder(...), 8192)
    for builder, windows in stream:
        batch = builder.build(windows)
    stream.notes(), stream.word_spans()
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

import numpy as np

from workbench.encoding.alignment import run_starts
from workbench.encoding.batching import BatchBuilder
from workbench.encoding.prepare import Prepared, Preparer, merged_notes


def first_chunk_words(max_batch_tokens: int) -> int:
    """The first chunk's words on cuda by default: a quarter of the batch budget, so the
    device starts after a small part of the input is tokenized (doubling, the chunks reach
    the budget's size by the third)."""
    return max(int(max_batch_tokens) // 4, 1)


def chunk_bounds(sentence_words: np.ndarray, first_words: int) -> list[tuple[int, int]]:
    """Sentence ranges ``[start, stop)`` of the chunks: the first ends at the first sentence
    boundary at or past ``first_words`` words, each later one holds twice the words of the one
    before (the last takes the rest); ``first_words`` 0: one chunk.

    Args:
        sentence_words: ``(n_sentences + 1,)`` where each sentence's words start.
        first_words: words in the first chunk (at least; whole sentences).
    """
    n = len(sentence_words) - 1
    if first_words <= 0 or n == 0:
        return [(0, n)]
    bounds: list[tuple[int, int]] = []
    start, size = 0, int(first_words)
    while start < n:
        want = int(sentence_words[start]) + size
        stop = int(np.searchsorted(sentence_words, want, side="left"))
        stop = min(max(stop, start + 1), n)
        bounds.append((start, stop))
        start, size = stop, size * 2
    return bounds


class BatchStream:
    """The batches of an input, tokenized and planned one chunk at a time as they are asked for.

    Args:
        words: the input's validated word lists.
        preparer: tokenizes a chunk (:class:`~workbench.encoding.prepare.Preparer`).
        make_builder: ``make_builder(prep, first, last)``: the
            :class:`~workbench.encoding.batching.BatchBuilder` of a chunk whose running words
            are the input's ``first`` to ``last`` (``last`` excluded).
        first_words: words in the first chunk (:func:`chunk_bounds`; 0: one chunk).
        lap: ``lap(stage)`` records the seconds since the last call as ``stage`` (``lap()``
            restarts the clock); tokenizing is ``tokenize``, windows and batches ``layout``.

    Attributes:
        sentence_words: ``(n_sentences + 1,)`` where each sentence's words start.
        bounds: each chunk's sentence range.
        preps: each chunk's tokenized input, in order, once reached.
    """

    def __init__(
        self,
        words: list[list[str]],
        preparer: Preparer,
        make_builder: Callable[[Prepared, int, int], BatchBuilder],
        first_words: int = 0,
        lap: Callable[..., None] | None = None,
    ) -> None:
        self.words = words
        self.preparer = preparer
        self.make_builder = make_builder
        self.lap = lap or (lambda stage=None: None)
        self.sentence_words = run_starts(map(len, words))
        self.bounds = chunk_bounds(self.sentence_words, first_words)
        self.preps: list[Prepared] = []

    def __iter__(self) -> Iterator[tuple[BatchBuilder, np.ndarray]]:
        for start, stop in self.bounds:
            self.lap()
            prep = self.preparer(self.words[start:stop], start)
            self.preps.append(prep)
            self.lap("tokenize")
            first, last = self.sentence_words[start], self.sentence_words[stop]
            builder = self.make_builder(prep, int(first), int(last))
            batches = builder.batches()
            self.lap("layout")
            for batch in batches:
                yield builder, batch

    def notes(self) -> list[str]:
        """What tokenizing changed, over every chunk reached (words cut, unknown tokens)."""
        cut = [n for p in self.preps for n in p.cut]
        unknown = [w for p in self.preps for w in p.unknown]
        return merged_notes(cut, unknown)

    def word_spans(self) -> np.ndarray:
        """``(n_words, 2)`` each running word's subword range in its sentence, over every
        chunk reached (:meth:`~workbench.encoding.prepare.Prepared.word_spans`)."""
        spans = [p.word_spans() for p in self.preps]
        return np.concatenate(spans or [np.zeros((0, 2), np.int64)])
