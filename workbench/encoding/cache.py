"""Content-addressed on-disk cache of layerwise embeddings.

An entry is a directory ``<root>/embeddings/<key>/`` holding ``vectors.npy`` (read back as a
memory map), ``index.npz`` (words and alignment) and ``meta.json`` (what made it, shapes and a
CRC-32 of ``vectors.npy``). The key hashes everything that changes the numbers: model name and
weights fingerprint, pooling, kept layers, compute and stored dtype, max length and stride, the
corpus (its words and the kept positions) and the workbench version.

Writes are atomic: the entry is built in a temporary directory (the encoder streams straight
into its memory-mapped ``vectors.npy``) and renamed into place when complete. On load, an entry
made by another model, a truncated or a corrupted file is refused with a :class:`CacheError`;
:func:`encode_cached` then warns, deletes it and recomputes, never using it silently.

Example:
    >>> emb = encode_cached(Encoder(), [["A", "bank", "."]])   # computes and stores
    >>> emb = encode_cached(Encoder(), [["A", "bank", "."]])   # read back from disk
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import uuid
import warnings
import zlib
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from workbench import __version__
from workbench.encoding.alignment import Sentences, normalize_input
from workbench.encoding.embeddings import LayerwiseEmbeddings
from workbench.encoding.models import default_cache_dir
from workbench.encoding.pooling import Pooling
from workbench.encoding.rows import Progress
from workbench.errors import CacheError
from workbench.fileio import sha256_words

if TYPE_CHECKING:
    from workbench.encoding.encoder import Encoder


_CHUNK = 16 << 20


def file_crc(path: Path) -> str:
    """CRC-32 of a file, read in chunks: the corruption check of an entry's ``vectors.npy``.

    Not an identity (entries are named by the SHA-256 of what made them): it only tells a
    truncated or damaged file from the one written, which a CRC does at twice SHA-256's speed on
    files of several GB, and existing entries store it in ``meta.json`` as ``crc32``.
    """
    crc = 0
    with path.open("rb") as fh:
        while chunk := fh.read(_CHUNK):
            crc = zlib.crc32(chunk, crc)
    return f"{crc:08x}"


class EmbeddingCache:
    """The store; ``root`` defaults to :func:`workbench.encoding.models.default_cache_dir`."""

    def __init__(self, root: str | os.PathLike | None = None) -> None:
        self.root = Path(root) if root is not None else default_cache_dir()
        self.dir = self.root / "embeddings"

    @staticmethod
    def key(identity: dict) -> str:
        """The entry name for a JSON-able identity dict."""
        blob = json.dumps(identity, sort_keys=True).encode()
        return hashlib.sha256(blob).hexdigest()[:32]

    def path(self, key: str) -> Path:
        return self.dir / key

    def load(self, key: str, identity: dict, verify: bool = True) -> LayerwiseEmbeddings | None:
        """The stored entry, ``None`` if absent; :class:`CacheError` if it cannot be trusted."""
        entry = self.path(key)
        meta_path = entry / "meta.json"
        if not meta_path.is_file():
            return None
        try:
            meta = json.loads(meta_path.read_text())
        except (OSError, ValueError) as exc:
            raise CacheError(f"cache entry {entry} has an unreadable meta.json ({exc})") from exc
        if meta.get("identity") != identity:
            made = meta.get("identity", {}).get("model", "?")
            raise CacheError(
                f"cache entry {entry} was made by model '{made}' with another configuration, "
                f"not by '{identity.get('model')}' as asked"
            )
        vec_path = entry / "vectors.npy"
        if not vec_path.is_file() or vec_path.stat().st_size != meta["bytes"]:
            raise CacheError(f"cache entry {entry} is truncated or missing its vectors")
        if verify and file_crc(vec_path) != meta["crc32"]:
            raise CacheError(f"cache entry {entry} is corrupted (checksum mismatch)")
        try:
            vectors = np.load(vec_path, mmap_mode="r")
            with np.load(entry / "index.npz", allow_pickle=False) as index:
                arrays = {k: index[k] for k in index.files}
        except (OSError, ValueError, KeyError) as exc:
            raise CacheError(f"cache entry {entry} cannot be read ({exc})") from exc
        return LayerwiseEmbeddings.from_parts(vectors, arrays, meta["embeddings"])

    def new_entry(self, key: str) -> Path:
        """A fresh temporary directory to build an entry in (renamed by :meth:`commit`)."""
        self.dir.mkdir(parents=True, exist_ok=True)
        tmp = self.dir / f".tmp-{key}-{os.getpid()}-{uuid.uuid4().hex[:8]}"
        tmp.mkdir()
        return tmp

    def commit(self, tmp: Path, key: str, identity: dict, emb: LayerwiseEmbeddings) -> None:
        """Write the index and meta into ``tmp`` and rename it into place atomically."""
        np.savez(
            tmp / "index.npz",
            words=np.array(emb.words, dtype=str),
            sentence_index=emb.sentence_index,
            word_index=emb.word_index,
            spans=emb.spans,
        )
        vec_path = tmp / "vectors.npy"
        meta = {
            "identity": identity,
            "embeddings": emb.meta(),
            "bytes": vec_path.stat().st_size,
            "crc32": file_crc(vec_path),
        }
        (tmp / "meta.json").write_text(json.dumps(meta, indent=1))
        final = self.path(key)
        if final.exists():
            shutil.rmtree(final, ignore_errors=True)
        try:
            os.replace(tmp, final)
        except OSError:  # another process won the race: its entry is as good as ours
            shutil.rmtree(tmp, ignore_errors=True)

    def remove(self, key: str) -> None:
        shutil.rmtree(self.path(key), ignore_errors=True)

    def clear(self) -> int:
        """Delete every entry; returns how many were removed."""
        if not self.dir.is_dir():
            return 0
        entries = list(self.dir.iterdir())
        for entry in entries:
            shutil.rmtree(entry, ignore_errors=True)
        return len(entries)


def encode_cached(
    encoder: Encoder,
    sentences: Sentences,
    *,
    layers: Sequence[int] | None = None,
    keep: Sequence[Sequence[int]] | None = None,
    store_dtype: str = "float32",
    pooling: Pooling | None = None,
    cache: EmbeddingCache | None = None,
    progress: Progress = None,
    verify: bool = True,
) -> LayerwiseEmbeddings:
    """:meth:`Encoder.encode` through the on-disk cache (same arguments, same result).

    A hit returns the stored arrays (``vectors`` as a read-only memory map). A stored entry
    that cannot be trusted (other model, truncated, corrupted) is reported with a warning,
    deleted and recomputed.
    """
    cache = cache or EmbeddingCache()
    words = normalize_input(sentences)
    kept = encoder.check_layers(layers)
    identity = {
        "model": encoder.name,
        "fingerprint": encoder.fingerprint,
        "pooling": pooling or encoder.pooling,
        "layers": list(kept),
        "compute_dtype": str(encoder.dtype),
        "store_dtype": store_dtype,
        "max_length": encoder.max_length,
        "stride": encoder.stride,
        "corpus": sha256_words(words, keep),
        "version": __version__,
    }
    key = cache.key(identity)
    try:
        hit = cache.load(key, identity, verify=verify)
    except CacheError as exc:
        warnings.warn(f"{exc}; recomputing it", stacklevel=2)
        cache.remove(key)
        hit = None
    if hit is not None:
        return hit
    tmp = cache.new_entry(key)
    try:
        emb = encoder.encode(
            words,
            layers=kept,
            keep=keep,
            progress=progress,
            out=tmp / "vectors.npy",
            store_dtype=store_dtype,
            pooling=pooling,
        )
        cache.commit(tmp, key, identity, emb)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    stored = cache.load(key, identity, verify=False)
    if stored is None:  # the entry was deleted between its commit and this read
        raise CacheError(f"cache entry {cache.path(key)} vanished right after it was written")
    return stored
