"""The numerics behind the app's Explore page: a word's occurrences across layers, neighbours.

* :func:`find_word` - where a word (any of its forms) occurs in tokenised sentences.
* :func:`layerwise_similarity` - cosine of every occurrence with one chosen occurrence, layer
  by layer: the ``(n_occurrences, n_layers)`` matrix the heatmap draws.
* :class:`NeighbourIndex` - exact cosine nearest neighbours among all words of a corpus at one
  layer (FAISS inner product over unit rows).

Example::

    rows = find_word(emb_words, "bank")               # [(sentence, position), ...]
    sim = layerwise_similarity(emb.vectors[idx], 0)   # (len(idx), n_layers)
    nn = NeighbourIndex().fit(emb.select("6"))
    scores, ids = nn.search(emb.select("6")[idx[0]], k=10, exclude=[idx[0]])
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence

import numpy as np

from workbench.corpora.occurrences import lemma_matcher
from workbench.encoding.alignment import split_words
from workbench.errors import InputError
from workbench.lexicon.morphology import base_forms

_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[\"'“‘(\[]?[A-Z0-9])")
MAX_SENTENCES = 200
#: Function words, listed after content words when offering a word to explore.
STOPWORDS = frozenset(
    """a about above after again all also am an and any are as at be been before being below
    between both but by can could did do does doing down during each few for from further had
    has have having he her here hers herself him himself his how i if in into is it its itself
    just me more most my myself no nor not now of off on once only or other our ours ourselves
    out over own same she should so some such than that the their theirs them themselves then
    there these they this those through to too under until up very was we were what when where
    which while who whom why will with would you your yours yourself yourselves""".split()
)


def split_sentences(text: str) -> list[list[str]]:
    """Raw text -> sentences as words: one per line, long lines split after ``.!?``.

    Raises:
        InputError: the text holds no word, or more than :data:`MAX_SENTENCES` sentences.
    """
    pieces = [p for line in (text or "").splitlines() for p in _SENTENCE_END.split(line)]
    sentences = [words for p in pieces if (words := split_words(p))]
    if not sentences:
        raise InputError("the text is empty: type or paste at least one sentence")
    if len(sentences) > MAX_SENTENCES:
        raise InputError(
            f"{len(sentences)} sentences is more than this page shows ({MAX_SENTENCES}); "
            "paste fewer, or use the Senses page with a text file"
        )
    return sentences


def word_counts(sentences: Sequence[Sequence[str]]) -> list[tuple[str, int]]:
    """Lowercased word types with a letter and how often a form of each occurs (as
    :func:`find_word` counts: ``bank`` counts ``banks`` too). Order: repeated content words
    (most frequent first), repeated function words (:data:`STOPWORDS`), then the others in
    text order."""
    order: dict[str, int] = {}
    counts: Counter = Counter()
    for words in sentences:
        for w in words:
            if any(ch.isalpha() for ch in w):
                order.setdefault(w.lower(), len(order))
                counts.update(base_forms(w) | {w.lower()})
    return sorted(
        ((w, counts[w]) for w in order),
        key=lambda kv: (kv[1] < 2, kv[1] > 1 and kv[0] in STOPWORDS, -kv[1], order[kv[0]]),
    )


def snippet(words: Sequence[str], index: int, width: int = 6) -> str:
    """The words around ``index`` with the word in brackets: ``"… on the [bank] of …"``."""
    lo, hi = max(0, index - width), min(len(words), index + width + 1)
    parts = [f"[{w}]" if i == index else w for i, w in enumerate(words[lo:hi], start=lo)]
    return ("… " if lo > 0 else "") + " ".join(parts) + (" …" if hi < len(words) else "")


def find_word(sentences: Sequence[Sequence[str]], word: str) -> list[tuple[int, int]]:
    """``(sentence, position)`` of every form of ``word`` (WordNet morphology, any case).

    Raises:
        InputError: ``word`` is empty or does not occur.
    """
    matches = lemma_matcher(word)
    found = [(s, i) for s, words in enumerate(sentences) for i, w in enumerate(words) if matches(w)]
    if not found:
        raise InputError(f"{word!r} does not occur in the text; pick a word of the text")
    return found


def _unit(x: np.ndarray) -> np.ndarray:
    x = np.asarray(x, dtype=np.float32)
    norm = np.linalg.norm(x, axis=-1, keepdims=True)
    return x / np.maximum(norm, 1e-12)


def layerwise_similarity(vectors: np.ndarray, query: int) -> np.ndarray:
    """Cosine similarity of each occurrence with occurrence ``query``, per layer.

    Args:
        vectors: ``(n_occurrences, n_layers, dim)``.
        query: row of the reference occurrence.

    Returns:
        ``(n_occurrences, n_layers)`` float32; row ``query`` is all ones (for non-zero vectors).
    """
    vectors = np.asarray(vectors, dtype=np.float32)
    if vectors.ndim != 3:
        raise InputError(f"vectors must be (n_occurrences, n_layers, dim), got {vectors.shape}")
    if not 0 <= query < vectors.shape[0]:
        raise InputError(f"occurrence {query} does not exist (there are {vectors.shape[0]})")
    unit = _unit(vectors)
    return np.einsum("nld,ld->nl", unit, unit[query])


class NeighbourIndex:
    """Exact cosine nearest neighbours among ``(n, dim)`` vectors (FAISS ``IndexFlatIP``).

    Attributes (after :meth:`fit`):
        index_: the FAISS index over the unit rows.
        n_: number of indexed vectors.
    """

    def fit(self, vectors: np.ndarray) -> NeighbourIndex:
        """Index ``vectors`` ``(n, dim)``; returns ``self``."""
        import faiss

        vectors = np.asarray(vectors, dtype=np.float32)
        if vectors.ndim != 2 or vectors.shape[0] == 0:
            raise InputError(f"vectors must be a non-empty (n, dim) array, got {vectors.shape}")
        self.index_ = faiss.IndexFlatIP(vectors.shape[1])
        self.index_.add(np.ascontiguousarray(_unit(vectors)))
        self.n_ = vectors.shape[0]
        return self

    def search(
        self, query: np.ndarray, k: int = 10, exclude: Sequence[int] = ()
    ) -> tuple[np.ndarray, np.ndarray]:
        """The ``k`` rows most similar to ``query`` ``(dim,)``, best first.

        Args:
            query: ``(dim,)`` vector.
            k: how many neighbours.
            exclude: rows never returned (e.g. the query itself).

        Returns:
            ``(scores, rows)``: ``(m,)`` float32 cosines and ``(m,)`` int64 rows, ``m <= k``.
        """
        if not hasattr(self, "index_"):
            raise InputError("NeighbourIndex is not fitted; call fit() first")
        query = _unit(np.asarray(query, dtype=np.float32).reshape(1, -1))
        if query.shape[1] != self.index_.d:
            raise InputError(f"query has {query.shape[1]} dims, the index {self.index_.d}")
        want = min(self.n_, k + len(set(exclude)))
        scores, rows = self.index_.search(query, want)
        skip = set(int(e) for e in exclude)
        keep = [j for j, r in enumerate(rows[0]) if r >= 0 and int(r) not in skip][:k]
        return scores[0, keep].astype(np.float32), rows[0, keep].astype(np.int64)


def locate_rows(
    sentence_index: np.ndarray, word_index: np.ndarray, places: Sequence[tuple[int, int]]
) -> list[int]:
    """Rows of an embedding table (``sentence_index``, ``word_index`` ``(n_rows,)``) holding
    each ``(sentence, position)`` of ``places``.

    Raises:
        InputError: a place has no row (that word was not kept).
    """
    lookup = {(int(s), int(w)): r for r, (s, w) in enumerate(zip(sentence_index, word_index))}
    missing = [p for p in places if tuple(p) not in lookup]
    if missing:
        raise InputError(f"word(s) at {missing[:3]} were not encoded")
    return [lookup[tuple(p)] for p in places]
