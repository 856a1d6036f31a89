"""The shard format: vectors, row table and record of each shard, and the job's manifest.

An output directory holds::

    manifest.json                  settings, inputs, every complete shard's record, complete?
    shard-00000-000000.npy         (n_rows, n_layers, dim) float32 | float16 vectors
    shard-00000-000000.parquet     the row table: one row per vector row (ROW_SCHEMA)
    shard-00000-000000.json        the shard's record (rows, checksums), written last

Why ``.npy`` + Parquet: the vectors are what readers touch most and a ``.npy`` is a header and
one C-order array, so ``np.load(mmap_mode="r")`` maps it without copying and any row is one
seek; the row table is small, columnar and typed, so pyarrow, polars or duckdb filter all
shards' rows by word, lemma or sense key without touching a vector, and the ``shard`` and
``row`` columns lead back to the vectors (docs/scaling.md compares the alternatives).

Every file is written under a temporary name and renamed into place (:mod:`workbench.fileio`),
the record last: a shard exists once its record does, and the record's SHA-256 digests tell a
complete shard from a damaged one (:func:`verify_shard`).
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Literal

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from workbench import __version__
from workbench.corpora.readers import Sentence
from workbench.encoding.embeddings import LayerwiseEmbeddings
from workbench.errors import DataError, MismatchError
from workbench.fileio import atomic_path, sha256_file

FORMAT = "workbench-shards/1"
MANIFEST = "manifest.json"
#: How much of a shard a check reads: every byte (SHA-256) or only the file sizes.
Verify = Literal["sha256", "size"]

#: The row table's columns: where each vector row comes from.
ROW_SCHEMA = pa.schema(
    [
        ("shard", pa.string()),  # the shard's name
        ("row", pa.int64()),  # the row in the shard's .npy
        ("input", pa.int32()),  # index of the input file in the manifest
        ("item", pa.int64()),  # the sentence's item in its input (line - 1, row, XML sentence)
        ("sentence", pa.int32()),  # the sentence's index in the shard
        ("sentence_id", pa.string()),  # <stem>.l<line>, <stem>.r<row>, or the XML id
        ("position", pa.int32()),  # the word's position in its sentence
        ("word", pa.string()),
        ("lemma", pa.string()),  # XML lemma; lowercased word for plain text
        ("pos", pa.string()),  # XML universal POS; X for plain text
        ("instance_id", pa.string()),  # XML instance id, "" for other words
        ("keys", pa.string()),  # gold sense keys, space-separated, "" for none
        ("subword_start", pa.int32()),  # the word's subword span in its sentence
        ("subword_end", pa.int32()),
    ]
)


@dataclass(frozen=True)
class ShardPaths:
    """The three files of a shard."""

    vectors: Path
    table: Path
    record: Path


def shard_paths(directory: str | os.PathLike[str], name: str) -> ShardPaths:
    """Where shard ``name`` lives in ``directory``."""
    stem = Path(directory) / f"shard-{name}"
    return ShardPaths(
        stem.with_name(stem.name + ".npy"),
        stem.with_name(stem.name + ".parquet"),
        stem.with_name(stem.name + ".json"),
    )


@dataclass(frozen=True)
class ShardRecord:
    """What a complete shard holds and how to check it.

    Attributes:
        name: the shard's name; input, start, stop: its items ``[start, stop)`` of that input.
        input_sha256: the input's content identity when the shard was made.
        rows: vector rows; sentences: sentences read (with or without rows).
        shape: the vectors' shape ``(rows, n_layers, dim)``.
        vectors_sha256, table_sha256: SHA-256 of the two files; vectors_bytes, table_bytes: sizes.
        device, compute_dtype: where and in what dtype the model ran.
        seconds: time to read, encode and write the shard.
        notes: the encoder's notes (words cut, words mapped to [UNK]).
    """

    name: str
    input: int
    start: int
    stop: int
    input_sha256: str
    rows: int
    sentences: int
    shape: tuple[int, int, int]
    vectors_sha256: str
    table_sha256: str
    vectors_bytes: int
    table_bytes: int
    device: str = ""
    compute_dtype: str = ""
    seconds: float = 0.0
    notes: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> ShardRecord:
        data = dict(data)
        data["shape"] = tuple(int(v) for v in data["shape"])
        data["notes"] = tuple(data.get("notes", ()))
        return cls(**data)


def row_table(
    name: str, input_index: int, sentences: Sequence[tuple[int, Sentence]], emb: LayerwiseEmbeddings
) -> pa.Table:
    """The row table of a shard whose vectors are ``emb``, whose sentences (``sentence_index``
    of ``emb`` points into them) came from the items given with them."""
    n = len(emb)
    sent = np.asarray(emb.sentence_index, dtype=np.int64)
    pos = np.asarray(emb.word_index, dtype=np.int64)
    lemmas, tags, inst_ids, keys = [], [], [], []
    for s, p in zip(sent.tolist(), pos.tolist()):
        sentence = sentences[s][1]
        lemmas.append(sentence.lemmas[p])
        tags.append(sentence.pos[p])
        inst = next((i for i in sentence.instances if i.index == p), None)
        inst_ids.append(inst.id if inst is not None else "")
        keys.append(" ".join(inst.keys) if inst is not None else "")
    items = np.array([item for item, _ in sentences], dtype=np.int64)
    ids = [s.id for _, s in sentences]
    spans = np.asarray(emb.spans, dtype=np.int64).reshape(n, 2)
    columns = {
        "shard": pa.array([name] * n, pa.string()),
        "row": pa.array(np.arange(n, dtype=np.int64)),
        "input": pa.array(np.full(n, input_index, dtype=np.int32)),
        "item": pa.array(items[sent] if n else np.zeros(0, np.int64)),
        "sentence": pa.array(sent.astype(np.int32)),
        "sentence_id": pa.array([ids[s] for s in sent.tolist()], pa.string()),
        "position": pa.array(pos.astype(np.int32)),
        "word": pa.array(list(emb.words), pa.string()),
        "lemma": pa.array(lemmas, pa.string()),
        "pos": pa.array(tags, pa.string()),
        "instance_id": pa.array(inst_ids, pa.string()),
        "keys": pa.array(keys, pa.string()),
        "subword_start": pa.array(spans[:, 0].astype(np.int32)),
        "subword_end": pa.array(spans[:, 1].astype(np.int32)),
    }
    return pa.Table.from_pydict(columns, schema=ROW_SCHEMA)


def write_table(path: Path, table: pa.Table) -> None:
    """Write a row table atomically (zstd-compressed Parquet)."""
    with atomic_path(path, suffix=".parquet") as tmp:
        pq.write_table(table, tmp, compression="zstd")


def write_record(path: Path, record: ShardRecord) -> None:
    """Write a shard's record atomically: the step that makes the shard visible."""
    with atomic_path(path) as tmp:
        tmp.write_text(json.dumps(record.to_dict(), indent=1) + "\n", encoding="utf-8")


def read_record(path: Path) -> ShardRecord | None:
    """A shard's record, or None if there is none or it is not readable."""
    try:
        return ShardRecord.from_dict(json.loads(path.read_text(encoding="utf-8")))
    except (OSError, ValueError, KeyError, TypeError):
        return None


def verify_shard(directory: str | os.PathLike[str], record: ShardRecord, level: Verify) -> str:
    """What is wrong with a shard on disk ("" if nothing): a missing file, another size, or
    (``level="sha256"``) other content than its record says."""
    paths = shard_paths(directory, record.name)
    for path, size, digest in (
        (paths.vectors, record.vectors_bytes, record.vectors_sha256),
        (paths.table, record.table_bytes, record.table_sha256),
    ):
        if not path.is_file():
            return f"{path.name} is missing"
        if path.stat().st_size != size:
            return f"{path.name} has {path.stat().st_size} bytes, its record says {size}"
        if level == "sha256" and sha256_file(path) != digest:
            return f"{path.name} does not match its checksum (corrupted)"
    return ""


def remove_shard(directory: str | os.PathLike[str], name: str) -> None:
    """Delete a shard's files, its record first (so it stops being visible at once)."""
    paths = shard_paths(directory, name)
    for path in (paths.record, paths.vectors, paths.table):
        path.unlink(missing_ok=True)


def shard_names_on_disk(directory: str | os.PathLike[str]) -> set[str]:
    """Names of the shards that have at least one file in ``directory``."""
    names = set()
    for path in Path(directory).glob("shard-*"):
        stem = path.name[len("shard-") :]
        names.add(stem.split(".", 1)[0])
    return names


def remove_temporaries(directory: str | os.PathLike[str]) -> int:
    """Delete the temporary files of shards that were being written when a job died."""
    n = 0
    for path in Path(directory).glob(".shard-*.tmp*"):
        path.unlink(missing_ok=True)
        n += 1
    return n


# --------------------------------------------------------------------------- the manifest


@dataclass(frozen=True)
class Manifest:
    """The identity and contents of an output directory.

    Attributes:
        settings: everything that changes the shards (model and its fingerprint, layers,
            pooling, dtype, keep, shard size, text column, compute dtype, max length, stride).
        inputs: per input, ``{"path", "kind", "sha256", "items"}``.
        shards: the records of the complete shards, in input and item order.
        complete: every item of every input is in a shard.
        problems: what kept the job from completing (inputs or shards that failed).
    """

    settings: dict[str, Any]
    inputs: tuple[dict[str, Any], ...]
    shards: tuple[ShardRecord, ...] = ()
    complete: bool = False
    problems: tuple[str, ...] = field(default=())

    @property
    def rows(self) -> int:
        return sum(r.rows for r in self.shards)

    @property
    def sentences(self) -> int:
        return sum(r.sentences for r in self.shards)

    def to_dict(self) -> dict[str, Any]:
        return {
            "format": FORMAT,
            "workbench_version": __version__,
            "settings": self.settings,
            "inputs": list(self.inputs),
            "complete": self.complete,
            "rows": self.rows,
            "sentences": self.sentences,
            "problems": list(self.problems),
            "shards": [r.to_dict() for r in self.shards],
        }


def write_manifest(directory: str | os.PathLike[str], manifest: Manifest) -> Path:
    """Write ``manifest.json`` atomically."""
    path = Path(directory) / MANIFEST
    with atomic_path(path) as tmp:
        tmp.write_text(json.dumps(manifest.to_dict(), indent=1) + "\n", encoding="utf-8")
    return path


def read_manifest(directory: str | os.PathLike[str]) -> Manifest | None:
    """The manifest of ``directory``, or None where there is none.

    Raises:
        DataError: a manifest that is not JSON or not of this format.
    """
    path = Path(directory) / MANIFEST
    if not path.is_file():
        return None
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        if data.get("format") != FORMAT:
            raise DataError(f"{path}: format {data.get('format')!r}, not {FORMAT!r}")
        return Manifest(
            settings=dict(data["settings"]),
            inputs=tuple(data["inputs"]),
            shards=tuple(ShardRecord.from_dict(r) for r in data["shards"]),
            complete=bool(data["complete"]),
            problems=tuple(data.get("problems", ())),
        )
    except (OSError, ValueError, KeyError, TypeError, AttributeError) as exc:
        raise DataError(f"{path} is not a workbench shard manifest ({exc})") from exc


def check_settings(
    directory: str | os.PathLike[str], found: Mapping[str, Any], wanted: Mapping[str, Any]
) -> None:
    """Refuse to add to a directory made with other settings.

    Raises:
        MismatchError: naming every setting that differs, with both values.
    """
    keys = sorted(set(found) | set(wanted))
    diff = [f"{k} {found.get(k)!r} there, {wanted.get(k)!r} now" for k in keys
            if found.get(k) != wanted.get(k)]  # fmt: skip
    if diff:
        raise MismatchError(
            f"{directory} holds shards made with other settings ({'; '.join(diff)}): "
            "use another --out directory, or delete this one to start over"
        )
