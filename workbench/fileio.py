"""Files written whole or not at all, and the SHA-256 digests that identify files and corpora.

:func:`atomic_path` writes to a temporary name beside the target, then renames it over the final
path in one step (``os.replace`` is atomic on POSIX and Windows), so readers never see a file
half-written. The ``sha256_*`` helpers are the project's one way to hash content: a file's
bytes, a set of files, a JSON-able object, the words of a corpus; every digest is 64 hex digits.

Example::

    with atomic_path("out/keys.txt") as tmp:
        tmp.write_text("d000.s000.t000 bank%1:14:00::\\n")
    # out/keys.txt now holds the whole text; on an exception it is untouched
    sha256_file("out/keys.txt")          # 64 hex digits of its bytes
    sha256_files(["out/keys.txt"])       # another digest: a set of files hashes names too
"""

from __future__ import annotations

import hashlib
import json
import os
import uuid
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import IO, Any

_CHUNK = 1 << 20  # bytes read at a time while hashing


@contextmanager
def atomic_path(path: str | os.PathLike[str], suffix: str = "") -> Iterator[Path]:
    """Yield a temporary path in ``path``'s directory; on success rename it over ``path``,
    on failure delete it. ``suffix`` ends the temporary name (``np.savez`` adds ``.npz`` to
    names without it, ``np.save`` ``.npy``)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.{uuid.uuid4().hex[:8]}.tmp{suffix}")
    try:
        yield tmp
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def sha256_stream(fh: IO[bytes], chunk: int = _CHUNK) -> str:
    """Hex SHA-256 of everything left to read in a binary stream (read ``chunk`` bytes at a
    time), e.g. ``lzma.open(path, "rb")`` to hash a compressed file's content."""
    digest = hashlib.sha256()
    while block := fh.read(chunk):
        digest.update(block)
    return digest.hexdigest()


def sha256_file(path: str | os.PathLike[str], chunk: int = _CHUNK) -> str:
    """Hex SHA-256 of a file's bytes as stored (compressed for ``.xz``), read in chunks."""
    with open(path, "rb") as fh:
        return sha256_stream(fh, chunk)


def sha256_files(paths: Iterable[str | os.PathLike[str]]) -> str:
    """One digest over several files, in the given order: SHA-256 of the lines
    ``<file name>\\0<its sha256_file>\\n`` (names without their directory)."""
    digest = hashlib.sha256()
    for path in paths:
        digest.update(f"{Path(path).name}\0{sha256_file(path)}\n".encode())
    return digest.hexdigest()


def sha256_json(obj: Any) -> str:
    """SHA-256 of an object's canonical JSON (sorted keys, UTF-8, sets and tuples as lists):
    the digest of in-memory data such as a built-in dataset."""
    text = json.dumps(obj, sort_keys=True, ensure_ascii=False, default=list)
    return hashlib.sha256(text.encode()).hexdigest()


def sha256_words(
    words: Sequence[Sequence[str]], keep: Sequence[Sequence[int]] | None = None
) -> str:
    """SHA-256 of a corpus as the encoder sees it: its sentences of words (``\\x1f`` between
    words, ``\\x1e`` after each sentence) and, when given, the kept word positions per sentence.

    Example:
        >>> sha256_words([["A", "bank", "."]]) == sha256_words([["A", "bank."]])
        False
    """
    digest = hashlib.sha256()
    for sentence in words:
        digest.update("\x1f".join(sentence).encode("utf-8", "surrogatepass"))
        digest.update(b"\x1e")
    if keep is not None:
        digest.update(b"keep")
        for positions in keep:
            digest.update(",".join(str(int(p)) for p in positions).encode())
            digest.update(b"\x1e")
    return digest.hexdigest()
