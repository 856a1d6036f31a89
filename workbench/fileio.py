"""Files written whole or not at all, and the SHA-256 digests that identify files and corpora.

:func:`atomic_path` writes to a temporary name beside the target, then renames it over the final
path in one step (``os.replace`` is atomic on POSIX and Windows), so readers never see a file
half-written. Temporary names are unique per writer (:func:`temporary_path`: host, process id
and a random token), so two processes writing one target never share one; what a killed writer
leaves behind is found by :func:`stale_temporaries` (its process is gone) and removed by
:func:`remove_stale_temporaries`. :func:`check_writable` refuses an output before any work,
:func:`input_problem` says what is wrong with an input path (a loop, a directory, nothing), and
:func:`real_path` follows links without failing on a loop, and :func:`named_path` turns a name
given from outside (a user, an upload, a file's listing) into a path that stays inside its
folder; what the workbench may replace is decided in :mod:`workbench.outputs`.
The ``sha256_*`` helpers are the project's one way to hash content: a file's bytes, a set of
files, a JSON-able object, the words of a corpus; every digest is 64 hex digits.

Example::

    with atomic_path("out/keys.txt") as tmp:
        tmp.write_text("d000.s000.t000 bank%1:14:00::\\n")
    # out/keys.txt now holds the whole text; on an exception it is untouched
    sha256_file("out/keys.txt")          # 64 hex digits of its bytes
    sha256_files(["out/keys.txt"])       # another digest: a set of files hashes names too
"""

from __future__ import annotations

import errno
import hashlib
import json
import os
import re
import shutil
import signal
import socket
import stat
import uuid
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import IO, Any

from workbench.errors import InputError, OutputError, WorkbenchError

_CHUNK = 1 << 20  # bytes read at a time while hashing
#: This machine's name as temporary names spell it (letters, digits, underscores).
HOST = re.sub(r"[^A-Za-z0-9]", "_", socket.gethostname()) or "host"
# .<target name>.<host>-<pid>-<8 hex>.tmp<suffix>: what temporary_path makes
_TEMPORARY = re.compile(
    r"^\.(?P<name>.+)\.(?P<host>[A-Za-z0-9_]+)-(?P<pid>\d+)-[0-9a-f]{8}\.tmp(?P<suffix>.*)$"
)


def temporary_path(path: str | os.PathLike[str], suffix: str = "") -> Path:
    """A fresh temporary name beside ``path``, unique to this writer:
    ``.<name>.<host>-<pid>-<random>.tmp<suffix>`` (a file or a directory)."""
    path = Path(path)
    token = uuid.uuid4().hex[:8]
    return path.with_name(f".{path.name}.{HOST}-{os.getpid()}-{token}.tmp{suffix}")


def writer_alive(host: str, pid: int) -> bool:
    """Whether the process ``pid`` of machine ``host`` (as :func:`temporary_path` spells it) may
    still be writing: True for another machine, or a live (or unknown) process here."""
    if host != HOST or os.name == "nt":
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # e.g. another user's process: alive
        return True
    return True


def stale_temporaries(
    directory: str | os.PathLike[str], names: Iterable[str] | None = None
) -> list[Path]:
    """Temporaries in ``directory`` (files or directories named by :func:`temporary_path`) whose
    writer on this machine is gone, only those of the targets ``names`` when given."""
    directory = Path(directory)
    wanted = None if names is None else set(names)
    try:
        entries = list(directory.iterdir())
    except OSError:
        return []
    stale = []
    for entry in entries:
        match = _TEMPORARY.match(entry.name)
        if match is None or (wanted is not None and match["name"] not in wanted):
            continue
        if not writer_alive(match["host"], int(match["pid"])):
            stale.append(entry)
    return sorted(stale)


def remove_stale_temporaries(
    directory: str | os.PathLike[str], names: Iterable[str] | None = None
) -> list[Path]:
    """Delete :func:`stale_temporaries` (files and directories); returns what was removed."""
    return [path for path in stale_temporaries(directory, names) if remove_path(path)]


def remove_path(path: Path) -> bool:
    """Delete ``path`` whatever it is (directory, file, link); ``True`` when nothing is left."""
    try:
        if path.is_symlink() or not path.is_dir():
            path.unlink(missing_ok=True)
        else:
            shutil.rmtree(path)
    except OSError:
        pass
    return not path.exists() and not path.is_symlink()


def check_writable(path: str | os.PathLike[str]) -> Path:
    """``path`` as a :class:`Path` if a file can be written there, checked before any work and
    without leaving anything behind: an empty probe file is created in the nearest directory
    of ``path`` that exists and removed; missing directories are not made here (the writer
    makes them with the file), so a command refused later leaves no empty folder.

    Raises:
        OutputError: naming the path and the reason (``path`` is a directory, a part of it is a
            file or a symbolic-link loop, or files cannot be created in its nearest directory).
    """
    path = Path(path)
    if path.is_dir():
        raise OutputError(f"cannot write {path}: it is a directory")
    existing = path.parent
    try:
        while not existing.is_dir():
            if existing.exists() or existing.is_symlink():
                why = "a file" if existing.exists() else "a symbolic link that leads nowhere"
                raise OutputError(f"cannot write {path}: {existing} is {why}, not a directory")
            if existing.parent == existing:
                break
            existing = existing.parent
        probe = temporary_path(existing / path.name, ".probe")
        os.close(os.open(probe, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o600))
        probe.unlink()
    except OutputError:
        raise
    except OSError as exc:
        raise OutputError(f"cannot write {path}: {exc.strerror or exc}") from exc
    return path


def is_temporary(name: str) -> bool:
    """Whether ``name`` is a temporary name :func:`temporary_path` makes (a writer's file or
    folder on its way to its final name)."""
    return _TEMPORARY.match(name) is not None


def real_path(path: str | os.PathLike[str]) -> Path:
    """The absolute path with every symbolic link followed, as far as it can be: a link that
    leads nowhere (a loop, a missing target) is left as it is, never an error (unlike
    ``Path.resolve``, which raises ``RuntimeError`` on a loop)."""
    return Path(os.path.realpath(os.fspath(path)))


def same_file(a: str | os.PathLike[str], b: str | os.PathLike[str]) -> bool:
    """Whether ``a`` and ``b`` name one file (through links, hard links included); paths that
    do not exist are compared by :func:`real_path`."""
    try:
        return os.path.samefile(a, b)
    except OSError:
        return real_path(a) == real_path(b)


def input_problem(path: str | os.PathLike[str]) -> str | None:
    """What keeps ``path`` from being read as an input file, in words that complete
    ``f"{path} {problem}"``, or None for a readable regular file.

    The words say what is there: nothing, a symbolic link that leads nowhere (a loop or a
    missing target), a directory, something that is not a regular file (a device, a pipe), or
    a file this process may not read.
    """
    path = Path(path)
    try:
        info = os.stat(path)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            return "is a symbolic link that leads round in a loop"
        if path.is_symlink():
            return "is a symbolic link whose target does not exist"
        if exc.errno in (errno.ENOENT, errno.ENOTDIR):
            return "does not exist"
        return f"cannot be read: {exc.strerror or exc}"
    if stat.S_ISDIR(info.st_mode):
        return "is a directory, not a file"
    if not stat.S_ISREG(info.st_mode):
        return "is not a regular file (a device, a pipe or a socket)"
    if not os.access(path, os.R_OK):
        return "cannot be read: permission denied"
    return None


def expand_home(text: str, what: str = "the path") -> str:
    """``text`` with a leading ``~`` or ``~user`` replaced by that home folder, as a shell
    would; other text as given.

    Raises:
        InputError: ``~user`` names no user of this system (``os.path.expanduser`` would leave
            the path as it is, a folder named ``~user`` in the current one; ``Path.expanduser``
            raises ``RuntimeError``), or no home is known; the message names ``what``.

    Example: ``expand_home("~/runs") == "/home/me/runs"``; ``expand_home("~nouser/x")``
    raises "no such user 'nouser'".
    """
    if not text.startswith("~"):
        return text
    expanded = os.path.expanduser(text)
    if expanded.startswith("~"):  # expanduser leaves a path it cannot expand as it is
        user = text[1:].replace(os.sep, "/").split("/", 1)[0]
        problem = f"no such user {user!r}" if user else "no home folder is known here"
        raise InputError(f"{what} {text!r} starts with ~{user}: {problem}; give the folder itself")
    return expanded


def named_path(
    folder: str | os.PathLike[str],
    name: str,
    what: str = "name",
    nested: bool = False,
    error: type[WorkbenchError] = InputError,
) -> Path:
    """``folder / name`` for a ``name`` that came from outside (a user's word, an uploaded
    file's name, a line of a listing), refused unless it stays inside ``folder``: no empty
    name, no NUL, no absolute path or drive, no ``..`` part, no separator unless ``nested``
    (then a relative path below ``folder``), and the path with every link followed still
    inside ``folder`` with every link followed.

    Example::

        named_path("data/demo", "bank.tsv")          # data/demo/bank.tsv
        named_path("data/demo", "../../etc/passwd")  # InputError: not a plain name

    Raises:
        error: naming ``what`` and ``name``.
    """
    text = str(name)
    parts = re.split(r"[/\\]", text)
    plain = bool(text.strip()) and "\x00" not in text and not os.path.isabs(text)
    plain = plain and not os.path.splitdrive(text)[0] and ".." not in parts and text != "."
    if not plain or (len(parts) > 1 and not nested):
        kind = "a relative path inside" if nested else "a plain name (no folders) in"
        raise error(f"{what} {name!r} is not {kind} {folder}")
    path = Path(folder) / text
    base = os.path.realpath(folder)
    real = os.path.realpath(path)
    if real != base and not real.startswith(base.rstrip(os.sep) + os.sep):
        raise error(f"{what} {name!r} leads outside {folder} (to {real})")
    return path


def fault_point(name: str) -> None:
    """A place where tests kill a writer: ``SIGKILL`` this process here when
    ``$WORKBENCH_KILL_AT`` is ``name`` (or ``name#N``: at the N-th time it is reached).

    Writers call it between writing a temporary and renaming it (``atomic:<file name>``,
    ``cache:commit``), so a test can show that the next run finds the complete result or
    recomputes it. Without the variable it costs one dictionary lookup.
    """
    wanted = os.environ.get("WORKBENCH_KILL_AT")
    if not wanted:
        return
    point, _, count = wanted.partition("#")
    if point != name:
        return
    _FAULT_HITS[name] = _FAULT_HITS.get(name, 0) + 1
    if _FAULT_HITS[name] >= int(count or 1):
        os.kill(os.getpid(), getattr(signal, "SIGKILL", signal.SIGTERM))


_FAULT_HITS: dict[str, int] = {}  # how often each fault point was reached in this process


@contextmanager
def atomic_path(
    path: str | os.PathLike[str],
    suffix: str = "",
    commit: Callable[[Path, Path], None] | None = None,
) -> Iterator[Path]:
    """Yield a temporary path in ``path``'s directory; on success rename it over ``path``,
    on failure delete it. ``suffix`` ends the temporary name (``np.savez`` adds ``.npz`` to
    names without it, ``np.save`` ``.npy``). ``commit(tmp, path)``, when given, does the
    rename instead (with checks of its own around it: :func:`workbench.outputs.output_file`).

    Raises:
        OutputError: the directory cannot be made, or the temporary file cannot be written or
            renamed (a read-only place, a full disk); the target is then untouched.
    """
    path = Path(path)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise OutputError(f"cannot write {path}: {exc.strerror or exc}") from exc
    tmp = temporary_path(path, suffix)
    try:
        yield tmp
        fault_point(f"atomic:{path.name}")
        if commit is None:
            os.replace(tmp, path)
        else:
            commit(tmp, path)
    except BaseException as exc:
        try:
            tmp.unlink(missing_ok=True)
        except OSError:
            pass
        own = (None, os.fspath(tmp), os.fspath(path))
        if isinstance(exc, OSError) and not isinstance(exc, OutputError) and exc.filename in own:
            raise OutputError(f"cannot write {path}: {exc.strerror or exc}") from exc
        raise


def sha256_bytes(data: bytes | str) -> str:
    """Hex SHA-256 of bytes, or of a string's UTF-8 encoding (keys, tags and table texts).

    Example:
        >>> sha256_bytes("abc") == sha256_bytes(b"abc")
        True
    """
    return hashlib.sha256(data.encode("utf-8") if isinstance(data, str) else data).hexdigest()


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
    return sha256_bytes(json.dumps(obj, sort_keys=True, ensure_ascii=False, default=list))


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
