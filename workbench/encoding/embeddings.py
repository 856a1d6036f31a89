"""The value the encoder returns: word vectors for every kept layer, with their alignment.

:class:`LayerwiseEmbeddings` holds ``vectors`` ``(n_words, n_kept_layers, dim)`` and, row for
row, which sentence and position each word comes from and which subwords it covered. It saves
to one ``.npz`` (plus tab-separated tables for people, :mod:`workbench.encoding.wordtable`),
every file whole or not at all, and loads back, refusing a file whose parts disagree.
"""

from __future__ import annotations

import json
import os
import zipfile
import zlib
from collections.abc import Mapping, Sequence
from contextlib import ExitStack
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from workbench.encoding.alignment import run_starts
from workbench.encoding.pooling import LayerSpec, combine_layers
from workbench.encoding.wordtable import ROW_HEADER, SENTENCE_HEADER, SENTENCES_SUFFIX, table_text
from workbench.errors import DataError, InputError, MismatchError, OutputError
from workbench.fileio import check_writable, remove_stale_temporaries, sha256_bytes
from workbench.outputs import output_file, refuse_foreign


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
        compute_dtype: the dtype the model computed in (``float32``, ``bfloat16``, ...; ""
            when unknown, as in files written before it was recorded).
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
    compute_dtype: str = ""

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
            "compute_dtype": self.compute_dtype,
            "notes": self.notes,
            "shape": list(self.vectors.shape),
            "dtype": str(self.vectors.dtype),
        }

    def save(
        self,
        path: str | os.PathLike[str],
        table: bool = True,
        sentence_ids: Sequence[str] | None = None,
        overwrite: bool = False,
    ) -> Path:
        """Write the vectors to ``path`` (``.npz`` added if missing) and, beside it, the
        :mod:`~workbench.encoding.wordtable` tables: ``<stem>.tsv`` (``table``) and
        ``<stem>.sentences.tsv`` (when ``sentence_ids`` are given, one per sentence).

        Every file is written to a temporary name of this writer and renamed into place, the
        tables first and the ``.npz`` last; the ``.npz`` records each table's SHA-256, so a
        table left by an interrupted or another writer is refused by
        :func:`~workbench.encoding.wordtable.read_table`. Temporaries that killed writers left
        for these names are removed. A file at any of these names that the workbench did not
        write is replaced only with ``overwrite`` (:mod:`workbench.outputs`).

        Returns:
            The ``.npz`` path.

        Raises:
            OutputError: a place that cannot be written, a name that holds a file the
                workbench did not write (without ``overwrite``), or a ``path`` that is not a
                usable file name (see :func:`npz_path`).
            InputError: ``sentence_ids`` of another length than ``n_sentences``.
        """
        path = npz_path(path)
        check_writable(path)
        tables: dict[Path, str] = {}
        if table:
            rows = zip(
                range(len(self.words)),
                self.sentence_index.tolist(),
                self.word_index.tolist(),
                self.words,
                self.spans[:, 0].tolist(),
                self.spans[:, 1].tolist(),
            )
            tables[table_path(path)] = table_text(ROW_HEADER, rows)
        if sentence_ids is not None:
            if len(sentence_ids) != self.n_sentences:
                raise InputError(
                    f"{len(sentence_ids)} sentence ids for {self.n_sentences} sentences"
                )
            tables[sentences_path(path)] = table_text(SENTENCE_HEADER, enumerate(sentence_ids))
        for target in (path, *tables):
            refuse_foreign(target, overwrite)  # before the arrays are packed
        remove_stale_temporaries(path.parent, [path.name, *(t.name for t in tables)])
        meta = {**self.meta(), "tables": {t.name: sha256_bytes(v) for t, v in tables.items()}}
        with ExitStack() as stack:  # renamed in reverse order: the tables, then the .npz
            npz_tmp = stack.enter_context(output_file(path, overwrite=overwrite, suffix=".npz"))
            for target, text in tables.items():
                tmp = stack.enter_context(output_file(target, overwrite=overwrite))
                tmp.write_text(text, encoding="utf-8")
            parts: dict[str, Any] = {
                "vectors": np.asarray(self.vectors),
                "sentence_index": self.sentence_index,
                "word_index": self.word_index,
                "spans": self.spans,
                "meta": np.array(json.dumps(meta)),
                **pack_words(self.words),
            }
            np.savez(npz_tmp, **parts)
        return path

    @classmethod
    def load(
        cls, path: str | os.PathLike[str], expect_fingerprint: str | None = None
    ) -> LayerwiseEmbeddings:
        """Read a file written by :meth:`save`; refuse one made by another model if asked.

        Raises:
            DataError: a missing, truncated or damaged file, or one whose parts disagree.
            MismatchError: ``expect_fingerprint`` given and the file was made by another model.
        """
        path = Path(path)
        try:
            with np.load(path, allow_pickle=False) as data:
                meta = json.loads(str(data["meta"]))
                arrays = {k: data[k] for k in data.files if k != "meta"}
        except (OSError, KeyError, ValueError, EOFError, zipfile.BadZipFile, zlib.error) as exc:
            raise DataError(f"{path} is not a workbench embeddings file ({exc}).") from exc
        if "vectors" not in arrays:
            raise DataError(f"{path} is not a workbench embeddings file (no vectors).")
        emb = cls.from_parts(arrays["vectors"], arrays, meta, source=str(path))
        if expect_fingerprint and emb.fingerprint != expect_fingerprint:
            raise MismatchError(
                f"{path} was made by model '{emb.model_name}' (fingerprint "
                f"{emb.fingerprint}), not by the model in use ({expect_fingerprint})."
            )
        return emb

    @classmethod
    def from_parts(
        cls,
        vectors: np.ndarray,
        arrays: Mapping[str, np.ndarray],
        meta: Any,
        source: str = "embeddings",
    ) -> LayerwiseEmbeddings:
        """Rebuild from ``vectors``, the alignment arrays (the words as :func:`pack_words`
        stores them, or a ``words`` string array; ``sentence_index``, ``word_index``,
        ``spans``) and :meth:`meta` (as saved by this module or the cache).

        Raises:
            DataError: naming ``source``, when a part is missing, of the wrong type, or does
                not fit the others (row counts, layer count, shape).
        """

        def bad(what: str) -> DataError:
            return DataError(f"{source} is damaged or not workbench embeddings: {what}")

        if not isinstance(meta, dict):
            raise bad(f"its metadata is a {type(meta).__name__}, not an object")
        for name, kind in _META_FIELDS.items():
            if not isinstance(meta.get(name), kind) or isinstance(meta.get(name), bool):
                raise bad(f"metadata field {name!r} is missing or not {kind.__name__}")
        if not all(isinstance(v, int) and not isinstance(v, bool) for v in meta["layers"]):
            raise bad("metadata field 'layers' holds non-integers")
        missing = [k for k in ("sentence_index", "word_index", "spans") if k not in arrays]
        if missing:
            raise bad(f"no {', '.join(missing)} array")
        words = unpack_words(arrays, source)
        n = len(words)
        if vectors.ndim != 3 or vectors.shape[0] != n or vectors.shape[1] != len(meta["layers"]):
            raise bad(
                f"vectors of shape {vectors.shape} for {n} words and {len(meta['layers'])} layers"
            )
        shape = meta.get("shape")
        if isinstance(shape, list) and [int(v) for v in shape] != list(vectors.shape):
            raise bad(f"vectors of shape {vectors.shape}, the metadata says {tuple(shape)}")
        sentence_index, word_index, spans = (
            arrays["sentence_index"], arrays["word_index"], arrays["spans"],
        )  # fmt: skip
        if sentence_index.shape != (n,) or word_index.shape != (n,) or spans.shape != (n, 2):
            raise bad(f"alignment arrays do not have {n} rows")
        return cls(
            vectors=vectors,
            layers=tuple(meta["layers"]),
            words=words,
            sentence_index=sentence_index,
            word_index=word_index,
            spans=spans,
            n_sentences=meta["n_sentences"],
            n_hidden=meta["n_hidden"],
            model_name=meta["model_name"],
            fingerprint=meta["fingerprint"],
            pooling=meta["pooling"],
            notes=[str(v) for v in meta.get("notes") or []],
            compute_dtype=str(meta.get("compute_dtype") or ""),
        )


# Fields of meta() that from_parts needs, with their JSON types.
_META_FIELDS: dict[str, type] = {
    "layers": list,
    "n_sentences": int,
    "n_hidden": int,
    "model_name": str,
    "fingerprint": str,
    "pooling": str,
}


def pack_words(words: Sequence[str]) -> dict[str, np.ndarray]:
    """Words as two arrays: ``words_utf8`` (uint8, the UTF-8 of all words joined) and
    ``words_offsets`` (int64, ``(n + 1,)``, where each word starts in code points).

    Unlike a fixed-width string array, this keeps every character (a trailing NUL too) and
    takes the words' size, not ``n`` times the longest word's.
    """
    offsets = run_starts(map(len, words))
    blob = "".join(words).encode("utf-8", "surrogatepass")
    return {"words_utf8": np.frombuffer(blob, dtype=np.uint8), "words_offsets": offsets}


def unpack_words(arrays: Mapping[str, np.ndarray], source: str = "embeddings") -> list[str]:
    """The words stored by :func:`pack_words` (or as a ``words`` string array).

    Raises:
        DataError: naming ``source``, when the arrays are missing or inconsistent.
    """
    if "words_utf8" not in arrays or "words_offsets" not in arrays:
        if "words" in arrays and arrays["words"].dtype.kind == "U":
            return [str(w) for w in arrays["words"].tolist()]
        raise DataError(f"{source} is damaged or not workbench embeddings: no words")
    blob, offsets = arrays["words_utf8"], arrays["words_offsets"]
    try:
        text = np.asarray(blob, dtype=np.uint8).tobytes().decode("utf-8", "surrogatepass")
    except (UnicodeDecodeError, ValueError, TypeError) as exc:
        raise DataError(f"{source}: its words are not UTF-8 ({exc})") from exc
    bounds = np.asarray(offsets).tolist()
    if (
        np.asarray(offsets).ndim != 1
        or not bounds
        or bounds[0] != 0
        or bounds[-1] != len(text)
        or any(b > a for a, b in zip(bounds[1:], bounds))
    ):
        raise DataError(f"{source} is damaged: its word offsets do not fit its words")
    return list(map(text.__getitem__, map(slice, bounds[:-1], bounds[1:])))


def npz_path(path: str | os.PathLike[str]) -> Path:
    """The ``.npz`` that :meth:`LayerwiseEmbeddings.save` writes for ``path`` (``.npz`` added if
    missing), once ``path`` is a usable file name.

    Raises:
        OutputError: ``path`` is empty, ends with a path separator, names a directory or
            something else that is not a regular file (a device), or its stem ends with
            ``.sentences`` (``foo.sentences.tsv`` is the sentence table of ``foo.npz``).
    """
    raw = os.fspath(path)
    if not raw.strip():
        raise OutputError("the output name is empty: give a file name such as vectors.npz")
    if raw.endswith(tuple(sep for sep in (os.sep, os.altsep) if sep)):
        raise OutputError(
            f"cannot write {raw}: it ends with a path separator, so it names a directory; "
            f"give a file name such as {os.path.join(raw, 'vectors.npz')}"
        )
    given = Path(raw)
    if given.name in ("", ".", "..") or given.is_dir():
        raise OutputError(
            f"cannot write {raw}: it is a directory; give a file name such as "
            f"{os.path.join(raw, 'vectors.npz')}"
        )
    if given.exists() and not given.is_file():
        raise OutputError(f"cannot write {raw}: it exists and is not a regular file")
    npz = given if given.suffix == ".npz" else given.with_suffix(given.suffix + ".npz")
    stem = npz.name.removesuffix(".npz")
    if stem.endswith(SENTENCES_SUFFIX):
        raise OutputError(
            f"cannot write {npz}: a name ending in '{SENTENCES_SUFFIX}' is kept for the "
            f"sentence table ({stem}.tsv is the sentence table of "
            f"{stem.removesuffix(SENTENCES_SUFFIX)}.npz); choose another output name"
        )
    if npz != given and npz.exists() and not npz.is_file():
        raise OutputError(f"cannot write {npz}: it exists and is not a regular file")
    return npz


def table_path(npz: str | os.PathLike[str]) -> Path:
    """The per-vector table beside an embeddings file (``v.npz`` -> ``v.tsv``)."""
    return Path(npz).with_suffix(".tsv")


def sentences_path(npz: str | os.PathLike[str]) -> Path:
    """The per-sentence table beside an embeddings file (``v.npz`` -> ``v.sentences.tsv``)."""
    return Path(npz).with_suffix(f"{SENTENCES_SUFFIX}.tsv")
