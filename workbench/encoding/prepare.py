"""Tokenize word lists for the encoder and plan the windows the model runs.

Each sentence becomes one array of subword ids (no special tokens) and word offsets into it;
a word the tokenizer maps to nothing gets the unknown token (noted), a word with more subwords
than one input holds is cut (noted). Sentences that fit make one window; longer ones are cut
into overlapping windows of whole words, each word owned by the window where it has the most
context (:func:`workbench.encoding.alignment.plan_windows`,
:func:`workbench.encoding.alignment.assign_owners`).

Each distinct word is tokenized once (:class:`WordPieceTable`: a corpus repeats its words, and
with pre-split input a word's subwords do not depend on its neighbours), then laid out per
sentence with array operations; a tokenizer where that does not hold is tokenized sentence by
sentence. :class:`Preparer` does it for one input, or chunk by chunk over one input (the
overlapped run tokenizes the next chunk while the device runs this one:
:mod:`workbench.encoding.pipeline.stream`); :func:`prepare` in one go, its notes as warnings.

Example::

    prep = prepare(encoder.tokenizer, [["The", "embedding", "works"]], window_tokens=510)
    prep.offsets[0].tolist()            # [0, 1, 4, 5]: "embedding" is three subwords
"""

from __future__ import annotations

import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from functools import cached_property
from itertools import chain
from typing import TYPE_CHECKING, Any

import numpy as np

from workbench.encoding.alignment import (
    Window,
    assign_owners,
    plan_windows,
    run_starts,
    visible,
    word_token_lists,
)
from workbench.errors import InputError

if TYPE_CHECKING:
    from transformers import PreTrainedTokenizerBase


@dataclass(frozen=True)
class Prepared:
    """Tokenized input, flat: every sentence's subword ids end to end and where each word's
    subwords start in them; the windows to run; notes. ``ids`` and ``offsets`` give the same
    per sentence.

    Attributes:
        flat_ids: ``(n_subwords,)`` int64, every sentence's subwords in order, no specials.
        word_offsets: ``(n_words + 1,)`` int64, where each running word's subwords start in
            ``flat_ids`` (word ``j`` of sentence ``i`` is running word ``sentence_words[i] + j``).
        sentence_words: ``(n_sentences + 1,)`` int64, where each sentence's words start.
        windows: the model inputs to run (``sentence``: the index within this input).
        cut: a note for each word cut to fit one input.
        unknown: the words given the unknown token (printable forms), in input order.
    """

    flat_ids: np.ndarray
    word_offsets: np.ndarray
    sentence_words: np.ndarray
    windows: list[Window]
    cut: list[str]
    unknown: list[str]

    @property
    def notes(self) -> list[str]:
        """What was changed on the way (:func:`merged_notes`)."""
        return merged_notes(self.cut, self.unknown)

    def word_spans(self) -> np.ndarray:
        """``(n_words, 2)`` int64 each running word's subword range in its sentence."""
        off = self.word_offsets
        n_words = np.diff(self.sentence_words)
        first = np.repeat(off[self.sentence_words[:-1]], n_words)
        return np.stack([off[:-1] - first, off[1:] - first], axis=1)

    @cached_property
    def offsets(self) -> list[np.ndarray]:
        """Per sentence, ``(n_words + 1,)`` where each word's subwords start in the sentence."""
        sw, off = self.sentence_words.tolist(), self.word_offsets
        return [off[a : b + 1] - off[a] for a, b in zip(sw[:-1], sw[1:])]

    @cached_property
    def ids(self) -> list[np.ndarray]:
        """Per sentence, its subword ids (views of ``flat_ids``)."""
        bounds = self.word_offsets[self.sentence_words].tolist()
        return [self.flat_ids[a:b] for a, b in zip(bounds[:-1], bounds[1:])]


@contextmanager
def untruncated(backend: Any) -> Iterator[None]:
    """The Rust tokenizer with no truncation and no padding for the block, then as it was.

    Both are state of the tokenizer object: a ``tokenizer(..., truncation=True, max_length=16)``
    call anywhere leaves it cutting every later ``encode_batch`` at 16 subwords (and a
    checkpoint's ``tokenizer.json`` may carry a truncation of its own), which would turn the
    words past the cut into words with no subword. The encoder tokenizes every word whole.
    """
    truncation, padding = backend.truncation, backend.padding
    if truncation is None and padding is None:
        yield
        return
    backend.no_truncation()
    backend.no_padding()
    try:
        yield
    finally:
        if truncation is not None:
            backend.enable_truncation(**truncation)
        if padding is not None:
            backend.enable_padding(**padding)


def tokenize_words(
    tokenizer: PreTrainedTokenizerBase, sentences: list[list[str]]
) -> list[tuple[list[int], list[int | None]]]:
    """(ids, word ids) per sentence, without special tokens, from one batched call.

    Uses the Rust tokenizer directly where there is one (what ``tokenizer(...)`` calls
    underneath, minus a per-sentence conversion that costs as much as the tokenizing).
    """
    backend = getattr(tokenizer, "backend_tokenizer", None)
    if backend is not None:
        try:
            with untruncated(backend):
                encs = backend.encode_batch(
                    sentences, is_pretokenized=True, add_special_tokens=False
                )
            return [(e.ids, e.word_ids) for e in encs]
        except Exception:  # noqa: BLE001 - any oddity: the public API below is the reference
            pass
    enc = tokenizer(sentences, is_split_into_words=True, add_special_tokens=False, truncation=False)
    return [(enc["input_ids"][i], enc.word_ids(i)) for i in range(len(sentences))]


def _word_groups(
    tokenizer: PreTrainedTokenizerBase, sentences: list[list[str]]
) -> list[list[list[int]]]:
    """Each sentence's subword ids grouped by word, tokenized in context (the reference)."""
    subwords = tokenize_words(tokenizer, sentences)
    return [word_token_lists(*subwords[i], len(s)) for i, s in enumerate(sentences)]


@dataclass(frozen=True)
class WordPieces:
    """The subwords of every word of a corpus, each distinct word tokenized once.

    With pre-split input a fast tokenizer tokenizes each word on its own (WordPiece, BPE and
    Unigram models alike), so a word's subwords do not depend on its neighbours and a corpus
    needs its distinct words tokenized, not its running words (far fewer in a corpus).
    :class:`WordPieceTable` checks that on the corpus's first sentences and gives None for a
    tokenizer where it fails (a pre-tokenizer that marks only the first word, say).

    Attributes:
        ids: every word's subwords, concatenated in corpus order (int64).
        word_offsets: ``(n_words + 1,)`` where each running word's subwords start in ``ids``.
        sentence_words: ``(n_sentences + 1,)`` where each sentence's words start.
        raw_lengths: each running word's subword count before any fix (0: no subword).
    """

    ids: np.ndarray
    word_offsets: np.ndarray
    sentence_words: np.ndarray
    raw_lengths: np.ndarray


#: Sentences tokenized in context to check a tokenizer's words are context-free.
CHECK_SENTENCES = 64
#: Distinct words per sequence handed to the tokenizer (a sequence per word costs more in
#: Python objects than the tokenizing itself).
CHUNK_WORDS = 256


class WordPieceTable:
    """The subwords of each distinct word seen so far, tokenized once, for an input laid out in
    chunks (:meth:`lay_out` once per chunk: a word of a later chunk already seen is not
    tokenized again).

    Whether the tokenizer's words are context-free is checked on the first chunk's first
    :data:`CHECK_SENTENCES` sentences (against tokenizing them whole) and holds for every
    later chunk; where it fails, or the tokenizer has no Rust backend, :meth:`lay_out` returns
    None.

    Args:
        tokenizer: a HuggingFace fast tokenizer.
        unk: the unknown token, given to a word with no subword (None: left empty; the caller
            raises).
        max_word: a word with more subwords keeps its first ``max_word``.
    """

    def __init__(self, tokenizer: PreTrainedTokenizerBase, unk: int | None, max_word: int) -> None:
        self.tokenizer = tokenizer
        self.unk = unk
        self.max_word = max_word
        self.backend = getattr(tokenizer, "backend_tokenizer", None)
        self.context_free: bool | None = None if self.backend is not None else False
        self.index: dict[str, int] = {}  # word -> its row in the table
        self._table = np.zeros(0, dtype=np.int64)  # every word's (fixed) subwords, in order
        self._starts = np.zeros(1, dtype=np.int64)  # where each word's subwords start in it
        self._raw_all = np.zeros(0, dtype=np.int64)  # each word's subword count before any fix

    def lay_out(self, sentences: list[list[str]]) -> WordPieces | None:
        """Each running word's subwords, laid out per word (None: tokenize in context)."""
        if self.context_free is False:
            return None
        running = list(chain.from_iterable(sentences))
        index = self.index
        new = [w for w in dict.fromkeys(running) if w not in index]  # in order of first use
        if new and not self._add(new):
            self.context_free = False
            return None
        if self.context_free is None:
            self.context_free = self._check(sentences[:CHECK_SENTENCES])
            if not self.context_free:
                return None
        flat = np.fromiter(map(index.__getitem__, running), dtype=np.int64, count=len(running))
        starts = self._starts
        word_len = starts[flat + 1] - starts[flat]
        offsets = run_starts(word_len)
        # subword k of running word j is table[starts[flat[j]] + k]: one gather for the input
        gather = np.arange(offsets[-1], dtype=np.int64) + np.repeat(
            starts[flat] - offsets[:-1], word_len
        )
        sentence_words = run_starts(map(len, sentences))
        return WordPieces(self._table[gather], offsets, sentence_words, self._raw_all[flat])

    def _add(self, words: list[str]) -> bool:
        """Tokenize new distinct words into the table; False if the tokenizer's answer does
        not give each word its own subwords (a special token's text, say)."""
        backend = self.backend
        if backend is None:
            return False
        chunks = [words[k : k + CHUNK_WORDS] for k in range(0, len(words), CHUNK_WORDS)]
        try:
            with untruncated(backend):
                encs = backend.encode_batch(chunks, is_pretokenized=True, add_special_tokens=False)
            table = np.fromiter(chain.from_iterable(e.ids for e in encs), dtype=np.int64)
            raw = np.concatenate(
                [
                    np.bincount(np.asarray(e.word_ids, dtype=np.int64), minlength=len(c))
                    for e, c in zip(encs, chunks)
                ]  # fmt: skip
            )
        except Exception:  # noqa: BLE001 - any oddity: the reference path
            return False
        if len(raw) != len(words) or raw.sum() != len(table):
            return False
        lengths = raw
        if ((raw == 0) | (raw > self.max_word)).any():  # rare: unk for none, long ones cut
            unk = np.asarray([] if self.unk is None else [self.unk], dtype=np.int64)
            parts = np.split(table, np.cumsum(raw)[:-1])
            fixed = [q[: self.max_word] if len(q) else unk for q in parts]
            lengths = np.fromiter(map(len, fixed), dtype=np.int64, count=len(fixed))
            table = np.concatenate(fixed)
        base = len(self.index)
        self.index.update(zip(words, range(base, base + len(words))))
        self._table = np.concatenate([self._table, table])
        self._raw_all = np.concatenate([self._raw_all, raw])
        self._starts = np.concatenate([self._starts, self._starts[-1] + np.cumsum(lengths)])
        return True

    def _check(self, sample: list[list[str]]) -> bool:
        """Whether the table gives ``sample``'s words the subwords they get in context."""
        table, starts, index, unk = self._table, self._starts, self.index, self.unk
        for words, groups in zip(sample, _word_groups(self.tokenizer, sample)):
            for w, g in zip(words, groups):
                k = index[w]
                want = g[: self.max_word] if g else ([] if unk is None else [unk])
                if table[starts[k] : starts[k + 1]].tolist() != want:
                    return False
        return True


class Preparer:
    """Tokenizes word lists and plans their windows, one chunk of an input after another.

    Each distinct word is tokenized once over all the chunks (:class:`WordPieceTable`) where
    the tokenizer allows it, else every sentence whole. A chunk's notes name its sentences by
    their index in the whole input (``first``).

    Args:
        tokenizer: a HuggingFace fast tokenizer.
        window_tokens: most subwords one model input holds (special tokens excluded).
        stride: subwords between window starts for longer sentences (default: half).
        by_word: tokenize each distinct word once where the tokenizer allows it; False: every
            sentence whole, the reference (the result is the same).
    """

    def __init__(
        self,
        tokenizer: PreTrainedTokenizerBase,
        window_tokens: int,
        stride: int | None = None,
        by_word: bool = True,
    ) -> None:
        self.tokenizer = tokenizer
        self.window_tokens = window_tokens
        self.stride = stride
        self.unk = tokenizer.unk_token_id
        self.table = WordPieceTable(tokenizer, self.unk, window_tokens) if by_word else None

    def __call__(self, sentences: list[list[str]], first: int = 0) -> Prepared:
        """The chunk ``sentences`` (validated word lists, the first of them sentence ``first``
        of the input) tokenized, with its windows (sentence indices within the chunk).

        Raises:
            InputError: a word maps to no subword and the tokenizer has no unknown token.
        """
        unk, window_tokens = self.unk, self.window_tokens
        sentences = capped_words(sentences)
        pieces = self.table.lay_out(sentences) if self.table is not None else None
        if pieces is None:
            pieces, cut, unknown = _in_context(self.tokenizer, sentences, unk, window_tokens, first)
        else:
            cut, unknown = _odd_words(pieces, sentences, unk, window_tokens, first)
        sw, off = pieces.sentence_words, pieces.word_offsets
        totals = np.diff(off[sw]).tolist()  # subwords of each sentence
        windows: list[Window] = []
        for i, words in enumerate(sentences):
            if totals[i] <= window_tokens:  # the usual case: one window, no planning
                windows.append(Window(i, 0, len(words), range(len(words))))
                continue
            lengths = np.diff(off[sw[i] : sw[i + 1] + 1]).tolist()
            spans = plan_windows(lengths, window_tokens, self.stride)
            owners = assign_owners(spans, lengths)
            windows.extend(Window(i, s, e, own) for (s, e), own in zip(spans, owners))
        return Prepared(pieces.ids, off, sw, windows, cut, unknown)


def merged_notes(cut: list[str], unknown: list[str]) -> list[str]:
    """The notes of a prepared input: each word cut, then one line for the words given the
    unknown token (the first ten shown)."""
    notes = list(cut)
    if unknown:
        shown = ", ".join(f"'{w}'" for w in unknown[:10])
        more = f" and {len(unknown) - 10} more" if len(unknown) > 10 else ""
        notes.append(
            f"{len(unknown)} word(s) map to no subword and were encoded as the unknown "
            f"token: {shown}{more}"
        )
    return notes


#: The most characters of one word the tokenizer reads: a longer word is cut to its first
#: this many before tokenizing (WordPiece already reads a word over 100 characters as its
#: unknown token; a tokenizer's memory grows with a word's length, tens of bytes a character).
MAX_WORD_CHARS = 1000


def capped_words(sentences: list[list[str]]) -> list[list[str]]:
    """``sentences`` with every word over :data:`MAX_WORD_CHARS` characters cut to that many
    (the same list when none is: the usual case costs one length scan a sentence).

    Example::

        >>> [len(w) for w in capped_words([["a", "x" * 5000]])[0]]
        [1, 1000]
    """
    if all(max(map(len, words), default=0) <= MAX_WORD_CHARS for words in sentences):
        return sentences
    return [[w[:MAX_WORD_CHARS] for w in words] for words in sentences]


def prepare(
    tokenizer: PreTrainedTokenizerBase,
    sentences: list[list[str]],
    window_tokens: int,
    stride: int | None = None,
    by_word: bool = True,
) -> Prepared:
    """Tokenize validated word lists and plan the windows the model runs, in one chunk; each
    note is also issued as a warning.

    Args:
        tokenizer: a HuggingFace fast tokenizer.
        sentences: word lists (from :func:`workbench.encoding.alignment.normalize_input`).
        window_tokens: most subwords one model input holds (special tokens excluded).
        stride: subwords between window starts for longer sentences (default: half).
        by_word: tokenize each distinct word once (:class:`WordPieceTable`) where the
            tokenizer allows it; False: every sentence whole, the reference (same result).
    """
    prep = Preparer(tokenizer, window_tokens, stride, by_word)(sentences)
    for note in prep.notes:
        warnings.warn(note, stacklevel=2)
    return prep


def _no_token(i: int, j: int, word: str) -> InputError:
    return InputError(
        f"Word {j} of sentence {i} ('{visible(word)}') maps to no token "
        "and this tokenizer has no unknown token."
    )


def _too_long(i: int, j: int, word: str, window_tokens: int) -> str:
    return (
        f"word {j} of sentence {i} ('{visible(word)[:30]}') has more subwords "
        f"than fit in one input; its first {window_tokens} were used"
    )


def _in_context(
    tokenizer: PreTrainedTokenizerBase,
    sentences: list[list[str]],
    unk: int | None,
    window_tokens: int,
    first: int = 0,
) -> tuple[WordPieces, list[str], list[str]]:
    """The input tokenized sentence by sentence (the reference for :class:`WordPieceTable`),
    the notes of words cut, and the words given the unknown token (sentences named from
    ``first``)."""
    groups_of: list[list[list[int]]] = []
    notes: list[str] = []
    unk_words: list[str] = []
    raw: list[int] = []
    for i, (words, groups) in enumerate(zip(sentences, _word_groups(tokenizer, sentences))):
        raw.extend(map(len, groups))
        for j, group in enumerate(groups):
            if not group:
                if unk is None:
                    raise _no_token(first + i, j, words[j])
                group.append(unk)
                unk_words.append(visible(words[j]))
            elif len(group) > window_tokens:
                del group[window_tokens:]
                notes.append(_too_long(first + i, j, words[j], window_tokens))
        groups_of.append(groups)
    every = [g for groups in groups_of for g in groups]
    offsets = run_starts(map(len, every))
    ids = np.fromiter(chain.from_iterable(every), dtype=np.int64, count=int(offsets[-1]))
    sentence_words = run_starts(map(len, sentences))
    raw_lengths = np.asarray(raw, dtype=np.int64)
    return WordPieces(ids, offsets, sentence_words, raw_lengths), notes, unk_words


def _odd_words(
    pieces: WordPieces,
    sentences: list[list[str]],
    unk: int | None,
    window_tokens: int,
    first: int = 0,
) -> tuple[list[str], list[str]]:
    """The notes and unknown-token words of :func:`_in_context`, from :class:`WordPieces`."""
    starts = pieces.sentence_words

    def where(k: int) -> tuple[int, int]:  # running word k -> (sentence, position)
        i = int(np.searchsorted(starts, k, side="right")) - 1
        return i, k - int(starts[i])

    notes: list[str] = []
    unk_words: list[str] = []
    odd = np.flatnonzero((pieces.raw_lengths == 0) | (pieces.raw_lengths > window_tokens))
    for k in odd.tolist():  # rare: in corpus order, as the in-context path finds them
        i, j = where(k)
        if pieces.raw_lengths[k]:
            notes.append(_too_long(first + i, j, sentences[i][j], window_tokens))
        elif unk is None:
            raise _no_token(first + i, j, sentences[i][j])
        else:
            unk_words.append(visible(sentences[i][j]))
    return notes, unk_words
