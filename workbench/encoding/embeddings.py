"""The value the encoder returns: word vectors for every kept layer, with their alignment.

:class:`LayerwiseEmbeddings` holds ``vectors`` ``(n_words, n_kept_layers, dim)`` and, row for
row, which sentence and position each word comes from and which subwords it covered. It saves
to one ``.npz`` (plus a ``.tsv`` table for people) and loads back.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from workbench.encoding.pooling import LayerSpec, combine_layers
from workbench.errors import DataError, MismatchError


@dataclass
class LayerwiseEmbeddings:
    """Word-level hidden states of a corpus.

    Attributes:
        vectors: ``(n_words, n_kept_layers, dim)`` float32 (float16 if stored so); may be a
            read-only memory map for corpora larger than RAM.
        layers: hidden-state index of each slot of axis 1 (0 = embedding output).
        words: the words, row for row.
        sentence_index: ``(n_words,)`` int64, which input sentence each row comes from.
        word_index: ``(n_words,)`` int64, the word's position in its sentence.
        spans: ``(n_words, 2)`` int64, the word's subword span ``[start, end)`` in its
            sentence's subword sequence (no special tokens).
        n_sentences: number of input sentences.
        n_hidden: the model's hidden-state count (n_layers + 1).
        model_name, fingerprint, pooling: what made the vectors.
        notes: things the user should know (words cut, words mapped to [UNK]).
    """

    vectors: np.ndarray
    layers: tuple[int, ...]
    words: list[str]
    sentence_index: np.ndarray
    word_index: np.ndarray
    spans: np.ndarray
    n_sentences: int
    n_hidden: int
    model_name: str
    fingerprint: str
    pooling: str
    notes: list[str] = field(default_factory=list)

    def __len__(self) -> int:
        return len(self.words)

    @property
    def dim(self) -> int:
        return int(self.vectors.shape[2])

    def select(self, spec: LayerSpec | str | int) -> np.ndarray:
        """One vector per word for a layer spec: ``(n_words, dim)`` float32."""
        return combine_layers(self.vectors, self.layers, spec, self.n_hidden)

    def layer(self, index: int) -> np.ndarray:
        """The vectors of one hidden state: ``(n_words, dim)`` float32."""
        return self.select(LayerSpec((index,)))

    def meta(self) -> dict[str, Any]:
        """Everything but the arrays, as plain JSON-able values."""
        return {
            "layers": list(self.layers),
            "n_sentences": self.n_sentences,
            "n_hidden": self.n_hidden,
            "model_name": self.model_name,
            "fingerprint": self.fingerprint,
            "pooling": self.pooling,
            "notes": self.notes,
            "shape": list(self.vectors.shape),
            "dtype": str(self.vectors.dtype),
        }

    def save(self, path: str | Path, table: bool = True) -> Path:
        """Write ``path`` (.npz: ``vectors``, alignment arrays, ``meta`` JSON) and a ``.tsv``
        metadata table beside it (sentence, position, word, subword span)."""
        path = Path(path)
        if path.suffix != ".npz":
            path = path.with_suffix(path.suffix + ".npz")
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(path.name + ".tmp.npz")
        np.savez(
            tmp,
            vectors=np.asarray(self.vectors),
            words=np.array(self.words, dtype=str),
            sentence_index=self.sentence_index,
            word_index=self.word_index,
            spans=self.spans,
            meta=np.array(json.dumps(self.meta())),
        )
        tmp.replace(path)
        if table:
            with path.with_suffix(".tsv").open("w", encoding="utf-8") as fh:
                fh.write("row\tsentence\tposition\tword\tsubword_start\tsubword_end\n")
                for i, word in enumerate(self.words):
                    s, e = self.spans[i]
                    fh.write(
                        f"{i}\t{self.sentence_index[i]}\t{self.word_index[i]}\t{word}\t{s}\t{e}\n"
                    )
        return path

    @classmethod
    def load(cls, path: str | Path, expect_fingerprint: str | None = None) -> LayerwiseEmbeddings:
        """Read a file written by :meth:`save`; refuse one made by another model if asked."""
        path = Path(path)
        try:
            with np.load(path, allow_pickle=False) as data:
                meta = json.loads(str(data["meta"]))
                arrays = {
                    k: data[k]
                    for k in ("vectors", "words", "sentence_index", "word_index", "spans")
                }
        except (OSError, KeyError, ValueError) as exc:
            raise DataError(f"{path} is not a workbench embeddings file ({exc}).") from exc
        if expect_fingerprint and meta["fingerprint"] != expect_fingerprint:
            raise MismatchError(
                f"{path} was made by model '{meta['model_name']}' (fingerprint "
                f"{meta['fingerprint']}), not by the model in use ({expect_fingerprint})."
            )
        return cls.from_parts(arrays["vectors"], arrays, meta)

    @classmethod
    def from_parts(
        cls, vectors: np.ndarray, arrays: Mapping[str, np.ndarray], meta: dict[str, Any]
    ) -> LayerwiseEmbeddings:
        """Rebuild from ``vectors``, the alignment arrays (``words``, ``sentence_index``,
        ``word_index``, ``spans``) and :meth:`meta` (as saved by this module or the cache)."""
        return cls(
            vectors=vectors,
            layers=tuple(meta["layers"]),
            words=arrays["words"].tolist(),
            sentence_index=arrays["sentence_index"],
            word_index=arrays["word_index"],
            spans=arrays["spans"],
            n_sentences=meta["n_sentences"],
            n_hidden=meta["n_hidden"],
            model_name=meta["model_name"],
            fingerprint=meta["fingerprint"],
            pooling=meta["pooling"],
            notes=list(meta.get("notes", [])),
        )
