"""Tokenize word lists for the encoder and plan the windows the model runs.

Each sentence becomes one array of subword ids (no special tokens) and word offsets into it;
a word the tokenizer maps to nothing gets the unknown token (noted), a word with more subwords
than one input holds is cut (noted). Sentences that fit make one window; longer ones are cut
into overlapping windows of whole words, each word owned by the window where it has the most
context (:func:`workbench.encoding.alignment.plan_windows`,
:func:`workbench.encoding.alignment.assign_owners`).

Example::

    prep = prepare(encoder.tokenizer, [["The", "embedding", "works"]], window_tokens=510)
    prep.offsets[0].tolist()            # [0, 1, 4, 5]: "embedding" is three subwords
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from itertools import chain
from typing import TYPE_CHECKING

import numpy as np

from workbench.encoding.alignment import (
    Window,
    assign_owners,
    plan_windows,
    visible,
    word_token_lists,
)
from workbench.errors import InputError

if TYPE_CHECKING:
    from transformers import PreTrainedTokenizerBase


@dataclass(frozen=True)
class Prepared:
    """Tokenized input: subword ids and word offsets per sentence, the windows to run, notes."""

    ids: list[np.ndarray]  # per sentence, its subword ids (int64, no special tokens)
    offsets: list[np.ndarray]  # per sentence, (n_words + 1,) where each word's subwords start
    windows: list[Window]
    notes: list[str]

    def window_length(self, w: Window) -> int:
        """Subwords of a window (special tokens excluded)."""
        off = self.offsets[w.sentence]
        return int(off[w.word_end] - off[w.word_start])


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
            encs = backend.encode_batch(sentences, is_pretokenized=True, add_special_tokens=False)
            return [(e.ids, e.word_ids) for e in encs]
        except Exception:  # noqa: BLE001 - any oddity: the public API below is the reference
            pass
    enc = tokenizer(sentences, is_split_into_words=True, add_special_tokens=False)
    return [(enc["input_ids"][i], enc.word_ids(i)) for i in range(len(sentences))]


def prepare(
    tokenizer: PreTrainedTokenizerBase,
    sentences: list[list[str]],
    window_tokens: int,
    stride: int | None = None,
) -> Prepared:
    """Tokenize validated word lists and plan the windows the model runs.

    Args:
        tokenizer: a HuggingFace fast tokenizer.
        sentences: word lists (from :func:`workbench.encoding.alignment.normalize_input`).
        window_tokens: most subwords one model input holds (special tokens excluded).
        stride: subwords between window starts for longer sentences (default: half).
    """
    subwords = tokenize_words(tokenizer, sentences)
    unk = tokenizer.unk_token_id
    ids: list[np.ndarray] = []
    offsets: list[np.ndarray] = []
    windows: list[Window] = []
    notes: list[str] = []
    unk_words: list[str] = []
    for i, words in enumerate(sentences):
        groups = word_token_lists(*subwords[i], len(words))
        for j, group in enumerate(groups):
            if not group:
                if unk is None:
                    raise InputError(
                        f"Word {j} of sentence {i} ('{visible(words[j])}') maps to no token "
                        "and this tokenizer has no unknown token."
                    )
                group.append(unk)
                unk_words.append(visible(words[j]))
            elif len(group) > window_tokens:
                del group[window_tokens:]
                notes.append(
                    f"word {j} of sentence {i} ('{visible(words[j])[:30]}') has more subwords "
                    f"than fit in one input; its first {window_tokens} were used"
                )
        lengths = [len(g) for g in groups]
        off = np.zeros(len(groups) + 1, dtype=np.int64)
        np.cumsum(lengths, out=off[1:])
        offsets.append(off)
        ids.append(np.fromiter(chain.from_iterable(groups), dtype=np.int64, count=int(off[-1])))
        if off[-1] <= window_tokens:  # the usual case: one window, no planning
            windows.append(Window(i, 0, len(words), tuple(range(len(words)))))
            continue
        spans = plan_windows(lengths, window_tokens, stride)
        owners = assign_owners(spans, lengths)
        windows.extend(Window(i, s, e, own) for (s, e), own in zip(spans, owners))
    if unk_words:
        shown = ", ".join(f"'{w}'" for w in unk_words[:10])
        more = f" and {len(unk_words) - 10} more" if len(unk_words) > 10 else ""
        notes.append(
            f"{len(unk_words)} word(s) map to no subword and were encoded as the unknown "
            f"token: {shown}{more}"
        )
    for note in notes:
        warnings.warn(note, stacklevel=5)
    return Prepared(ids, offsets, windows, notes)
