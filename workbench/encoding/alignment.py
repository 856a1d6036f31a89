"""Pure functions: input validation, the raw-text splitting rule, words -> subword spans, windows.

The unit everywhere is the *word*. Subword tokens exist only between the tokenizer and pooling:
each word maps to a contiguous span of subword tokens, and a sentence longer than the model's
maximum length is cut into overlapping windows of whole words.

Splitting rule for raw strings (:func:`split_words`): runs of letters/digits/underscore, with
inner hyphens or apostrophes kept inside a word ("state-of-the-art", "don't"), and every other
non-space character (punctuation, symbols, emoji) as a word of its own::

    >>> split_words("Don't panic: it's state-of-the-art!")
    ["Don't", 'panic', ':', "it's", 'state-of-the-art', '!']
"""

from __future__ import annotations

import bisect
import re
import unicodedata
from collections.abc import Iterable, Mapping, Sequence, Set
from typing import NamedTuple

import numpy as np

from workbench.errors import InputError

_WORD_RE = re.compile(r"\w+(?:[-'’]\w+)*|[^\w\s]")


def split_words(text: str) -> list[str]:
    """Split raw text into words by the documented rule (see the module docstring)."""
    return _WORD_RE.findall(text)


def _describe(item: object) -> str:
    text = repr(item)
    return text if len(text) <= 60 else text[:57] + "..."


#: What the encoder takes: raw strings, or pre-split word lists (any iterable of either, e.g. a
#: list, a tuple, a generator or a numpy array of strings).
Sentences = Iterable[str] | Iterable[Iterable[str]]


def _kind(obj: object) -> str:
    """The type of ``obj`` as a message names it (``numpy array of float64``, ``dict``)."""
    if isinstance(obj, np.ndarray):
        return f"numpy array of {obj.dtype}" if obj.ndim else f"numpy scalar of {obj.dtype}"
    return type(obj).__name__


def _as_list(obj: object) -> list | None:
    """``obj`` as a list if it is a reasonable ordered collection, else None (refused).

    Strings, bytes, mappings, sets and scalars are not; a numpy array is (row by row); other
    iterables (lists, tuples, generators, pandas Series) are read once, in order.
    """
    if isinstance(obj, (str, bytes, bytearray, Mapping, Set)) or obj is None:
        return None
    if isinstance(obj, np.ndarray):  # of strings (or objects, checked one by one)
        return list(obj) if obj.ndim >= 1 and obj.dtype.kind in "UO" else None
    if isinstance(obj, Iterable):
        try:
            return list(obj)
        except TypeError:
            return None
    return None


def normalize_input(sentences: object) -> list[list[str]]:
    """Validate the encoder's input and return it as a list of word lists.

    Args:
        sentences: raw strings (split by :func:`split_words`) or word lists, as a list, a tuple,
            a generator, a numpy array of strings (1-D: sentences; 2-D: rows of words) or any
            other ordered iterable. A single string is refused (wrap it in a list), and so are
            mappings and sets (no order), bytes and numbers.

    Returns:
        One list of words per sentence, in input order.

    Raises:
        InputError: naming the type of what is refused, or the first offending item: empty
            input, a non-string item, an empty or whitespace-only string or word, or a sentence
            with no words.
    """
    if isinstance(sentences, str):
        raise InputError("Expected a list of sentences, got a single string: wrap it in a list.")
    items = _as_list(sentences)
    if items is None:
        raise InputError(
            "Expected a list of sentences (strings or word lists), got "
            f"{_kind(sentences)} {_describe(sentences)}."
        )
    if not items:
        raise InputError("The input is empty: give at least one sentence.")
    out: list[list[str]] = []
    for i, sent in enumerate(items):
        if isinstance(sent, str):
            if not sent.strip():
                raise InputError(f"Sentence {i} is empty or whitespace only.")
            words = split_words(sent)
            if not words:
                raise InputError(f"Sentence {i} ({_describe(sent)}) contains no words.")
            out.append(words)
            continue
        seq = sent if type(sent) is list else _as_list(sent)  # a list: copied below
        if seq is None:
            raise InputError(
                f"Sentence {i} is {_kind(sent)} {_describe(sent)}; "
                "expected a string or a list of word strings."
            )
        if len(seq) == 0:
            raise InputError(f"Sentence {i} is an empty word list.")
        try:  # fast path in C: every word a string with a non-blank character
            if all(map(str.strip, seq)):
                out.append(list(map(str, seq)))  # a copy; str subclasses made plain strings
                continue
        except TypeError:
            pass  # a non-string word: the loop below names it
        for j, word in enumerate(seq):
            if not isinstance(word, str):
                raise InputError(
                    f"Word {j} of sentence {i} is {_kind(word)} {_describe(word)}, not a string."
                )
            if not word.strip():
                raise InputError(f"Word {j} of sentence {i} is empty or whitespace only.")
        out.append([str(w) for w in seq])
    return out


def visible(word: str) -> str:
    """A printable form of a word for messages (control characters escaped)."""
    return "".join(ch if unicodedata.category(ch)[0] != "C" else f"\\u{ord(ch):04x}" for ch in word)


def word_token_lists(
    input_ids: Sequence[int], word_ids: Sequence[int | None], n_words: int
) -> list[list[int]]:
    """Group a sentence's subword ids by word, from a fast tokenizer's ``word_ids()``.

    Args:
        input_ids: subword ids of the sentence, without special tokens.
        word_ids: the word index of each subword (``None`` for specials).
        n_words: number of words; a word the tokenizer mapped to nothing gets an empty list.

    Returns:
        ``n_words`` lists of subword ids.
    """
    groups: list[list[int]] = [[] for _ in range(n_words)]
    for tok, wid in zip(input_ids, word_ids):
        if wid is not None:
            groups[wid].append(tok)
    return groups


def run_starts(lengths: np.ndarray | Iterable[int]) -> np.ndarray:
    """``(n + 1,)`` int64: where each of ``n`` consecutive runs of these lengths starts, then
    their total (a sentence's word offsets from its words' subword counts, the input's sentence
    starts from its sentences' word counts)."""
    if isinstance(lengths, np.ndarray):
        counts = lengths
    else:
        counts = np.fromiter(lengths, dtype=np.int64)
    starts = np.zeros(len(counts) + 1, dtype=np.int64)
    np.cumsum(counts, out=starts[1:])
    return starts


class Window(NamedTuple):
    """A run of whole words of one sentence that is encoded as one model input (a named
    tuple: an input holds one per sentence, and tuples are quick to make).

    Attributes:
        sentence: index of the sentence in the input.
        word_start, word_end: the words ``[word_start, word_end)`` in the window.
        owned: the words (sentence positions) whose vectors this window provides, in order
            (a ``range`` for a sentence in one window).
    """

    sentence: int
    word_start: int
    word_end: int
    owned: Sequence[int]


def plan_windows(
    lengths: Sequence[int], max_tokens: int, stride: int | None = None
) -> list[tuple[int, int]]:
    """Cut a sentence into overlapping windows of whole words.

    Args:
        lengths: subword count of each word (each >= 1).
        max_tokens: most subwords a window may hold (the model's maximum minus special tokens).
        stride: subwords between the starts of consecutive windows (default ``max_tokens // 2``).

    Returns:
        ``[(word_start, word_end), ...]`` covering every word; one window when it all fits.
        A single word longer than ``max_tokens`` gets a window of its own (and is cut by the
        caller, who reports it).
    """
    if max_tokens < 1:
        raise ValueError("max_tokens must be positive")
    stride = max(1, stride if stride is not None else max_tokens // 2)
    cum = np.concatenate([[0], np.cumsum(lengths)]).tolist()
    n = len(lengths)
    windows: list[tuple[int, int]] = []
    start = 0
    while True:
        end = bisect.bisect_right(cum, cum[start] + max_tokens) - 1
        end = max(end, start + 1)
        windows.append((start, end))
        if end >= n:
            return windows
        nxt = bisect.bisect_left(cum, cum[start] + stride)
        start = min(max(nxt, start + 1), end)


def assign_owners(
    windows: Sequence[tuple[int, int]], lengths: Sequence[int]
) -> list[tuple[int, ...]]:
    """For each window, the words it provides: each goes to the window where it has most context.

    Context of a word in a window = the smaller of the subword counts before and after it
    inside that window. Ties go to the earlier window.

    Returns:
        One tuple of word positions per window; together they cover each word exactly once.
    """
    cum = np.concatenate([[0], np.cumsum(lengths)])
    n = len(lengths)
    best = np.full(n, -1, dtype=np.int64)
    best_ctx = np.full(n, -1, dtype=np.int64)
    for w, (s, e) in enumerate(windows):
        pos = np.arange(s, e)
        ctx = np.minimum(cum[pos] - cum[s], cum[e] - cum[pos + 1])
        better = ctx > best_ctx[pos]
        best[pos[better]] = w
        best_ctx[pos[better]] = ctx[better]
    owned: list[list[int]] = [[] for _ in windows]
    for word, w in enumerate(best.tolist()):
        owned[w].append(word)
    return [tuple(o) for o in owned]
