"""Reading a shard directory back: :class:`ShardedEmbeddings`.

Each shard comes back as a :class:`~workbench.encoding.embeddings.LayerwiseEmbeddings` whose
``vectors`` are a read-only memory map of the shard's ``.npy`` (``(n_rows, n_layers, dim)``),
so everything in the library that takes embeddings takes a shard. The row tables of all shards
read as one Arrow table, filtered without touching a vector; :meth:`ShardedEmbeddings.gather`
fetches the vectors of any selection of rows.

Example::

    shards = ShardedEmbeddings("shards/")
    len(shards), shards.layers, shards.dim           # rows, hidden states kept, width
    for emb in shards:                               # one LayerwiseEmbeddings per shard
        emb.select("last4-sum")                      # (n_rows_of_shard, dim) float32
    bank = shards.table(filter=pc.field("word") == "bank")   # pyarrow.compute as pc
    vectors = shards.gather(bank)                    # (len(bank), n_layers, dim)
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.dataset as pads

from workbench.distributed.shards import (
    Manifest,
    ShardRecord,
    Verify,
    read_manifest,
    shard_paths,
    verify_shard,
)
from workbench.encoding.embeddings import LayerwiseEmbeddings
from workbench.errors import DataError


class ShardedEmbeddings:
    """The shards of a job, read back (see the module docstring).

    Args:
        directory: the job's output directory.
        require_complete: refuse a directory whose job has not finished (a rerun of the same
            command completes it); False reads the shards complete so far.

    Attributes:
        directory, manifest, records: the directory, its manifest, its shards' records in
            input order.
        layers, n_hidden, dim, dtype, model_name, fingerprint, pooling: what made the vectors.

    Raises:
        DataError: no manifest, an unfinished job (when required), or a shard file missing.
    """

    def __init__(self, directory: str | os.PathLike[str], require_complete: bool = True) -> None:
        self.directory = Path(directory)
        manifest = read_manifest(self.directory)
        if manifest is None:
            raise DataError(
                f"{self.directory} holds no shard manifest (workbench embed --engine ray)"
            )
        if require_complete and not manifest.complete:
            raise DataError(
                f"the job of {self.directory} has not finished ({len(manifest.shards)} shards "
                "complete): rerun the same workbench embed command to finish it"
            )
        self.manifest: Manifest = manifest
        self.records: tuple[ShardRecord, ...] = manifest.shards
        settings = manifest.settings
        self.layers = tuple(int(v) for v in settings["layers"])
        self.n_hidden = int(settings["n_hidden"])
        self.dim = int(settings["dim"])
        self.dtype = str(settings["dtype"])
        self.model_name = str(settings["model"])
        self.fingerprint = str(settings["fingerprint"])
        self.pooling = str(settings["pooling"])
        self._index = {r.name: i for i, r in enumerate(self.records)}
        for record in self.records:
            paths = shard_paths(self.directory, record.name)
            if not paths.vectors.is_file() or not paths.table.is_file():
                raise DataError(f"{self.directory}: shard {record.name} is missing its files")

    def __len__(self) -> int:
        return self.manifest.rows

    @property
    def n_sentences(self) -> int:
        return self.manifest.sentences

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(r.name for r in self.records)

    @property
    def compute_dtype(self) -> str:
        """The dtype every shard's model computed in; "" when the shards differ (workers of
        a mixed cluster resolve ``compute_dtype="auto"`` each on its own device)."""
        dtypes = {r.compute_dtype for r in self.records}
        return dtypes.pop() if len(dtypes) == 1 else ""

    def __iter__(self) -> Iterator[LayerwiseEmbeddings]:
        for record in self.records:
            yield self.shard(record.name)

    def vectors_of(self, name: str) -> np.ndarray:
        """The read-only memory map of one shard's vectors ``(rows, n_layers, dim)``."""
        record = self.records[self._position(name)]
        if record.rows == 0:  # an empty .npy cannot be memory-mapped
            return np.zeros(record.shape, dtype=self.dtype)
        return np.load(shard_paths(self.directory, name).vectors, mmap_mode="r")

    def shard(self, name: str | int) -> LayerwiseEmbeddings:
        """One shard as embeddings over a memory map (``name`` or position in input order);
        ``sentence_index`` counts the shard's sentences from 0."""
        record = self.records[name if isinstance(name, int) else self._position(name)]
        table = pads.dataset(shard_paths(self.directory, record.name).table).to_table(
            columns=["sentence", "position", "word", "subword_start", "subword_end"]
        )
        return LayerwiseEmbeddings(
            vectors=self.vectors_of(record.name),
            layers=self.layers,
            words=table.column("word").to_pylist(),
            sentence_index=table.column("sentence").to_numpy().astype(np.int64),
            word_index=table.column("position").to_numpy().astype(np.int64),
            spans=np.stack(
                [table.column("subword_start").to_numpy(), table.column("subword_end").to_numpy()],
                axis=1,
            )
            .astype(np.int64)
            .reshape(-1, 2),
            n_sentences=record.sentences,
            n_hidden=self.n_hidden,
            model_name=self.model_name,
            fingerprint=self.fingerprint,
            pooling=self.pooling,
            notes=list(record.notes),
            compute_dtype=record.compute_dtype,
        )

    def dataset(self) -> pads.Dataset:
        """All row tables as one ``pyarrow.dataset`` (for scans, filters, duckdb or polars)."""
        files = [str(shard_paths(self.directory, r.name).table) for r in self.records]
        return pads.dataset(files, format="parquet")

    def table(self, columns: Sequence[str] | None = None, filter: Any = None) -> pa.Table:
        """The rows of all shards (in shard order), optionally only ``columns`` and the rows
        matching ``filter`` (a ``pyarrow.compute`` expression such as
        ``pc.field("lemma") == "bank"``). ``shard`` and ``row`` are always included."""
        wanted = None if columns is None else list(dict.fromkeys(["shard", "row", *columns]))
        table = self.dataset().to_table(columns=wanted, filter=filter)
        order = {name: i for i, name in enumerate(self.names)}
        rank = np.array([order[s] for s in table.column("shard").to_pylist()], dtype=np.int64)
        keys = np.lexsort((table.column("row").to_numpy(), rank)) if len(rank) else rank
        return table.take(pa.array(keys, pa.int64()))

    def gather(self, rows: pa.Table) -> np.ndarray:
        """The vectors of the given rows (a :meth:`table` selection): ``(len(rows), n_layers,
        dim)`` in the stored dtype, in the order of ``rows``."""
        shards = np.array(rows.column("shard").to_pylist(), dtype=object)
        index = rows.column("row").to_numpy().astype(np.int64)
        out = np.empty((len(index), len(self.layers), self.dim), dtype=self.dtype)
        for name in dict.fromkeys(shards.tolist()):
            sel = np.flatnonzero(shards == name)
            out[sel] = self.vectors_of(name)[index[sel]]
        return out

    def to_embeddings(self) -> LayerwiseEmbeddings:
        """Every shard concatenated into one in-memory :class:`LayerwiseEmbeddings` (rows and
        sentences numbered over the whole job, in input order): for jobs that fit in RAM."""
        parts = list(self)
        offsets = np.cumsum([0] + [r.sentences for r in self.records])
        vectors = [np.asarray(p.vectors) for p in parts]
        return LayerwiseEmbeddings(
            vectors=np.concatenate(vectors) if vectors else np.zeros((0, len(self.layers),
                                                                      self.dim), self.dtype),
            layers=self.layers,
            words=[w for p in parts for w in p.words],
            sentence_index=np.concatenate(
                [p.sentence_index + offsets[i] for i, p in enumerate(parts)] or [np.zeros(0)]
            ).astype(np.int64),
            word_index=np.concatenate([p.word_index for p in parts] or [np.zeros(0)]).astype(
                np.int64
            ),
            spans=np.concatenate([p.spans for p in parts] or [np.zeros((0, 2))]).astype(np.int64),
            n_sentences=int(offsets[-1]),
            n_hidden=self.n_hidden,
            model_name=self.model_name,
            fingerprint=self.fingerprint,
            pooling=self.pooling,
            notes=[n for p in parts for n in p.notes],
            compute_dtype=self.compute_dtype,
        )  # fmt: skip

    def verify(self, level: Verify = "sha256") -> list[str]:
        """What is wrong with any shard on disk (empty when all match their records)."""
        return [
            f"shard {r.name}: {problem}"
            for r in self.records
            if (problem := verify_shard(self.directory, r, level))
        ]

    def _position(self, name: str) -> int:
        if name not in self._index:
            raise DataError(f"{self.directory} has no complete shard {name!r}")
        return self._index[name]
