"""The ``workbench`` script's first code (and ``python -m workbench``'s): Ctrl-C is one line and
exit code 130 from the first moment, while the command line and the command's libraries are
still being imported (:mod:`workbench.cli.main` imports numpy; a command, torch), not only once
a command runs. This module imports nothing of the project's: :func:`entry` imports the command
line only inside its handler.

Example::

    [project.scripts]
    workbench = "workbench.cli.entry:entry"
"""

from __future__ import annotations

import ctypes
import importlib
import os
import signal
import sys
from types import FrameType

#: The exit code of a command stopped by Ctrl-C (128 + SIGINT, as a shell reports it).
INTERRUPTED = 130


def interrupted() -> int:
    """Say that the command was interrupted, in one line; return :data:`INTERRUPTED`.

    The interpreter also keeps its own record of a ``KeyboardInterrupt`` that left code run
    through ``PyRun_String`` (a C extension's import can run such code), and at the end of
    ``python -m workbench`` it kills the process with SIGINT when that record is set, whatever
    exit code it was given (-2 instead of 130). Running an empty string through the same C
    function clears the record: the interrupt has been handled here."""
    print("workbench: interrupted", file=sys.stderr)
    run_string = ctypes.pythonapi.PyRun_SimpleStringFlags
    run_string.argtypes = (ctypes.c_char_p, ctypes.c_void_p)
    run_string.restype = ctypes.c_int
    run_string(b"", None)
    return INTERRUPTED


def _stop_now(signum: int, frame: FrameType | None) -> None:
    """Ctrl-C while the command line is imported: nothing is open or written yet, so stop at
    once (an exception here could land in any module's import and show its traceback)."""
    os._exit(interrupted())


def entry() -> int:
    """Run the command line (``workbench.cli.main.main``), imported here; Ctrl-C at any moment
    of it, its imports included, gives one line and :data:`INTERRUPTED` (while the command line
    is imported, at once; then as ``KeyboardInterrupt``, so that a command cleans up). A Ctrl-C
    the caller ignores (a background job) stays ignored."""
    previous = signal.getsignal(signal.SIGINT)
    if previous is None:  # a handler not set from Python: the interpreter's own after this
        previous = signal.default_int_handler
    if previous is not signal.SIG_IGN:
        signal.signal(signal.SIGINT, _stop_now)
    try:
        main = importlib.import_module("workbench.cli.main").main
        signal.signal(signal.SIGINT, previous)
        return int(main())
    except KeyboardInterrupt:
        return interrupted()
    finally:
        signal.signal(signal.SIGINT, previous)
