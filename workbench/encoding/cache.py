"""Content-addressed on-disk cache of layerwise embeddings.

An entry is a directory ``<root>/embeddings/<key>/`` holding ``vectors.npy`` (read back as a
memory map), ``index.npz`` (words and alignment) and ``meta.json``: what made the entry (its
identity), the embeddings' metadata, the size and CRC-32 of each of the two other files, and a
SHA-256 of the rest of ``meta.json`` itself. The key hashes everything that changes the
numbers: the model's content fingerprint (not its name or place: a copy shares the entries),
pooling, kept layers, compute and stored dtype,
max length and stride, the corpus (its words and the kept positions) and the workbench version.

Writes are atomic: the entry is built in a temporary directory of this writer (the encoder
streams straight into its memory-mapped ``vectors.npy``) and renamed into place when complete.
Temporary directories of writers that died (killed mid-way) are removed by the next writer and
by :meth:`EmbeddingCache.prune`. On load, every file of an entry is checked: an entry made for
another identity, a ``meta.json`` that is not what this module writes, a missing, truncated or
swapped file, or arrays that do not fit each other are refused with a :class:`CacheError`;
:func:`encode_cached` then warns, deletes the entry and recomputes, never using it silently.
``workbench cache`` lists the entries and their size, verifies and prunes them.

Example:
    >>> emb = encode_cached(Encoder(), [["A", "bank", "."]])   # computes and stores
    >>> emb = encode_cached(Encoder(), [["A", "bank", "."]])   # read back from disk
"""

from __future__ import annotations

import json
import os
import re
import shutil
import stat
import time
import warnings
import zipfile
import zlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from workbench import __version__
from workbench.encoding.alignment import Sentences, normalize_input
from workbench.encoding.embeddings import LayerwiseEmbeddings, pack_words
from workbench.encoding.models import default_cache_dir
from workbench.encoding.pooling import Pooling
from workbench.encoding.rows import Progress
from workbench.errors import CacheError, DataError
from workbench.fileio import (
    HOST,
    fault_point,
    remove_path,
    remove_stale_temporaries,
    sha256_bytes,
    sha256_json,
    sha256_words,
    stale_temporaries,
    temporary_path,
    writer_alive,
)
from workbench.limits import check_npz, is_within, read_json

if TYPE_CHECKING:
    from workbench.encoding.encoder import Encoder


_CHUNK = 16 << 20
FORMAT = 2  # meta.json layout; entries of another format are refused (and recomputed)
FILES = ("vectors.npy", "index.npz")  # the data files of an entry, each checked on load
_KEY = re.compile(r"^[0-9a-f]{32}$")
_OLD_TEMPORARY = re.compile(r"^\.tmp-[0-9a-f]{32}-(?P<pid>\d+)-[0-9a-f]{8}$")  # before format 2


def file_crc(path: Path) -> str:
    """CRC-32 of a file, read in chunks: the corruption check of an entry's files.

    Not an identity (entries are named by the SHA-256 of what made them): it only tells a
    truncated, damaged or swapped file from the one written, which a CRC does at twice
    SHA-256's speed on files of several GB.
    """
    crc = 0
    with path.open("rb") as fh:
        while chunk := fh.read(_CHUNK):
            crc = zlib.crc32(chunk, crc)
    return f"{crc:08x}"


@dataclass(frozen=True)
class CacheEntry:
    """One entry as :meth:`EmbeddingCache.entries` lists it.

    Attributes:
        key: the entry's directory name.
        bytes: size of its files.
        model: the model that made it ("?" when its meta.json is unreadable).
        shape: ``(n_words, n_layers, dim)`` of its vectors (empty when unknown).
        created: when it was written (Unix time; 0 when unknown).
        last_used: when it was last read or written (Unix time).
        problem: why it cannot be used ("" for a good entry).
    """

    key: str
    bytes: int
    model: str
    shape: tuple[int, ...]
    created: float
    last_used: float
    problem: str


@dataclass(frozen=True)
class PruneResult:
    """What :meth:`EmbeddingCache.prune` removed: entries (by key), stale temporaries, bytes;
    and the entries it was to remove but could not (a read-only cache), with why."""

    entries: tuple[str, ...]
    temporaries: tuple[str, ...]
    bytes: int
    failed: tuple[str, ...] = ()
    reason: str = ""


def _size(path: Path) -> int:
    """Bytes of the regular files at ``path`` and below, no link followed."""
    try:
        info = path.lstat()
    except OSError:
        return 0
    if not path.is_dir() or path.is_symlink():
        return info.st_size if path.is_file() and not path.is_symlink() else 0
    total = 0
    for folder, _, names in os.walk(path):  # os.walk follows no link to a folder
        for name in names:
            try:
                entry = os.lstat(os.path.join(folder, name))
            except OSError:
                continue
            total += entry.st_size if stat.S_ISREG(entry.st_mode) else 0
    return total


def _meta_checksum(meta: dict[str, Any]) -> str:
    return sha256_json({k: v for k, v in meta.items() if k != "checksum"})


class EmbeddingCache:
    """The store; ``root`` defaults to :func:`workbench.encoding.models.default_cache_dir`."""

    def __init__(self, root: str | os.PathLike | None = None) -> None:
        self.root = Path(root) if root is not None else default_cache_dir()
        self.dir = self.root / "embeddings"

    @staticmethod
    def key(identity: dict) -> str:
        """The entry name for a JSON-able identity dict."""
        blob = json.dumps(identity, sort_keys=True).encode()
        return sha256_bytes(blob)[:32]

    def path(self, key: str) -> Path:
        """The directory of entry ``key``."""
        return self.dir / key

    # ------------------------------------------------------------------ reading
    def read_meta(self, key: str) -> dict[str, Any]:
        """The entry's ``meta.json``, checked: an object of this module's format whose own
        checksum and key match, with every field of the right type.

        Raises:
            CacheError: naming the entry and what is wrong.
        """
        entry = self.path(key)
        try:  # a regular file of a sane size (never a FIFO, a device, a huge file)
            meta = read_json(entry / "meta.json", "its meta.json", error=CacheError)
        except OSError as exc:
            raise CacheError(f"cache entry {entry} has an unreadable meta.json ({exc})") from exc
        except CacheError as exc:
            raise CacheError(f"cache entry {entry}: {exc}") from exc
        if not isinstance(meta, dict):
            raise CacheError(f"cache entry {entry} has a meta.json that is not an object")
        if meta.get("format") != FORMAT:
            raise CacheError(f"cache entry {entry} has another format ({meta.get('format')!r})")
        if meta.get("checksum") != _meta_checksum(meta):
            raise CacheError(f"cache entry {entry} has a damaged meta.json (checksum mismatch)")
        identity, files = meta.get("identity"), meta.get("files")
        if not isinstance(identity, dict) or self.key(identity) != key:
            raise CacheError(f"cache entry {entry} has the meta.json of another entry")
        if not isinstance(meta.get("embeddings"), dict) or not isinstance(files, dict):
            raise CacheError(f"cache entry {entry} has an incomplete meta.json")
        for name in FILES:
            info = files.get(name)
            if (
                not isinstance(info, dict)
                or not isinstance(info.get("bytes"), int)
                or not isinstance(info.get("crc32"), str)
            ):
                raise CacheError(f"cache entry {entry}: meta.json does not describe {name}")
        return meta

    def check_files(self, key: str, meta: dict[str, Any], verify: bool = True) -> None:
        """Check each data file of the entry against ``meta``: present, of the size written,
        and (``verify``; always for the small ``index.npz``) of the CRC-32 written.

        Raises:
            CacheError: naming the file and what is wrong.
        """
        entry = self.path(key)
        for name in FILES:
            path, info = entry / name, meta["files"][name]
            if not path.is_file():
                raise CacheError(f"cache entry {entry} is missing its {name}")
            if path.stat().st_size != info["bytes"]:
                raise CacheError(f"cache entry {entry} has a truncated or resized {name}")
            if (verify or name != "vectors.npy") and file_crc(path) != info["crc32"]:
                raise CacheError(f"cache entry {entry} has a corrupted {name} (checksum mismatch)")

    def load(self, key: str, identity: dict, verify: bool = True) -> LayerwiseEmbeddings | None:
        """The stored entry, ``None`` if absent; :class:`CacheError` if it cannot be trusted.

        Args:
            key: the entry's name (:meth:`key` of ``identity``).
            identity: what the caller needs the entry to have been made by.
            verify: also check the CRC-32 of ``vectors.npy`` (a read of the whole file).
        """
        entry = self.path(key)
        if not entry.exists() and not entry.is_symlink():
            return None
        if not entry.is_dir():
            raise CacheError(f"cache entry {entry} is a file, not a directory")
        if not (entry / "meta.json").is_file():
            raise CacheError(f"cache entry {entry} has no meta.json")
        meta = self.read_meta(key)
        if meta["identity"] != identity:
            made = meta["embeddings"].get("model_name", "?")
            raise CacheError(
                f"cache entry {entry} was made by model '{made}' with another configuration "
                "than asked"
            )
        self.check_files(key, meta, verify)
        try:
            vectors = np.load(entry / "vectors.npy", mmap_mode="r", allow_pickle=False)
            check_npz(entry / "index.npz", "its index.npz", CacheError)
            with np.load(entry / "index.npz", allow_pickle=False) as index:
                arrays = {k: index[k] for k in index.files}
            emb = LayerwiseEmbeddings.from_parts(vectors, arrays, meta["embeddings"], str(entry))
        except (OSError, ValueError, KeyError, EOFError, zipfile.BadZipFile, DataError,
                CacheError) as exc:  # fmt: skip
            raise CacheError(f"cache entry {entry} cannot be read ({exc})") from exc
        try:  # the entry's last use, for `workbench cache prune --max-size`
            os.utime(entry / "meta.json")
        except OSError:
            pass
        return emb

    # ------------------------------------------------------------------ writing
    def new_entry(self, key: str) -> Path:
        """A fresh temporary directory of this writer to build an entry in (renamed by
        :meth:`commit`); temporaries of dead writers are removed first."""
        self.dir.mkdir(parents=True, exist_ok=True)
        self.remove_stale()
        tmp = temporary_path(self.path(key))
        tmp.mkdir()
        return tmp

    def commit(self, tmp: Path, key: str, identity: dict, emb: LayerwiseEmbeddings) -> None:
        """Write the index and meta into ``tmp`` and rename it into place atomically."""
        arrays: dict[str, Any] = {
            "sentence_index": emb.sentence_index,
            "word_index": emb.word_index,
            "spans": emb.spans,
            **pack_words(emb.words),
        }
        np.savez(tmp / "index.npz", **arrays)
        files = {
            name: {"bytes": (tmp / name).stat().st_size, "crc32": file_crc(tmp / name)}
            for name in FILES
        }
        meta: dict[str, Any] = {
            "format": FORMAT,
            "identity": identity,
            "embeddings": emb.meta(),
            "files": files,
            "created": time.time(),
        }
        meta["checksum"] = _meta_checksum(meta)
        (tmp / "meta.json").write_text(json.dumps(meta, indent=1), encoding="utf-8")
        fault_point("cache:commit")
        final = self.path(key)
        if final.exists() or final.is_symlink():
            self.remove(key)
        try:
            os.replace(tmp, final)
        except OSError:  # another process won the race: its entry is as good as ours
            shutil.rmtree(tmp, ignore_errors=True)

    def remove(self, key: str) -> bool:
        """Delete entry ``key``, a directory or (damage) a file or link in its place.

        Returns:
            whether nothing is left at its path (``True`` too when it was absent).
        """
        return remove_path(self.path(key))

    # ------------------------------------------------------------------ housekeeping
    def own_dir(self) -> bool:
        """Whether the entries' folder lies inside the cache's root (every link followed):
        housekeeping never lists or deletes anything outside the cache's own tree."""
        return is_within(self.dir, self.root)

    def _check_own_dir(self) -> None:
        if not self.own_dir():
            raise CacheError(
                f"the cache's folder {self.dir} leads out of the cache to "
                f"{os.path.realpath(self.dir)} (a symbolic link): nothing there is listed or "
                "deleted; remove the link, or point WORKBENCH_CACHE at the real folder"
            )

    def stale(self) -> list[Path]:
        """Temporary entry directories whose writer on this machine is gone."""
        found = stale_temporaries(self.dir)
        if self.dir.is_dir():
            for path in self.dir.iterdir():
                match = _OLD_TEMPORARY.match(path.name)
                if match and not writer_alive(HOST, int(match["pid"])):
                    found.append(path)
        return sorted(found)

    def remove_stale(self) -> list[Path]:
        """Delete :meth:`stale` temporaries; returns what was removed (nothing when the
        entries' folder leads out of the cache)."""
        if not self.own_dir():
            return []
        removed = remove_stale_temporaries(self.dir)
        for path in self.stale():
            if remove_path(path):
                removed.append(path)
        return sorted(removed)

    def entries(self, verify: bool = False) -> list[CacheEntry]:
        """Every entry, most recently used first, with its size and any problem found
        (``verify``: also the CRC-32 of each ``vectors.npy``, a read of the whole cache).
        An entry that is a symbolic link is listed as damaged and never followed.

        Raises:
            CacheError: the entries' folder leads out of the cache (:meth:`own_dir`).
        """
        out: list[CacheEntry] = []
        if not self.dir.is_dir():
            return out
        self._check_own_dir()
        for path in self.dir.iterdir():
            if not _KEY.match(path.name):
                continue
            model, created, problem = "?", 0.0, ""
            if path.is_symlink():  # never followed: only the link itself is the cache's
                out.append(CacheEntry(path.name, 0, model, (), 0.0, path.lstat().st_mtime,
                                      "is a symbolic link, not an entry"))  # fmt: skip
                continue
            shape: tuple[int, ...] = ()
            try:
                meta = self.read_meta(path.name)
                self.check_files(path.name, meta, verify)
                model = str(meta["embeddings"].get("model_name", "?"))
                shape = tuple(int(v) for v in meta["embeddings"].get("shape", ()))
                created = float(meta.get("created", 0.0))
            except (CacheError, OSError, TypeError, ValueError) as exc:
                problem = str(exc).removeprefix(f"cache entry {path} ")
            if not path.is_dir():
                problem = "is a file, not a directory"
            try:
                used = (path / "meta.json").lstat().st_mtime
            except OSError:
                used = path.lstat().st_mtime
            out.append(CacheEntry(path.name, _size(path), model, shape, created, used, problem))
        return sorted(out, key=lambda e: -e.last_used)

    def prune(
        self,
        *,
        everything: bool = False,
        older_than_days: float | None = None,
        max_bytes: int | None = None,
        verify: bool = False,
    ) -> PruneResult:
        """Remove stale temporaries and damaged entries, then as asked: every entry
        (``everything``), entries unused for ``older_than_days``, and least recently used
        entries until the rest fit in ``max_bytes``.

        Args:
            verify: find damaged entries by their full CRC-32 too (reads every file).

        Raises:
            CacheError: the entries' folder leads out of the cache (:meth:`own_dir`).
        """
        if self.dir.is_dir():
            self._check_own_dir()
        temps = self.remove_stale()
        now, removed, failed, freed = time.time(), [], [], 0
        kept_bytes = 0
        for entry in self.entries(verify):  # most recently used first
            old = older_than_days is not None and now - entry.last_used > older_than_days * 86400
            over = max_bytes is not None and kept_bytes + entry.bytes > max_bytes
            if everything or entry.problem or old or over:
                if self.remove(entry.key):  # count only what is really gone
                    removed.append(entry.key)
                    freed += entry.bytes
                else:
                    failed.append(entry.key)
            else:
                kept_bytes += entry.bytes
        reason = ""
        if failed:
            writable = os.access(self.dir, os.W_OK | os.X_OK)
            reason = "its folder is read-only here" if not writable else "they could not be deleted"
        temporaries = tuple(p.name for p in temps)
        return PruneResult(tuple(removed), temporaries, freed, tuple(failed), reason)


def store_in_cache(write: Callable[[], object], what: str) -> bool:
    """Store something just computed in the cache with ``write()``; a cache that cannot take it
    (read-only, full, a file in the way) is a warning, not an error: the caller goes on with
    what it computed, uncached. Returns whether it was stored."""
    try:
        write()
    except OSError as exc:  # OutputError too
        warnings.warn(f"the {what} is not kept in the cache ({exc}): it is used uncached",
                      stacklevel=2)  # fmt: skip
        return False
    return True


def _uncached(cache: EmbeddingCache, reason: str) -> None:
    """Warn that a result is computed (or kept) without the cache, which cannot take it."""
    warnings.warn(
        f"the cache dir {cache.dir} cannot be written ({reason}): the vectors are computed "
        "without the cache (set WORKBENCH_CACHE to a writable directory to keep them)",
        stacklevel=3,
    )


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
    that cannot be trusted (other model, a damaged, truncated or swapped file) is reported with
    a warning, deleted and recomputed.
    """
    cache = cache or EmbeddingCache()
    words = normalize_input(sentences)
    kept = encoder.check_layers(layers)
    identity = {  # the model by its content only: a copy elsewhere shares the entries
        "fingerprint": encoder.fingerprint,
        "pooling": pooling or encoder.pooling,
        "layers": list(kept),
        "compute_dtype": encoder.dtype_name,
        "store_dtype": store_dtype,
        "max_length": encoder.max_length,
        "stride": encoder.stride,
        "corpus": sha256_words(words, keep),
        "version": __version__,
    }
    key = cache.key(identity)

    def compute(out: Path | None = None) -> LayerwiseEmbeddings:
        return encoder.encode(words, layers=kept, keep=keep, progress=progress, out=out,
                              store_dtype=store_dtype, pooling=pooling)  # fmt: skip

    try:
        hit = cache.load(key, identity, verify=verify)
    except CacheError as exc:
        warnings.warn(f"{exc}; recomputing it", stacklevel=2)
        if not cache.remove(key):  # a read-only cache: the result is not stored
            _uncached(cache, "its damaged entry cannot be removed")
            return compute()
        hit = None
    if hit is not None:
        return replace(hit, model_name=encoder.name)  # the name this caller knows it by
    try:
        tmp = cache.new_entry(key)
    except OSError as exc:  # a read-only or full cache: run without it
        _uncached(cache, exc.strerror or str(exc))
        return compute()
    try:
        emb = compute(tmp / "vectors.npy")
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    try:
        cache.commit(tmp, key, identity, emb)
    except OSError as exc:  # the vectors are complete: kept in memory, not cached
        in_memory = replace(emb, vectors=np.array(emb.vectors), model_name=encoder.name)
        shutil.rmtree(tmp, ignore_errors=True)
        _uncached(cache, exc.strerror or str(exc))
        return in_memory
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    stored = cache.load(key, identity, verify=False)
    if stored is None:  # the entry was deleted between its commit and this read
        raise CacheError(f"cache entry {cache.path(key)} vanished right after it was written")
    return replace(stored, model_name=encoder.name)
