"""The glosses a WSD bi-encoder trains on: one text per WordNet synset, tokenized once, batched
by length.

Every sense key of a synset shares its synset's gloss, so glosses are kept, encoded and
indexed per synset. What the text holds is ``gloss_text``
(:class:`~workbench.finetune.training.config.TrainConfig`;
:func:`workbench.lexicon.glosses.gloss_text`).

A :class:`GlossTable` tokenizes each synset's text once (special tokens included, cut to
``gloss_max_length`` subwords) and gives each synset a row number; :meth:`GlossTable.batch` pads
a set of rows into one ``(n_glosses, width)`` input sorted longest first, which the model
encodes in chunks of similar length
(:meth:`~workbench.finetune.tasks.wsd.model.BiEncoderModel.encode_glosses`), so padding stays
small.

Example::

    table = GlossTable(tokenizer, load_wordnet(), "definition", max_length=48)
    rows = table.rows_of(["bank.n.01", "bank.n.02"])
    ids, mask = table.batch(table.by_length(rows), tokenizer.pad_token_id)  # (2, width) each
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING

import numpy as np

from workbench.errors import InputError
from workbench.finetune.tasks.base import special_template
from workbench.lexicon.glosses import GlossText, gloss_text
from workbench.lexicon.wordnet import WordNet

if TYPE_CHECKING:
    from transformers import PreTrainedTokenizerBase

TOKENIZE_CHUNK = 8192  # synset texts tokenized per call


class GlossTable:
    """Tokenized glosses of synsets, one row per synset, added on first use.

    Args:
        tokenizer: the gloss encoder's (fast) tokenizer.
        wordnet: the sense inventory.
        how: what the text holds (see the module docstring).
        max_length: subword tokens per gloss, special tokens included; longer ones are cut.

    Attributes:
        synsets: synset name of each row.
        ids: token ids of each row (special tokens included).
        n_truncated: glosses cut to ``max_length``.
    """

    def __init__(
        self,
        tokenizer: PreTrainedTokenizerBase,
        wordnet: WordNet,
        how: GlossText,
        max_length: int,
    ) -> None:
        self.tokenizer = tokenizer
        self.wordnet = wordnet
        self.how = how
        self.max_length = int(max_length)
        self.synsets: list[str] = []
        self.ids: list[list[int]] = []
        self.n_truncated = 0
        self._row: dict[str, int] = {}
        self._head, self._tail = special_template(tokenizer)
        self._budget = self.max_length - len(self._head) - len(self._tail)
        if self._budget < 1:
            raise InputError(f"gloss_max_length={max_length} leaves no room for a gloss's words.")

    def __len__(self) -> int:
        return len(self.synsets)

    def add(self, synsets: Iterable[str]) -> None:
        """Tokenize the synsets not in the table yet (in batches) and give each a row."""
        new = [s for s in dict.fromkeys(synsets) if s not in self._row]
        for start in range(0, len(new), TOKENIZE_CHUNK):
            chunk = new[start : start + TOKENIZE_CHUNK]
            texts = [gloss_text(self.wordnet, s, self.how) for s in chunk]
            words = self.tokenizer(texts, add_special_tokens=False)["input_ids"]
            for name, ids in zip(chunk, words, strict=True):
                if len(ids) > self._budget:
                    ids = ids[: self._budget]
                    self.n_truncated += 1
                self._row[name] = len(self.synsets)
                self.synsets.append(name)
                self.ids.append([*self._head, *ids, *self._tail])

    def rows_of(self, synsets: Sequence[str]) -> list[int]:
        """Row numbers of ``synsets`` (added first where missing)."""
        self.add(synsets)
        return [self._row[s] for s in synsets]

    def batch(self, rows: Sequence[int], pad_id: int) -> tuple[np.ndarray, np.ndarray]:
        """Padded ``(ids, mask)``, ``(len(rows), width)`` int64 each, in the order of ``rows``.

        Callers pass rows sorted longest first (:meth:`by_length`), so each chunk the model
        encodes is about one length.
        """
        return pad_glosses([self.ids[r] for r in rows], pad_id)

    def by_length(self, rows: Iterable[int]) -> list[int]:
        """Distinct ``rows``, longest gloss first (ties: row order)."""
        return sorted(set(rows), key=lambda r: (-len(self.ids[r]), r))


def pad_glosses(glosses: Sequence[Sequence[int]], pad_id: int) -> tuple[np.ndarray, np.ndarray]:
    """Token ids of glosses as padded ``(ids, mask)``, ``(len(glosses), width)`` int64 each."""
    width = max(len(g) for g in glosses)
    ids = np.full((len(glosses), width), pad_id, dtype=np.int64)
    mask = np.zeros((len(glosses), width), dtype=np.int64)
    for i, gloss in enumerate(glosses):
        ids[i, : len(gloss)] = gloss
        mask[i, : len(gloss)] = 1
    return ids, mask
