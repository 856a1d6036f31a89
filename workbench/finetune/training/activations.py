"""Hidden states of a frozen lower part of a model, computed once and kept on disk as float16.

When training moves only a model's top layers (``top_layers``,
:mod:`workbench.finetune.training.top_layers`), everything below them gives the same output for
the same input at every step. :class:`ActivationCache` keeps that output: for each token-id
sequence (special tokens included), the ``(n_tokens, dim)`` hidden states that enter the first
trained layer, in float16.

The activations of one frozen part live in one folder, ``<cache>/activations/<tag>``, whose name
hashes its identity: the SHA-256 of the frozen weights themselves (embeddings and lower layers,
:func:`frozen_fingerprint`), the number of layers below the cut, the width and the format. A
sequence is found by the SHA-256 of its token ids, so another tokenizer's ids, another text or a
window cut elsewhere is simply not found and is computed. Each :meth:`ActivationCache.store`
adds one shard ``<random>.npz`` (written under a temporary name and renamed): ``digests``
``(n, 16)`` uint8, ``offsets`` ``(n + 1,)`` int64 into ``hidden`` ``(n_tokens, dim)`` float16,
and ``identity`` (the folder's identity as JSON). A shard whose identity is not the folder's
(copied in from another model's or another cut's folder), that cannot be read, whose arrays do
not fit each other, or whose values are not finite, is never read: it is removed where possible,
reported, and its sequences are computed again.

Example::

    cache = ActivationCache(identity, dim=384)          # identity: frozen_fingerprint(...), cut
    hidden, found = cache.lookup([[101, 7592, 102]])     # hidden[i]: (n_tokens_i, 384) float16
    cache.store([[101, 7592, 102]], [states])            # states: (3, 384)
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
import torch
from torch import nn

from workbench.encoding.models import default_cache_dir
from workbench.errors import DataError, LimitError, OutputError
from workbench.fileio import atomic_path, sha256_bytes
from workbench.limits import check_npz

FORMAT = "workbench-activations/1"
DIGEST_BYTES = 16
#: Tokens per shard written by one :meth:`ActivationCache.store` call at most (a larger call
#: writes several shards).
SHARD_TOKENS = 1 << 17


def sequence_digest(ids: Sequence[int]) -> bytes:
    """The first 16 bytes of the SHA-256 of ``ids`` as little-endian int32."""
    raw = np.asarray(ids, dtype="<i4").tobytes()
    return hashlib.sha256(raw).digest()[:DIGEST_BYTES]


def frozen_fingerprint(modules: Sequence[nn.Module]) -> str:
    """SHA-256 (hex, first 16) of the names, shapes, dtypes and bytes of every parameter and
    buffer of ``modules``, in order: the identity of a model's frozen part."""
    h = hashlib.sha256(FORMAT.encode())
    for k, module in enumerate(modules):
        for name, tensor in [*module.named_parameters(), *module.named_buffers()]:
            data = tensor.detach().to("cpu").contiguous()
            h.update(f"{k}:{name}:{tuple(data.shape)}:{data.dtype}\n".encode())
            h.update(data.view(torch.uint8).numpy().tobytes() if data.numel() else b"")
    return h.hexdigest()[:16]


class ActivationCache:
    """The cached activations of one frozen part of a model, on disk and in memory.

    Args:
        identity: what makes the activations (JSON-able): the frozen part's fingerprint
            (:func:`frozen_fingerprint`), the number of layers below the cut.
        dim: their width.
        root: the cache dir (default: the workbench's).

    Attributes:
        folder: ``<root>/activations/<tag>``.
        problems: shards found damaged or foreign (and not read), one line each.
    """

    def __init__(
        self, identity: Mapping[str, object], dim: int, root: str | Path | None = None
    ) -> None:
        self.identity = {"format": FORMAT, "dim": int(dim), **identity}
        self.dim = int(dim)
        text = json.dumps(self.identity, sort_keys=True)
        self._identity_text = text
        base = Path(root) if root is not None else default_cache_dir()
        self.folder = base / "activations" / sha256_bytes(text)[:24]
        self.problems: list[str] = []
        self._shards: list[np.ndarray] = []
        self._where: dict[bytes, tuple[int, int, int]] = {}  # digest -> (shard, start, stop)
        self._read_shards()

    def __len__(self) -> int:
        return len(self._where)

    def _read_shards(self) -> None:
        if not self.folder.is_dir():
            return
        for path in sorted(self.folder.glob("*.npz")):
            if not path.is_file():
                continue
            try:  # the sizes its headers declare, before numpy allocates them
                check_npz(path, "the shard")
            except FileNotFoundError:
                continue
            except LimitError as exc:  # a limit set lower than the shard: kept, not damage
                self.problems.append(f"{path}: {exc}; it is kept, its sequences are computed "
                                     "again for this run")  # fmt: skip
                continue
            except DataError as exc:
                problem: str | None = f"is damaged ({exc})"
            else:
                problem = self._read_shard(path)
            if problem is not None:
                self.problems.append(f"{path}: {problem}; its sequences are computed again")
                try:
                    path.unlink()
                except OSError:
                    pass
        if self.problems:
            warnings.warn(
                "activation cache: " + "; ".join(self.problems), RuntimeWarning, stacklevel=3
            )

    def _read_shard(self, path: Path) -> str | None:
        """Read one shard into memory; a one-line problem when it must not be read."""
        try:
            with np.load(path, allow_pickle=False) as data:
                identity = str(data["identity"])
                if identity != self._identity_text:
                    return "written for another model or layer"
                digests, offsets = data["digests"], data["offsets"]
                hidden = data["hidden"]
        except (OSError, ValueError, KeyError, EOFError, zipfile.BadZipFile, MemoryError) as exc:
            return f"cannot be read ({exc or type(exc).__name__})"
        n = len(digests)
        if (
            digests.dtype != np.uint8
            or digests.shape != (n, DIGEST_BYTES)
            or offsets.shape != (n + 1,)
            or hidden.dtype != np.float16
            or hidden.ndim != 2
            or hidden.shape[1] != self.dim
            or offsets[0] != 0
            or offsets[-1] != hidden.shape[0]
            or bool(np.any(np.diff(offsets) <= 0))
        ):
            return "its arrays do not fit each other"
        if not bool(np.isfinite(hidden).all()):
            return "holds values that are not finite"
        k = len(self._shards)
        self._shards.append(hidden)
        for i in range(n):
            self._where[digests[i].tobytes()] = (k, int(offsets[i]), int(offsets[i + 1]))
        return None

    def lookup(self, sequences: Sequence[Sequence[int]]) -> tuple[list[np.ndarray | None], int]:
        """The cached activations of each sequence (``(len(seq), dim)`` float16, a view) or
        None where missing; and how many were found."""
        out: list[np.ndarray | None] = []
        for ids in sequences:
            where = self._where.get(sequence_digest(ids))
            if where is None or where[2] - where[1] != len(ids):
                out.append(None)
            else:
                k, a, b = where
                out.append(self._shards[k][a:b])
        return out, sum(x is not None for x in out)

    def get(self, ids: Sequence[int]) -> np.ndarray:
        """The cached activations of one sequence (KeyError when missing)."""
        found, _ = self.lookup([ids])
        if found[0] is None:
            raise KeyError("sequence not in the activation cache")
        return found[0]

    def store(self, sequences: Sequence[Sequence[int]], hidden: Sequence[np.ndarray]) -> None:
        """Add the activations ``hidden[i]`` ``(len(sequences[i]), dim)`` of each sequence:
        in memory, and on disk in shards of at most :data:`SHARD_TOKENS` tokens.

        Raises:
            ValueError: an array of another shape, or values that are not finite (they are
                never stored).
        """
        rows: list[tuple[bytes, np.ndarray]] = []
        seen: set[bytes] = set()
        for ids, states in zip(sequences, hidden, strict=True):
            states = np.asarray(states)
            if states.shape != (len(ids), self.dim):
                raise ValueError(
                    f"activations of shape {states.shape} for a sequence of {len(ids)} tokens "
                    f"(width {self.dim})"
                )
            if not bool(np.isfinite(states).all()):
                raise ValueError("activations that are not finite are never stored")
            digest = sequence_digest(ids)
            if digest not in self._where and digest not in seen:
                seen.add(digest)
                rows.append((digest, states.astype(np.float16)))
        start = 0
        while start < len(rows):
            stop, tokens = start + 1, len(rows[start][1])
            while stop < len(rows) and tokens + len(rows[stop][1]) <= SHARD_TOKENS:
                tokens += len(rows[stop][1])
                stop += 1
            self._add_shard(rows[start:stop])
            start = stop

    def _add_shard(self, rows: list[tuple[bytes, np.ndarray]]) -> None:
        digests = np.frombuffer(b"".join(d for d, _ in rows), np.uint8).reshape(-1, DIGEST_BYTES)
        lengths = [len(h) for _, h in rows]
        offsets = np.zeros(len(rows) + 1, dtype=np.int64)
        offsets[1:] = np.cumsum(lengths)
        hidden = np.concatenate([h for _, h in rows]).astype(np.float16)
        k = len(self._shards)
        self._shards.append(hidden)
        for i, (digest, _) in enumerate(rows):
            self._where[digest] = (k, int(offsets[i]), int(offsets[i + 1]))
        try:
            with atomic_path(self.folder / f"{uuid.uuid4().hex}.npz", suffix=".npz") as tmp:
                np.savez(
                    tmp,
                    digests=digests,
                    offsets=offsets,
                    hidden=hidden,
                    identity=np.array(self._identity_text),
                )
        except OutputError as exc:  # a read-only or full cache: kept in memory only
            warnings.warn(f"activation cache not written ({exc})", RuntimeWarning, stacklevel=3)
