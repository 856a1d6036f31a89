"""A large file's SHA-256, remembered across processes by the file's identity on disk.

A model's weights (90 MB for MiniLM, 420 MB for mpnet) and its export are hashed to identify and
check them; reading them whole on every start costs a good part of a first answer. The digest of
a file is kept in ``<memo>/<hash of its real path>.json`` with the file's device, inode, size,
modification and change times (``st_ctime_ns`` changes on every write and cannot be set back by a
user), as git's index does; a file whose identity differs in any of them is hashed again. A memo
that cannot be read or written is ignored: the file is hashed.

Example::

    digest = file_sha256(path, cache_dir / "digests")   # hashed once, then read from the memo
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from workbench.fileio import atomic_path, sha256_bytes, sha256_file

#: Files smaller than this are hashed every time (reading a memo costs as much).
MEMO_FROM_BYTES = 1 << 20


def identity(stat: os.stat_result) -> list[int]:
    """What identifies a file's content on disk without reading it."""
    return [stat.st_dev, stat.st_ino, stat.st_size, stat.st_mtime_ns, stat.st_ctime_ns]


def file_sha256(path: str | os.PathLike[str], memo: Path | None) -> str:
    """The hex SHA-256 of ``path``'s bytes, from ``memo`` (a folder) when it remembers this very
    file, else hashed now and remembered there (``memo`` None: always hashed)."""
    real = Path(path).resolve()
    stat = real.stat()
    if memo is None or stat.st_size < MEMO_FROM_BYTES:
        return sha256_file(real)
    note = memo / f"{sha256_bytes(str(real))[:32]}.json"
    try:
        data = json.loads(note.read_text(encoding="utf-8"))
        if data.get("identity") == identity(stat) and isinstance(data.get("sha256"), str):
            return str(data["sha256"])
    except (OSError, ValueError, AttributeError):
        pass
    digest = sha256_file(real)
    if identity(real.stat()) == identity(stat):  # not changed while it was read
        try:
            with atomic_path(note) as tmp:
                tmp.write_text(json.dumps({"identity": identity(stat), "sha256": digest}))
        except OSError:
            pass  # an unwritable cache: hashed again next time
    return digest
