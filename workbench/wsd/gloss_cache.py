"""Gloss vectors on disk: what a bi-encoder's gloss encoder gave each gloss text, computed once.

The vectors of one gloss encoder live in one folder, ``<cache>/glosses/<tag>``, whose name
hashes its identity: the gloss encoder's weights fingerprint and everything else that changes
a vector (pooling, the cut to a number of subwords, the compute dtype). A vector is found by
the SHA-256 of its gloss text, so a changed text (another WordNet, another way of composing
the gloss) is simply not found and is encoded again.

Each :meth:`GlossCache.store` adds one shard ``<random>.npz`` (written to a temporary name
and renamed, so a reader never sees half a shard and two processes never write the same file):
``digests`` ``(n, 16)`` uint8 (the first 16 bytes of each text's SHA-256), ``vectors``
``(n, dim)`` float32 and ``identity`` (the folder's identity as JSON). A shard whose identity
is not the folder's (a file copied in from another model's folder), that cannot be read
(cut off by a full disk), whose headers declare more than it holds, or whose vectors are not
all finite (:mod:`workbench.limits`), never answers: it is reported, removed where possible, and its
glosses are encoded again. Many shards are merged into one once there are more than
:data:`MAX_SHARDS`. A cache folder that cannot be written (read-only) is reported once; the
vectors are then kept for the process only.

Example::

    cache = GlossCache({"gloss_encoder": "f412054b280245dd", "pooling": "mean"}, dim=384)
    vectors, found = cache.lookup(["sloping land", "a financial institution"])
    cache.store([t for t, f in zip(texts, found) if not f], new_vectors)
"""

from __future__ import annotations

import hashlib
import json
import uuid
import warnings
import zipfile
from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np

from workbench.encoding.models import default_cache_dir
from workbench.errors import DataError, LimitError, OutputError
from workbench.fileio import atomic_path, sha256_bytes
from workbench.limits import check_finite, check_npz

#: Shards in one folder before they are merged into one.
MAX_SHARDS = 32
DIGEST_BYTES = 16


def text_digests(texts: Sequence[str]) -> np.ndarray:
    """``(len(texts), 16)`` uint8: the first 16 bytes of each text's SHA-256 (UTF-8)."""
    out = np.zeros((len(texts), DIGEST_BYTES), dtype=np.uint8)
    for i, text in enumerate(texts):
        digest = hashlib.sha256(text.encode("utf-8")).digest()
        out[i] = np.frombuffer(digest[:DIGEST_BYTES], np.uint8)
    return out


def digest_keys(digests: np.ndarray) -> list[bytes]:
    """Each row of ``digests`` (``(n, 16)`` uint8) as the 16 bytes the in-memory index is keyed
    by, sliced from one copy of the array's bytes."""
    flat = np.ascontiguousarray(digests, dtype=np.uint8).tobytes()
    return [flat[i : i + DIGEST_BYTES] for i in range(0, len(flat), DIGEST_BYTES)]


class GlossCache:
    """The gloss vectors of one gloss encoder, on disk and in memory.

    Args:
        identity: what makes the vectors (JSON-able): the gloss encoder's fingerprint, pooling,
            cut, dtype, ...
        dim: the vectors' width.
        root: the cache dir (default :func:`workbench.encoding.models.default_cache_dir`).

    Attributes:
        folder: where the shards live.
        identity: ``identity`` as canonical JSON.
    """

    def __init__(self, identity: Mapping[str, object], dim: int, root: Path | None = None) -> None:
        self.identity = json.dumps(dict(identity), sort_keys=True)
        self.dim = int(dim)
        tag = sha256_bytes(self.identity)[:16]
        self.folder = (root or default_cache_dir()) / "glosses" / tag
        self._rows: dict[bytes, int] = {}
        self._vectors = np.zeros((0, self.dim), dtype=np.float32)
        self._read: set[str] = set()  # shard names already in memory
        self._writable = True

    def __len__(self) -> int:
        return len(self._rows)

    # ------------------------------------------------------------------ reading
    def _shards(self) -> list[Path]:
        try:
            return sorted(p for p in self.folder.glob("*.npz") if not p.name.startswith("."))
        except OSError:
            return []

    def _read_shard(self, path: Path) -> tuple[np.ndarray, np.ndarray] | None:
        """A shard's ``(digests, vectors)``, or None when it must not answer (reported)."""
        try:
            check_npz(path, "the shard")  # sizes and a regular file, before numpy allocates
            with np.load(path, allow_pickle=False) as data:
                identity = str(data["identity"])
                digests, vectors = np.asarray(data["digests"]), np.asarray(data["vectors"])
            if identity != self.identity:
                raise ValueError("it was written for another gloss encoder or other settings")
            if (
                digests.ndim != 2
                or digests.shape[1] != DIGEST_BYTES
                or vectors.shape != (len(digests), self.dim)
                or vectors.dtype != np.float32
            ):
                raise ValueError(f"arrays of shapes {digests.shape} and {vectors.shape}")
            check_finite(vectors, "its vectors")
        except FileNotFoundError:
            return None  # merged away by another process meanwhile: its rows are in the merge
        except LimitError as exc:  # a limit set lower than the shard: refused, never deleted
            raise LimitError(
                f"gloss cache shard {path} is past a limit ({exc}); it is kept: raise "
                "WORKBENCH_LIMIT_ARRAY_BYTES to use it"
            ) from exc
        except (OSError, ValueError, KeyError, EOFError, zipfile.BadZipFile, DataError) as exc:
            warnings.warn(
                f"gloss cache shard {path} cannot be used ({exc}); its glosses are encoded again",
                stacklevel=4,
            )
            try:
                path.unlink(missing_ok=True)
            except OSError:
                pass
            return None
        return digests, vectors

    def refresh(self) -> None:
        """Read the shards not yet in memory (written since by this or another process)."""
        new_digests, new_vectors = [], []
        for path in self._shards():
            if path.name in self._read:
                continue
            read = self._read_shard(path)
            self._read.add(path.name)
            if read is not None:
                new_digests.append(read[0])
                new_vectors.append(read[1])
        if new_digests:
            self._add(np.concatenate(new_digests), np.concatenate(new_vectors))

    def _add(self, digests: np.ndarray, vectors: np.ndarray) -> None:
        start = len(self._vectors)
        keys = digest_keys(digests)
        if not self._rows:  # the first read: every key at its row, built in one C loop
            last = start + len(keys) - 1  # reversed, so a text stored twice keeps its first row
            self._rows = dict(zip(reversed(keys), range(last, start - 1, -1)))
            self._vectors = np.concatenate([self._vectors, vectors])
            return
        fresh: list[int] = []
        rows = self._rows
        for i, key in enumerate(keys):
            if key not in rows:
                rows[key] = start + len(fresh)
                fresh.append(i)
        if fresh:
            self._vectors = np.concatenate([self._vectors, vectors[fresh]])

    def lookup(self, texts: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
        """``(vectors (n, dim) float32, found (n,) bool)`` for ``texts``; rows not found are 0."""
        digests = text_digests(texts)
        keys = digest_keys(digests)
        rows = np.array([self._rows.get(key, -1) for key in keys], dtype=np.int64)
        found = rows >= 0
        if not found.all():
            self.refresh()  # shards not read yet, or stored by another process meanwhile
            rows = np.array([self._rows.get(key, -1) for key in keys], dtype=np.int64)
            found = rows >= 0
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        out[found] = self._vectors[rows[found]]
        return out, found

    # ------------------------------------------------------------------ writing
    def store(self, texts: Sequence[str], vectors: np.ndarray) -> None:
        """Add the vectors of ``texts`` (``(len(texts), dim)``) in memory and as a new shard."""
        vectors = np.ascontiguousarray(vectors, dtype=np.float32)
        if vectors.shape != (len(texts), self.dim):
            raise ValueError(f"vectors of shape {vectors.shape} for {len(texts)} texts")
        check_finite(vectors, "the gloss vectors to store")  # nothing non-finite is kept
        if not len(texts):
            return
        digests = text_digests(texts)
        self._add(digests, vectors)
        name = self._write(digests, vectors)
        if name is not None:
            self._read.add(name)
        if len(self._shards()) > MAX_SHARDS:
            self._merge()

    def _write(self, digests: np.ndarray, vectors: np.ndarray) -> str | None:
        """Write one shard; its name, or None when the cache cannot be written (reported once)."""
        if not self._writable:
            return None
        name = f"{uuid.uuid4().hex}.npz"
        try:
            self.folder.mkdir(parents=True, exist_ok=True)
            with atomic_path(self.folder / name, suffix=".npz") as tmp:
                np.savez(tmp, digests=digests, vectors=vectors, identity=np.array(self.identity))
        except (OSError, OutputError) as exc:
            self._writable = False
            warnings.warn(
                f"the gloss cache {self.folder} cannot be written ({exc}); gloss vectors are kept "
                "for this process only",
                stacklevel=4,
            )
            return None
        return name

    def _merge(self) -> None:
        """Replace the shards read so far by one holding everything in memory."""
        self.refresh()
        merged = [p for p in self._shards() if p.name in self._read]
        digests = np.zeros((len(self._rows), DIGEST_BYTES), dtype=np.uint8)
        for key, row in self._rows.items():
            digests[row] = np.frombuffer(key, np.uint8)
        name = self._write(digests, self._vectors)
        if name is None:
            return
        for path in merged:
            try:
                path.unlink(missing_ok=True)
            except OSError:
                pass
        self._read = {name}
