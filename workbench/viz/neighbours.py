"""The numerics behind the app's Explore page: a word's occurrences across layers, neighbours.

* :func:`find_word` - where a word (any of its forms) occurs in tokenised sentences.
* :func:`layerwise_similarity` - cosine of every occurrence with one chosen occurrence, layer
  by layer: the ``(n_occurrences, n_layers)`` matrix the heatmap draws.
* :class:`NeighbourIndex` - exact cosine nearest neighbours among all words of a corpus at one
  layer (FAISS inner product over unit rows).
* :class:`NeighbourPool` - the words of several corpora (a reference corpus, the user's text)
  stacked into one search space at a layer spec; maps a pool row back to its corpus, sentence
  and word, so a neighbour comes with its context.

Example::

    places = find_word(sentences, "bank")             # [(sentence, position), ...]
    rows = locate_rows(emb.sentence_index, emb.word_index, places)
    sim = layerwise_similarity(emb.vectors[rows], 0)  # (len(rows), n_layers)
    pool = NeighbourPool("6").fit([PoolPart("reference", ref_sentences, ref_emb),
                                   PoolPart("your text", sentences, emb)])
    pool.nearest(1, rows[0], k=10)                    # [Neighbour(word, cosine, context, part)]
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

import numpy as np

from workbench.corpora.occurrences import lemma_matcher
from workbench.encoding.alignment import split_words
from workbench.encoding.embeddings import LayerwiseEmbeddings
from workbench.encoding.pooling import combine_layers
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
    wanted = [(int(s), int(w)) for s, w in places]
    missing = [p for p in wanted if p not in lookup]
    if missing:
        raise InputError(f"word(s) at {missing[:3]} were not encoded")
    return [lookup[p] for p in wanted]


class Transform(Protocol):
    """Anything with ``transform(x) -> x'`` on ``(n, n_layers, dim)`` vectors (a fitted
    correction of :mod:`workbench.geometry.corrections`)."""

    def transform(self, x: np.ndarray) -> np.ndarray: ...


@dataclass(frozen=True)
class PoolPart:
    """One corpus of a :class:`NeighbourPool`.

    Attributes:
        name: what the pool calls it (``"reference"``, ``"your text"``).
        sentences: the corpus's sentences as words; row ``r`` of ``emb`` is word
            ``emb.word_index[r]`` of sentence ``emb.sentence_index[r]``.
        emb: its word vectors, ``(n_words, n_kept_layers, dim)``.
    """

    name: str
    sentences: Sequence[Sequence[str]]
    emb: LayerwiseEmbeddings


@dataclass(frozen=True)
class Neighbour:
    """One nearest neighbour: the word, its cosine with the query, its context, its corpus."""

    word: str
    cosine: float
    context: str  # the words around it, the word in [brackets] (see :func:`snippet`)
    part: str  # the name of the PoolPart it comes from


class NeighbourPool:
    """Exact cosine neighbours among the words of several corpora at one layer spec.

    The pool's rows are the rows of ``parts[0].emb``, then those of ``parts[1].emb``, and so
    on; :meth:`row` and :meth:`locate` convert between a part's row and a pool row.

    Args:
        layers: the layer spec of the search vectors (``"6"``, ``"last4-sum"``, ...).
        post: applied to every part's ``(n, n_layers, dim)`` vectors before the layers are
            combined (a fitted correction); None: the raw vectors.

    Attributes (after :meth:`fit`):
        parts_: the parts.
        offsets_: ``(n_parts + 1,)`` int64, pool row of each part's first row, then the total.
        vectors_: ``(n_rows, dim)`` float32 search vectors.
        index_: the :class:`NeighbourIndex` over ``vectors_``.
    """

    def __init__(self, layers: str, post: Transform | None = None) -> None:
        self.layers = layers
        self.post = post

    def fit(self, parts: Sequence[PoolPart]) -> NeighbourPool:
        """Stack the parts' vectors, combine the layers, index them; returns ``self``.

        Raises:
            InputError: no part, or parts whose vectors come from different hidden states.
        """
        parts = tuple(parts)
        if not parts:
            raise InputError("a neighbour pool needs at least one corpus")
        first = parts[0].emb
        for part in parts[1:]:
            if tuple(part.emb.layers) != tuple(first.layers) or part.emb.dim != first.dim:
                raise InputError(
                    f"{part.name!r} has other vectors than {parts[0].name!r} "
                    "(hidden states or dimension differ); encode both with the same model"
                )
        stacked = np.concatenate([np.asarray(p.emb.vectors) for p in parts])
        if self.post is not None:
            stacked = self.post.transform(stacked)
        self.parts_ = parts
        self.offsets_ = np.cumsum([0, *(len(p.emb) for p in parts)]).astype(np.int64)
        self.vectors_ = combine_layers(stacked, first.layers, self.layers, first.n_hidden)
        self.index_ = NeighbourIndex().fit(self.vectors_)
        return self

    def __len__(self) -> int:
        """Rows in the pool (every word of every part)."""
        return int(self.offsets_[-1])

    def row(self, part: int, row: int) -> int:
        """The pool row of row ``row`` of part ``part``."""
        if not 0 <= row < len(self.parts_[part].emb):
            raise InputError(f"{self.parts_[part].name!r} has no row {row}")
        return int(self.offsets_[part] + row)

    def locate(self, row: int) -> tuple[int, int]:
        """``(part, row in that part)`` of a pool row."""
        if not 0 <= row < len(self):
            raise InputError(f"the pool has no row {row} (it has {len(self)})")
        part = int(np.searchsorted(self.offsets_, row, side="right")) - 1
        return part, int(row - self.offsets_[part])

    def neighbour(self, row: int, cosine: float, width: int = 6) -> Neighbour:
        """The word at pool row ``row`` as a :class:`Neighbour` (context ``width`` words)."""
        part, local = self.locate(row)
        p = self.parts_[part]
        words = p.sentences[int(p.emb.sentence_index[local])]
        context = snippet(words, int(p.emb.word_index[local]), width)
        return Neighbour(str(p.emb.words[local]), float(cosine), context, p.name)

    def nearest(self, part: int, row: int, k: int = 10, width: int = 6) -> list[Neighbour]:
        """The ``k`` words of the pool nearest to row ``row`` of part ``part`` (itself left
        out), best first, each with ``width`` words of context on either side."""
        query = self.row(part, row)
        scores, rows = self.index_.search(self.vectors_[query], k=k, exclude=[query])
        return [self.neighbour(int(r), float(s), width) for s, r in zip(scores, rows)]
