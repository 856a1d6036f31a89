"""Limits on outside content, in one place: numbers checked finite, sizes checked before
anything is allocated, special files skipped, and every wait given a deadline.

What a file, a cache, a model folder or a server gives the workbench is checked here before it
is used:

* :func:`check_finite` refuses an array holding NaN or an infinity (read in chunks, so a memory
  map is never copied whole);
* :func:`read_limited` reads a regular file of at most a number of bytes (a FIFO, a device or
  ``/dev/zero`` behind a link is refused without being opened for a blocking read);
  :func:`read_json` is the same for JSON, :func:`read_gzip` for a gzip file, inflated no
  further than the limit;
* :func:`check_npz` reads the headers of an ``.npz`` archive's arrays and refuses one whose
  declared size is more than its member holds, or whose members unpack past the limits, before
  ``numpy`` allocates anything; :func:`check_zip` does the same for any zip archive;
* :class:`Deadline` is a total time limit for a wait made of many reads.

The limits are :data:`LIMITS`, by name, each overridable by an environment variable
``WORKBENCH_LIMIT_<NAME>`` (``WORKBENCH_LIMIT_DOWNLOAD_SECONDS=7200``); :func:`limit` reads it.

Example::

    meta = read_json(entry / "meta.json", what="cache entry meta.json")
    check_finite(vectors, f"gloss cache shard {path}")      # DataError when NaN or inf
    deadline = Deadline("download_seconds", "the download of " + url)
    deadline.check()                                        # DataError once past it
"""

from __future__ import annotations

import errno
import json
import math
import os
import shutil
import stat
import time
import zipfile
import zlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from workbench.errors import DataError, LimitError, WorkbenchError


@dataclass(frozen=True)
class Limit:
    """One limit: its default and what it bounds."""

    default: float
    what: str


#: Every limit by name: overridable with ``WORKBENCH_LIMIT_<NAME>`` (e.g. ``_JSON_BYTES``).
LIMITS: dict[str, Limit] = {
    "json_bytes": Limit(64 << 20, "a JSON file read (meta.json, config.json, head.json, ...)"),
    "text_bytes": Limit(256 << 20, "a text file read whole (a word's occurrences in it)"),
    "archive_bytes": Limit(4 << 30, "all members of a downloaded zip archive, unpacked"),
    "archive_ratio": Limit(200, "unpacked size / packed size of one zip member"),
    "array_bytes": Limit(64 << 30, "one array of a .npz file (gloss shard, probe, index)"),
    "download_seconds": Limit(1800, "a whole download (data download, model fetch)"),
    "read_seconds": Limit(60, "one read of a network connection"),
    "query_seconds": Limit(10, "one query the app runs for a visitor (a map's selection)"),
    "model_layers": Limit(1024, "num_hidden_layers of a model's config.json"),
    "model_width": Limit(65536, "hidden_size / intermediate_size of a model's config.json"),
    "model_vocab": Limit(1 << 23, "vocab_size of a model's config.json"),
    "model_positions": Limit(1 << 20, "max_position_embeddings of a model's config.json"),
}


#: The most a limit set by a variable can be: a limit is a ceiling, never an allocation, and a
#: value past these (``1e25`` bytes, ``1e300`` seconds) means "no limit" without overflowing a
#: size or a socket's timeout.
CEILING = float(1 << 62)
CEILING_SECONDS = 1e7


def limit(name: str) -> float:
    """The limit ``name`` of :data:`LIMITS`: ``$WORKBENCH_LIMIT_<NAME>`` when set to a positive
    number (at most :data:`CEILING` bytes or :data:`CEILING_SECONDS`), else its default.

    Raises:
        WorkbenchError: the variable is set to something else than a positive number.
    """
    default = LIMITS[name].default
    text = os.environ.get(f"WORKBENCH_LIMIT_{name.upper()}")
    if text is None or not text.strip():
        return default
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not math.isfinite(value) or value <= 0:
        raise WorkbenchError(f"WORKBENCH_LIMIT_{name.upper()} must be a number > 0, not {text!r}")
    return min(value, CEILING_SECONDS if name.endswith("_seconds") else CEILING)


def _bytes(size: float) -> str:
    for unit, shift in (("GiB", 30), ("MiB", 20), ("KiB", 10)):
        if size >= 1 << shift:
            return f"{size / (1 << shift):.3g} {unit}"
    return f"{int(size)} bytes"


# --------------------------------------------------------------------------- memory


def memory_available() -> int | None:
    """Bytes of memory a new allocation can have now without swapping (Linux's
    ``MemAvailable`` of ``/proc/meminfo``); None where the system does not say."""
    try:
        with open("/proc/meminfo", encoding="ascii") as fh:
            for line in fh:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        return None
    return None


def check_allocation(nbytes: int, what: str) -> None:
    """Refuse an array of ``nbytes`` that the memory available now cannot hold, before it is
    allocated: ``numpy`` would raise ``MemoryError`` at once, or the system would kill the
    process while it fills the array.

    Raises:
        LimitError: naming ``what``, its size and the memory available.
    """
    available = memory_available()
    if available is not None and nbytes > available:
        raise LimitError(
            f"{what} would take {_bytes(nbytes)}, more than the {_bytes(available)} of memory "
            "available: keep fewer hidden states or a smaller dtype, or split the input"
        )


def check_disk(nbytes: int, folder: str | os.PathLike[str], what: str) -> None:
    """Refuse a file of ``nbytes`` that the free space of the disk holding ``folder`` cannot
    take, before it is made (a memory-mapped array fills it as it is written).

    Raises:
        LimitError: naming ``what``, its size and the space free.
    """
    try:
        free = shutil.disk_usage(folder).free
    except OSError:
        return
    if nbytes > free:
        raise LimitError(
            f"{what} would take {_bytes(nbytes)} on disk, more than the {_bytes(free)} free in "
            f"{folder}: keep fewer hidden states or a smaller dtype, or split the input"
        )


# --------------------------------------------------------------------------- finite numbers

_FINITE_CHUNK = 1 << 22  # elements checked at a time


def non_finite(array: np.ndarray) -> int:
    """How many elements of ``array`` are NaN or infinite (0 for integer and other arrays);
    read in chunks along the first axis, so a memory map is never copied whole."""
    array = np.asarray(array) if not isinstance(array, np.ndarray) else array
    if not np.issubdtype(array.dtype, np.inexact) or array.size == 0:
        return 0
    if array.ndim == 0:
        return int(not np.isfinite(array))
    per_row = max(1, array.size // max(len(array), 1))
    step = max(1, _FINITE_CHUNK // per_row)
    bad = 0
    for start in range(0, len(array), step):
        chunk = array[start : start + step]
        if not np.isfinite(chunk).all():
            bad += int(chunk.size - np.count_nonzero(np.isfinite(chunk)))
    return bad


def check_finite(
    array: np.ndarray, what: str, error: type[WorkbenchError] = DataError
) -> np.ndarray:
    """``array`` when every number in it is finite.

    Raises:
        error: ``{what} holds N non-finite numbers (NaN or infinity)``.
    """
    bad = non_finite(array)
    if bad:
        raise error(f"{what} holds {bad:,} non-finite number{'s' * (bad != 1)} (NaN or infinity)")
    return array


# --------------------------------------------------------------------------- sizes, files


def regular_problem(path: str | os.PathLike[str]) -> str | None:
    """Why ``path`` (through links) is not a regular file, in words completing
    ``f"{path} {problem}"``, or None for a regular file. Nothing is opened."""
    try:
        info = os.stat(path)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            return "is a symbolic link that leads round in a loop"
        return "does not exist" if exc.errno in (errno.ENOENT, errno.ENOTDIR) else str(exc)
    if stat.S_ISDIR(info.st_mode):
        return "is a directory, not a file"
    if not stat.S_ISREG(info.st_mode):
        return "is not a regular file (a device, a pipe or a socket)"
    return None


_BLOCK = 1 << 20  # bytes read at a time once a file grows past its stat size


def _limit_error(error: type[WorkbenchError]) -> type[WorkbenchError]:
    """The error for content past a limit: :class:`LimitError` where the caller asked for a
    :class:`DataError` (so that a cache keeps what a lowered limit refuses), else ``error``."""
    return LimitError if issubclass(LimitError, error) else error


def read_limited(
    path: str | os.PathLike[str],
    max_bytes: float | None = None,
    what: str = "",
    error: type[WorkbenchError] = DataError,
) -> bytes:
    """The bytes of the regular file ``path``, refused past ``max_bytes`` (default: the
    ``json_bytes`` limit). The file is opened without blocking and checked to be a regular file
    before anything is read (a FIFO or a device never hangs or floods the reader), and no more
    than the limit is ever read (a file that grows meanwhile is refused too).

    Raises:
        error: naming ``what`` (default: the path) and the reason; ``FileNotFoundError`` is
            raised as it is, for callers that treat a missing file apart.
    """
    name = what or str(path)
    cap = limit("json_bytes") if max_bytes is None else max_bytes
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    except FileNotFoundError:
        raise
    except OSError as exc:
        raise error(f"{name} cannot be read: {exc.strerror or exc}") from exc
    with os.fdopen(fd, "rb") as fh:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise error(f"{name} is not a regular file (a device, a pipe or a socket)")
        if info.st_size > cap:
            raise _limit_error(error)(
                f"{name} is {_bytes(info.st_size)}, over the limit of {_bytes(cap)}"
            )
        # the limit is a ceiling, never an allocation: the size stat gives, then blocks while
        # the file grows, never more than the limit and a block
        parts, total, most = [], 0, int(cap) + 1
        while total < most:
            block = fh.read(min(most - total, max(info.st_size + 1 - total, _BLOCK)))
            if not block:
                break
            parts.append(block)
            total += len(block)
        data = b"".join(parts)
    if len(data) > cap:
        raise error(f"{name} grew past the limit of {_bytes(cap)} while it was read")
    return data


def read_json(
    path: str | os.PathLike[str],
    what: str = "",
    max_bytes: float | None = None,
    error: type[WorkbenchError] = DataError,
) -> Any:
    """The JSON value of the regular file ``path`` (UTF-8, a BOM allowed), read by
    :func:`read_limited`.

    Raises:
        error: not a regular file, too large, not UTF-8 or not JSON (named).
    """
    data = read_limited(path, max_bytes, what, error)
    try:
        return json.loads(data.decode("utf-8-sig"))
    except (UnicodeDecodeError, ValueError, RecursionError) as exc:
        raise error(f"{what or path} is not valid JSON ({exc})") from exc


def read_gzip(
    path: str | os.PathLike[str],
    what: str = "",
    limit_name: str = "json_bytes",
    error: type[WorkbenchError] = DataError,
) -> bytes:
    """The inflated content of the gzip file ``path`` (one member, as :mod:`gzip` writes it):
    at most the limit ``limit_name`` of :data:`LIMITS` read from disk by :func:`read_limited`,
    and inflated no further than the same limit (a 3 MB file that would inflate to 3 GiB
    stops at the limit).

    Raises:
        error: naming ``what`` (default: the path): too large packed or inflated (a
            :class:`LimitError` where ``error`` is a :class:`DataError`), not gzip, truncated,
            or data past its end.
    """
    name = what or str(path)
    cap = limit(limit_name)
    packed = read_limited(path, cap, name, error)
    inflate = zlib.decompressobj(wbits=16 + zlib.MAX_WBITS)
    try:
        data = inflate.decompress(packed, int(cap) + 1)
    except zlib.error as exc:
        raise error(f"{name} is not valid gzip ({exc})") from exc
    if len(data) > cap:
        raise _limit_error(error)(
            f"{name} inflates past the limit of {_bytes(cap)} (a gzip bomb?); "
            f"WORKBENCH_LIMIT_{limit_name.upper()} sets it"
        )
    if not inflate.eof:
        raise error(f"{name} is truncated: its gzip stream ends early")
    if inflate.unused_data:
        raise error(f"{name} holds {len(inflate.unused_data)} bytes past its gzip stream")
    return data


def check_zip(
    archive: zipfile.ZipFile,
    name: str,
    max_total: float | None = None,
    max_ratio: float | None = None,
    error: type[WorkbenchError] = DataError,
) -> int:
    """The total unpacked size of ``archive``'s members, checked before any is unpacked: at
    most ``max_total`` in all (default: the ``archive_bytes`` limit), no member unpacking to
    more than ``max_ratio`` times its packed size (``archive_ratio``), no encrypted member.
    The sizes are the archive's own declarations; :func:`read_member` holds the unpacking to
    them.

    Raises:
        error: naming the archive and the member.
    """
    total_cap = limit("archive_bytes") if max_total is None else max_total
    ratio_cap = limit("archive_ratio") if max_ratio is None else max_ratio
    total = 0
    for info in archive.infolist():
        if info.flag_bits & 0x1:
            raise error(f"{name}: member {info.filename!r} is encrypted")
        packed = max(info.compress_size, 1)
        if info.file_size > 1024 and info.file_size > ratio_cap * packed:
            raise _limit_error(error)(
                f"{name}: member {info.filename!r} unpacks to {_bytes(info.file_size)} from "
                f"{_bytes(packed)} (more than {ratio_cap:g} times: a zip bomb?)"
            )
        total += info.file_size
        if total > total_cap:
            raise _limit_error(error)(
                f"{name} unpacks to more than the limit of {_bytes(total_cap)}"
            )
    return total


def copy_member(
    archive: zipfile.ZipFile,
    info: zipfile.ZipInfo,
    out: Any,
    name: str,
    error: type[WorkbenchError] = DataError,
) -> int:
    """Unpack ``info`` into the binary file ``out``, never more bytes than the archive declares
    for it (an archive that lies about a size is refused). Returns the bytes written."""
    done = 0
    with archive.open(info) as src:
        while block := src.read(1 << 20):
            done += len(block)
            if done > info.file_size:
                raise error(f"{name}: member {info.filename!r} unpacks past its declared size")
            out.write(block)
    return done


def extract_zip(
    archive: str | os.PathLike[str], target: Path, error: type[WorkbenchError] = DataError
) -> list[Path]:
    """Unpack the zip ``archive`` into ``target``, refusing absolute paths, ``..``, links,
    encrypted members and archives that unpack past the limits (:func:`check_zip`, before
    anything is unpacked; :func:`copy_member`, while). Returns the files written.

    Raises:
        error: not a zip archive, an unsafe member, a limit passed.
    """
    target = target.resolve()
    name = str(archive)
    written = []
    try:
        with zipfile.ZipFile(archive) as zf:
            check_zip(zf, name, error=error)
            for info in zf.infolist():
                path = (target / info.filename).resolve()
                mode = info.external_attr >> 16
                if not path.is_relative_to(target) or Path(info.filename).is_absolute():
                    raise error(f"{name}: unsafe member path {info.filename!r}")
                if stat.S_ISLNK(mode):
                    raise error(f"{name}: symbolic link member {info.filename!r}")
                if info.is_dir():
                    path.mkdir(parents=True, exist_ok=True)
                    continue
                path.parent.mkdir(parents=True, exist_ok=True)
                with open(path, "wb") as dst:
                    copy_member(zf, info, dst, name, error)
                written.append(path)
    except (zipfile.BadZipFile, zlib.error, EOFError, NotImplementedError) as exc:
        raise error(f"{name}: not a valid zip archive ({exc})") from exc
    except RuntimeError as exc:  # zipfile: an encrypted member, a bad password
        raise error(f"{name}: a member cannot be unpacked ({exc})") from exc
    return written


#: Bytes of a zip archive's own records beyond its members' (end records, a comment).
_ZIP_SLACK = 1 << 17


def _zip_span(archive: zipfile.ZipFile) -> int:
    """The most bytes a zip archive of these members can take: their packed data and, for
    each, its two headers (names, extra fields and comments twice, 30 + 46 bytes, a data
    descriptor and zip64 records), and :data:`_ZIP_SLACK` for the end records."""
    span = _ZIP_SLACK + len(archive.comment)
    for info in archive.infolist():
        named = len(info.filename.encode("utf-8")) + len(info.extra) + len(info.comment)
        span += info.compress_size + 2 * named + 256
    return span


def check_npz(
    path: str | os.PathLike[str], what: str = "", error: type[WorkbenchError] = DataError
) -> None:
    """Check an ``.npz`` file before ``numpy.load`` allocates its arrays, or anyone hashes it:
    a regular file whose size (from ``stat``) is within four times the ``array_bytes`` limit
    and no more than its members and their headers take (no bytes that belong to no array),
    each member's unpacked size within the zip limits (:func:`check_zip`), and each array's
    header declaring no more bytes than its member holds (nor than the ``array_bytes`` limit).

    Raises:
        error: naming ``what`` (default: the path) and the array.
    """
    name = what or str(path)
    problem = regular_problem(path)
    if problem == "does not exist":
        raise FileNotFoundError(errno.ENOENT, "no such file", str(path))
    if problem is not None:
        raise error(f"{name} {problem}")
    cap = limit("array_bytes")
    size = os.stat(path).st_size
    if size > cap * 4 + _ZIP_SLACK:  # from stat, before a byte is read
        raise _limit_error(error)(
            f"{name} is {_bytes(size)}, over the limit of {_bytes(cap * 4)} for an .npz file "
            "(WORKBENCH_LIMIT_ARRAY_BYTES sets it)"
        )
    try:
        with zipfile.ZipFile(path) as archive:
            check_zip(archive, name, max_total=cap * 4, error=error)
            extra = size - _zip_span(archive)
            if extra > 0:
                raise error(
                    f"{name} holds {_bytes(extra)} that belong to none of its arrays (numpy "
                    "writes none): not an .npz file as saved"
                )
            for info in archive.infolist():
                if not info.filename.endswith(".npy"):
                    continue
                with archive.open(info) as member:
                    version = np.lib.format.read_magic(member)
                    if version == (1, 0):
                        shape, _, dtype = np.lib.format.read_array_header_1_0(member)
                    else:
                        shape, _, dtype = np.lib.format.read_array_header_2_0(member)
                declared = math.prod(shape) * dtype.itemsize
                if dtype.hasobject:
                    raise error(f"{name}: array {info.filename!r} holds Python objects")
                if declared > info.file_size:
                    raise error(
                        f"{name}: array {info.filename!r} declares {_bytes(declared)} in a "
                        f"member of {_bytes(info.file_size)}"
                    )
                if declared > cap:
                    raise _limit_error(error)(
                        f"{name}: array {info.filename!r} of {_bytes(declared)} is over the "
                        f"limit of {_bytes(cap)} (WORKBENCH_LIMIT_ARRAY_BYTES sets it)"
                    )
    except LimitError:
        raise
    except (zipfile.BadZipFile, ValueError, EOFError, OSError) as exc:
        raise error(f"{name} is not a readable .npz archive ({exc})") from exc


# --------------------------------------------------------------------------- deadlines


class Deadline:
    """A total time limit for a wait made of many steps (a download's reads).

    Args:
        name: the limit of :data:`LIMITS` that gives the time allowed from now.
        what: what is waited for, for the message.
    """

    def __init__(self, name: str, what: str) -> None:
        self.name = name
        self.seconds = limit(name)
        self.what = what
        self.end = time.monotonic() + self.seconds

    def left(self) -> float:
        """Seconds left (0 once past)."""
        return max(0.0, self.end - time.monotonic())

    def check(self, error: type[WorkbenchError] = DataError) -> None:
        """Raise ``error`` once the deadline is past."""
        if time.monotonic() > self.end:
            raise error(
                f"{self.what} took longer than {self.seconds:g} s and was stopped "
                f"(WORKBENCH_LIMIT_{self.name.upper()} sets the limit)"
            )


def is_within(path: str | os.PathLike[str], root: str | os.PathLike[str]) -> bool:
    """Whether ``path``, every link followed, lies inside ``root`` (also followed)."""
    real, base = Path(os.path.realpath(path)), Path(os.path.realpath(root))
    return real == base or real.is_relative_to(base)
