"""A model's fast tokenizer without ``transformers``: the Rust ``tokenizers.Tokenizer`` read from
the ``tokenizer.json`` an export holds, with the few facts the encoder asks of a tokenizer.

An export (:mod:`workbench.encoding.exported.store`) saves the tokenizer exactly as
``transformers`` set it up for the model (``AutoTokenizer`` with ``add_prefix_space`` where the
model needs it, its normaliser, pre-tokeniser and post-processor), so the subwords, their word
ids and the special tokens here are the ones the torch backend gets: the word alignment gives
the same words and rows.

:class:`WordTokenizer` answers the calls :mod:`workbench.encoding.prepare` and the bi-encoder's
gloss side make: ``backend_tokenizer`` (the Rust tokenizer itself), ``unk_token_id``,
``pad_token_id``, ``model_max_length``, and ``tokenizer(words, is_split_into_words=True)`` /
``tokenizer(texts, truncation=True, max_length=n)`` returning ``input_ids`` and ``word_ids(i)``.

Example::

    tok = WordTokenizer.from_file(path / "tokenizer.json", unk=100, pad=0, max_length=512)
    enc = tok([["The", "embedding", "works"]], is_split_into_words=True)
    enc["input_ids"][0]   # [101, 1996, 7861, 8270, 4667, 2573, 102]
    enc.word_ids(0)       # [None, 0, 1, 1, 1, 2, None]
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from tokenizers import Tokenizer

from workbench.encoding.prepare import untruncated
from workbench.errors import ModelLoadError


class Encoded(dict):
    """What a call of :class:`WordTokenizer` returns: ``input_ids`` (and ``attention_mask``)
    per sequence, and :meth:`word_ids` of each."""

    def __init__(self, encodings: list[Any]) -> None:
        super().__init__(
            input_ids=[e.ids for e in encodings],
            attention_mask=[e.attention_mask for e in encodings],
        )
        self._encodings = encodings

    def word_ids(self, i: int = 0) -> list[int | None]:
        """The word each subword of sequence ``i`` comes from (None: a special token)."""
        return list(self._encodings[i].word_ids)


class WordTokenizer:
    """A Rust tokenizer with the facts the encoder reads off a ``transformers`` tokenizer.

    Args:
        backend: the ``tokenizers.Tokenizer``.
        unk, pad: the unknown and padding token ids (None: the tokenizer has none).
        max_length: the tokenizer's ``model_max_length``.

    Attributes:
        backend_tokenizer, unk_token_id, pad_token_id, model_max_length, is_fast.
    """

    is_fast = True

    def __init__(self, backend: Tokenizer, unk: int | None, pad: int | None, max_length: int):
        self.backend_tokenizer = backend
        self.unk_token_id = unk
        self.pad_token_id = pad
        self.model_max_length = int(max_length)

    @classmethod
    def from_file(
        cls, path: str | Path, unk: int | None, pad: int | None, max_length: int
    ) -> WordTokenizer:
        """Read ``tokenizer.json`` at ``path``.

        Raises:
            ModelLoadError: the file cannot be read as a tokenizer.
        """
        try:
            backend = Tokenizer.from_file(str(path))
        except Exception as exc:  # noqa: BLE001 - the tokenizers library raises plain Exception
            raise ModelLoadError(f"{path} cannot be read as a tokenizer ({exc}).") from exc
        return cls(backend, unk, pad, max_length)

    def __len__(self) -> int:
        return int(self.backend_tokenizer.get_vocab_size(with_added_tokens=True))

    def __call__(
        self,
        texts: Sequence[str] | Sequence[Sequence[str]],
        is_split_into_words: bool = False,
        add_special_tokens: bool = True,
        truncation: bool = False,
        max_length: int | None = None,
    ) -> Encoded:
        """Tokenize a batch: texts, or with ``is_split_into_words`` word lists; ``truncation``
        cuts each to ``max_length`` subwords, special tokens included (as ``transformers``
        does)."""
        backend = self.backend_tokenizer
        items = [list(t) for t in texts] if is_split_into_words else list(texts)
        with untruncated(backend):
            if truncation:
                backend.enable_truncation(int(max_length or self.model_max_length))
            try:
                encodings = backend.encode_batch(
                    items,
                    is_pretokenized=is_split_into_words,
                    add_special_tokens=add_special_tokens,
                )
            finally:
                if truncation:
                    backend.no_truncation()
        return Encoded(encodings)
