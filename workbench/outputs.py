"""The output rule: what the workbench may write, replace or delete, decided in one place.

Every file and folder that a command or a library writer produces goes through this module:

* :func:`claim_file` checks an output file before any work: a usable name (not empty, not a
  directory, not a device), not one of the inputs, a place where a file can be created, and,
  when something is there already, a file the workbench wrote (below) or an explicit
  ``overwrite``. The check makes nothing, so a command refused later leaves no folder behind.
* :func:`output_file` writes one: to a temporary name beside it, checked again just before the
  rename (a file the user put there meanwhile is not replaced either), renamed into place
  (:func:`workbench.fileio.atomic_path`), then recorded in the folder's ledger.
* :func:`claim_directory` checks a folder that one output fills as a whole (a fine-tuning run,
  a sense index, Ray shards): absent, empty, or a workbench folder of that kind holding nothing
  the workbench did not write. :func:`mark_directory` makes a folder one; :func:`replace_directory`
  puts a complete new folder in place of the old one in one step.

**How the workbench recognises its own files.** Every folder it writes an output into holds a
ledger, ``.workbench-outputs.json`` (:data:`LEDGER`), listing what the workbench wrote there:
each file with its size and modification time (in nanoseconds) as they were right after the
rename, each sub-folder by name, and, for a folder that is itself one output, its kind. A file
is the workbench's when the ledger lists it with the size and time it still has: a file the
user made, copied over it or edited since is not, whatever its name or content, and it is
replaced only with ``overwrite``; a symbolic link is never the workbench's. A folder is a
workbench folder of a kind when its own ledger names that kind; an entry its ledger does not
list is the user's, and a folder holding one is never replaced or deleted, with or without
``overwrite``. A missing, damaged or foreign ledger recognises nothing: every doubt ends in a
refusal that names the file, never in a deletion. Costs: a ``stat`` and the read of one small
JSON file per output checked; one small atomic write per output written.

Writers in one folder take turns: the last check of a file, its rename and the ledger's update
happen under an exclusive lock on the folder (``flock``; where the system has none, the
ledger is read back after each update and an entry a concurrent writer dropped is written
again). The ledger itself is rewritten whole (a temporary file renamed over it). An entry
still lost only makes that file look foreign: the next run refuses it, never replaces it.

Example::

    out = claim_file("report.json", overwrite=False, inputs=[corpus_path])  # before any work
    ...
    with output_file(out) as tmp:
        tmp.write_text(text)
    # report.json is whole and recorded; a second run may replace it, a user's file never
"""

from __future__ import annotations

import ctypes
import json
import os
import stat
import warnings
from collections.abc import Callable, Collection, Iterable, Iterator
from contextlib import contextmanager, nullcontext
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

try:  # POSIX: writers of one folder take turns; elsewhere the ledger is read back instead
    import fcntl
except ImportError:  # pragma: no cover - Windows
    fcntl = None  # type: ignore[assignment]

from workbench.errors import OutputError
from workbench.fileio import (
    atomic_path,
    check_writable,
    is_temporary,
    remove_path,
    same_file,
    temporary_path,
)

#: The ledger's file name, in every folder the workbench writes an output into.
LEDGER = ".workbench-outputs.json"
#: The ledger's format tag; a file without it recognises nothing.
FORMAT = "workbench-outputs/1"
_MAX_LEDGER_BYTES = 16 << 20  # a bigger "ledger" is not read: it recognises nothing
_RECORD_TRIES = 4  # rewrites of a ledger whose entry a concurrent writer dropped

#: What :func:`claim_directory` found: nothing there, an empty folder, or a workbench folder of
#: the kind asked for.
DirectoryState = Literal["absent", "empty", "ours"]


@dataclass(frozen=True)
class Ledger:
    """What a folder's :data:`LEDGER` says.

    Attributes:
        kind: what the folder itself is when one output fills it (``"finetune-run"``,
            ``"sense-index"``, ``"shards"``), else None.
        entries: name -> ``{"size": bytes, "mtime_ns": ns}`` for a file the workbench wrote
            there, ``{"dir": True}`` for a sub-folder.
    """

    kind: str | None = None
    entries: dict[str, dict[str, int | bool]] = field(default_factory=dict)


def read_ledger(directory: str | os.PathLike[str]) -> Ledger:
    """The ledger of ``directory``; an empty one when it has none or it cannot be read as one
    (damaged, too large, another format, a link): such a folder holds nothing of the
    workbench's."""
    path = Path(directory) / LEDGER
    try:
        info = os.lstat(path)
        if not stat.S_ISREG(info.st_mode) or info.st_size > _MAX_LEDGER_BYTES:
            return Ledger()
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError, RecursionError):
        return Ledger()
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        return Ledger()
    kind, raw = data.get("kind"), data.get("entries")
    entries: dict[str, dict[str, int | bool]] = {}
    if isinstance(raw, dict):
        for name, entry in raw.items():
            if _valid_entry(name, entry):
                entries[name] = dict(entry)
    return Ledger(kind if isinstance(kind, str) else None, entries)


def _valid_entry(name: object, entry: object) -> bool:
    if not isinstance(name, str) or not name or "/" in name or name in (".", "..", LEDGER):
        return False
    if not isinstance(entry, dict):
        return False
    if entry.get("dir") is True:
        return True
    return all(isinstance(entry.get(k), int) for k in ("size", "mtime_ns"))


def _write_ledger(directory: Path, ledger: Ledger) -> None:
    data = {"format": FORMAT, "kind": ledger.kind, "entries": dict(sorted(ledger.entries.items()))}
    with atomic_path(directory / LEDGER) as tmp:
        tmp.write_text(json.dumps(data, indent=1) + "\n", encoding="utf-8")


def _entry(path: Path) -> dict[str, int | bool] | None:
    """The ledger entry of what is at ``path`` now (None: nothing, or a link)."""
    try:
        info = os.lstat(path)
    except OSError:
        return None
    if stat.S_ISDIR(info.st_mode):
        return {"dir": True}
    if stat.S_ISREG(info.st_mode):
        return {"size": info.st_size, "mtime_ns": info.st_mtime_ns}
    return None


@contextmanager
def folder_lock(directory: str | os.PathLike[str]) -> Iterator[None]:
    """Hold an exclusive lock on the folder ``directory`` (``flock`` on the folder itself, no
    file made), so that writers of one folder take turns at checking, renaming and recording;
    where the system has no ``flock`` (or the folder cannot be opened) nothing is held."""
    try:
        fd = os.open(directory, os.O_RDONLY) if fcntl is not None else None
    except OSError:
        fd = None
    if fd is None:
        yield
        return
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)  # releases the lock


def _update(
    directory: Path, change: Callable[[Ledger], Ledger], done: Callable[[Ledger], bool]
) -> None:
    """Apply ``change`` to ``directory``'s ledger until a read-back shows ``done`` (the first
    time, where writers hold :func:`folder_lock`)."""
    for _ in range(_RECORD_TRIES):
        _write_ledger(directory, change(read_ledger(directory)))
        if done(read_ledger(directory)):
            return


def record(*paths: str | os.PathLike[str], locked: bool = False) -> None:
    """Add what is at each of ``paths`` now (a file or a folder the workbench has just written)
    to the ledger of its folder; entries of files that are gone are dropped. ``locked``: the
    caller holds the folder's :func:`folder_lock` already. A ledger that cannot be written is
    a warning: the output is complete, a later run will only refuse to replace it."""
    by_folder: dict[Path, dict[str, dict[str, int | bool]]] = {}
    for p in paths:
        p = Path(p)
        entry = _entry(p)
        if entry is not None:
            by_folder.setdefault(p.parent, {})[p.name] = entry
    for folder, new in by_folder.items():

        def change(ledger: Ledger, new: dict = new, folder: Path = folder) -> Ledger:
            kept = {n: e for n, e in ledger.entries.items() if (folder / n).exists()}
            return Ledger(ledger.kind, {**kept, **new})

        def done(ledger: Ledger, new: dict = new) -> bool:
            return all(ledger.entries.get(n) == e for n, e in new.items())

        try:
            with nullcontext() if locked else folder_lock(folder):
                _update(folder, change, done)
        except OSError as exc:
            warnings.warn(
                f"{folder}: could not record the files the workbench wrote ({exc}); a later run "
                "will refuse to replace them without --overwrite",
                stacklevel=2,
            )


def written_by_workbench(path: str | os.PathLike[str]) -> bool:
    """Whether the file or folder at ``path`` is one the workbench wrote (see the module
    docstring): its folder's ledger lists it, a file with the size and modification time it
    has now."""
    path = Path(path)
    entry = _entry(path)
    if entry is None:
        return False
    return read_ledger(path.parent).entries.get(path.name) == entry


def _lstat(path: Path, option: str) -> os.stat_result | None:
    try:
        return os.lstat(path)
    except (FileNotFoundError, NotADirectoryError):  # check_writable names a file parent
        return None
    except OSError as exc:  # a loop or a file among the parents, no permission
        raise OutputError(f"cannot write {path}: {exc.strerror or exc}") from exc


def _name(path: str | os.PathLike[str], option: str) -> Path:
    text = os.fspath(path)
    if not text.strip():
        raise OutputError(f"{option} is empty: give a file name")
    if text.endswith(tuple(sep for sep in (os.sep, os.altsep) if sep)):
        raise OutputError(
            f"cannot write {text}: it ends with a path separator, so it names a directory; "
            "give a file name"
        )
    return Path(text)


def refuse_foreign(
    path: str | os.PathLike[str], overwrite: bool = False, *, locked: bool = False
) -> None:
    """Raise :class:`OutputError` when something the workbench did not write is at ``path``
    and ``overwrite`` is not given (a directory or a device is refused either way). The check
    holds the folder's :func:`folder_lock` (``locked``: the caller holds it already), so a
    concurrent writer's file is never seen between its rename and its ledger entry."""
    path = Path(path)
    if not locked:
        with folder_lock(path.parent):
            refuse_foreign(path, overwrite, locked=True)
        return
    info = _lstat(path, "")
    if info is None:
        return
    if stat.S_ISDIR(info.st_mode):
        raise OutputError(f"cannot write {path}: it is a directory")
    if not (stat.S_ISREG(info.st_mode) or stat.S_ISLNK(info.st_mode)):
        raise OutputError(f"cannot write {path}: it exists and is not a regular file")
    if overwrite or written_by_workbench(path):
        return
    what = "a symbolic link" if stat.S_ISLNK(info.st_mode) else "a file"
    raise OutputError(
        f"{path} exists and is {what} the workbench did not write (or one changed since it "
        "wrote it): it is not replaced; choose another name, or pass --overwrite "
        "(overwrite=True) to replace it"
    )


def claim_file(
    path: str | os.PathLike[str],
    *,
    overwrite: bool = False,
    inputs: Iterable[str | os.PathLike[str]] = (),
    option: str = "--out",
) -> Path:
    """``path`` as a :class:`Path`, once a file may be written there (checked before any work,
    nothing made).

    Args:
        path: the output file.
        overwrite: replace a file there that the workbench did not write.
        inputs: the command's input files; an output that is one of them is refused, even with
            ``overwrite``.
        option: how messages name the output (``--out``, ``--json``).

    Raises:
        OutputError: an empty name or one ending in a separator, a directory, a device, an
            input, a file the workbench did not write (without ``overwrite``), or a place where
            no file can be created.
    """
    path = _name(path, option)
    for source in inputs:
        source = Path(source)
        if same_file(path, source):
            raise OutputError(
                f"{option} {path} is the input {source}: it is not replaced; choose another name"
            )
    refuse_foreign(path, overwrite)
    check_writable(path)
    return path


def claim_files(
    paths: Iterable[str | os.PathLike[str]],
    *,
    overwrite: bool = False,
    inputs: Iterable[str | os.PathLike[str]] = (),
) -> list[Path]:
    """:func:`claim_file` for every output of one command, and none of them twice: two outputs
    naming one file (``--json`` and a report of ``--out``, a table and a figure) would have the
    second replace the first.

    Raises:
        OutputError: as :func:`claim_file`, or one file given for two outputs.
    """
    claimed: list[Path] = []
    sources = [Path(i) for i in inputs]
    for path in paths:
        path = claim_file(path, overwrite=overwrite, inputs=sources)
        if any(same_file(path, other) for other in claimed):
            raise OutputError(f"{path} is named for two outputs of this command: give each its own")
        claimed.append(path)
    return claimed


@contextmanager
def output_file(
    path: str | os.PathLike[str], *, overwrite: bool = False, suffix: str = ""
) -> Iterator[Path]:
    """Write the output file ``path``: yield a temporary path beside it; on success check
    ``path`` again (:func:`refuse_foreign`), rename the temporary over it and record it in the
    folder's ledger; on failure delete the temporary and leave ``path`` as it was. ``suffix``
    ends the temporary name (``np.savez`` adds ``.npz`` to a name without it).

    Raises:
        OutputError: as :func:`claim_file`, before anything is written and again before the
            rename.
    """
    path = _name(path, "the output name")
    refuse_foreign(path, overwrite)

    def commit(tmp: Path, target: Path) -> None:
        with folder_lock(target.parent):
            refuse_foreign(target, overwrite, locked=True)  # one made while this was written
            os.replace(tmp, target)
            record(target, locked=True)

    with atomic_path(path, suffix, commit) as tmp:
        yield tmp


# ---------------------------------------------------------------------- folders as one output


def directory_entries(directory: Path) -> list[str]:
    """The names in ``directory``, without its ledger and the workbench's temporaries."""
    try:
        names = os.listdir(directory)
    except OSError as exc:
        raise OutputError(f"cannot use {directory}: {exc.strerror or exc}") from exc
    return sorted(n for n in names if n != LEDGER and not is_temporary(n))


def foreign_entries(directory: str | os.PathLike[str]) -> list[str]:
    """The entries of ``directory`` that its ledger does not list (the user's)."""
    directory = Path(directory)
    listed = read_ledger(directory).entries
    return [n for n in directory_entries(directory) if n not in listed]


def directory_kind(directory: str | os.PathLike[str]) -> str | None:
    """The kind of workbench folder ``directory`` is (its ledger's), None for any other."""
    return read_ledger(directory).kind if Path(directory).is_dir() else None


def claim_directory(
    path: str | os.PathLike[str],
    kind: str,
    *,
    label: str = "",
) -> DirectoryState:
    """Check, before any work and making nothing, that one output of ``kind`` may fill the
    folder ``path``; say what is there.

    Args:
        path: the folder.
        kind: the folder kind (``"finetune-run"``, ``"sense-index"``, ``"shards"``).
        label: how messages name the kind (default: ``kind``, ``"sense index directory"``).

    Returns:
        ``"absent"``, ``"empty"`` or ``"ours"`` (a workbench folder of ``kind`` holding only
        what the workbench wrote: what to do with it is the caller's choice).

    Raises:
        OutputError: ``path`` is a file, cannot be read, or holds anything else.
    """
    path = Path(path)
    label = label or kind.replace("-", " ") + " directory"
    if _lstat(path, "") is None:
        return "absent"
    if not path.is_dir():
        raise OutputError(f"{path} exists and is not a directory: give a directory")
    names = directory_entries(path)
    if not names:
        return "empty"
    ledger = read_ledger(path)
    if ledger.kind != kind:  # the ledger decides, never the names or content of the files
        why = f" (no {LEDGER} in it lists them as its own)" if ledger.kind is None else ""
        raise OutputError(
            f"{path} is not empty and is not a workbench {label} (it holds {_some(names)}"
            f"){why}: choose a new or empty directory; nothing in it is changed"
        )
    foreign = [n for n in names if n not in ledger.entries]
    if foreign:
        raise OutputError(
            f"{path} is a workbench {label}, but it also holds {_some(foreign)}, which the "
            "workbench did not write: move those out or choose another directory; nothing in "
            "it is changed"
        )
    return "ours"


def _some(names: list[str]) -> str:
    return ", ".join(names[:3]) + (f" and {len(names) - 3} more" if len(names) > 3 else "")


def mark_directory(
    path: str | os.PathLike[str], kind: str, entries: Collection[str] | None = None
) -> None:
    """Make ``path`` (created if missing) a workbench folder of ``kind``: its ledger names the
    kind and lists ``entries`` (names inside it; None: everything in it now) as written by
    the workbench."""
    path = Path(path)
    path.mkdir(parents=True, exist_ok=True)
    names = directory_entries(path) if entries is None else list(entries)
    found = {n: e for n in names if (e := _entry(path / n)) is not None}

    def change(ledger: Ledger) -> Ledger:
        return Ledger(kind, {**ledger.entries, **found})

    def done(ledger: Ledger) -> bool:
        return ledger.kind == kind and all(ledger.entries.get(n) == e for n, e in found.items())

    with folder_lock(path):
        _update(path, change, done)


_RENAME_EXCHANGE = 2  # renameat2's flag: swap two paths in one step (Linux)
_AT_FDCWD = -100


def _exchange(a: Path, b: Path) -> bool:
    """Swap the paths ``a`` and ``b`` in one step where the system can (Linux ``renameat2``);
    False where it cannot."""
    try:
        renameat2 = ctypes.CDLL(None, use_errno=True).renameat2
    except (OSError, AttributeError, TypeError):
        return False
    result = renameat2(
        _AT_FDCWD, os.fsencode(a), _AT_FDCWD, os.fsencode(b), ctypes.c_uint(_RENAME_EXCHANGE)
    )
    return result == 0


def replace_directory(staged: str | os.PathLike[str], path: str | os.PathLike[str]) -> Path:
    """Put the complete folder ``staged`` (on the same file system, e.g. a
    :func:`~workbench.fileio.temporary_path` beside ``path``) at ``path`` and delete what was
    there. The two are swapped in one step where the system allows it (Linux); elsewhere the
    old folder is renamed aside first and back if the new one cannot take its place. Readers
    of ``path`` see the old folder or the new one, never a mix.

    Raises:
        OutputError: the rename failed; ``path`` is then as it was.
    """
    staged, path = Path(staged), Path(path)
    try:
        if not os.path.lexists(path):
            os.replace(staged, path)
            return path
        if _exchange(staged, path):
            remove_path(staged)  # now the old folder
            return path
        old = temporary_path(path, ".old")
        os.replace(path, old)
        try:
            os.replace(staged, path)
        except OSError:
            os.replace(old, path)
            raise
        remove_path(old)
    except OSError as exc:
        raise OutputError(
            f"cannot put the new {path.name} in place: {exc.strerror or exc}"
        ) from exc
    return path
