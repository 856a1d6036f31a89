"""A request to stop a training run at its next optimizer step, as a time limit would, so that a
run of hours stopped by hand keeps what it trained: the loop writes the checkpoint of the epoch
it cuts and raises ``KeyboardInterrupt``, and the same command with ``--resume`` goes on from
that step (:func:`workbench.finetune.training.loop.fit`, its ``stop`` argument).

The request is honoured only while optimizer steps run (:meth:`StopRequest.stepping`, which the
loop enters around each epoch's steps): :meth:`StopRequest.ask` answers False at any other
moment (loading, caching the frozen layers' outputs, the dev scoring, writing the model), and
its caller then stops the old way, at once. The command line asks on Ctrl-C or SIGTERM
(:mod:`workbench.cli.stop_signals`); any thread may ask (a button in a page).

Example::

    request = StopRequest()
    threading.Timer(600, request.ask).start()         # stop after ten minutes' training
    try:
        fit(task, source, train, dev, "runs/x", stop=request)
    except KeyboardInterrupt:
        ...                                          # runs/x/checkpoint: resume=True goes on
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager


class StopRequest:
    """Whether the run was asked to stop at its next optimizer step (:attr:`asked`), and
    whether steps are running now, so that asking can take effect (:meth:`stepping`)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._asked = False
        self._stepping = False

    @property
    def asked(self) -> bool:
        """True once :meth:`ask` was honoured."""
        return self._asked

    def ask(self) -> bool:
        """Ask the run to stop at its next optimizer step. Returns True when the request is
        taken (steps are running and none was asked before), False otherwise: the caller
        should then stop the run some other way (a second Ctrl-C interrupts at once)."""
        with self._lock:
            if not self._stepping or self._asked:
                return False
            self._asked = True
            return True

    @contextmanager
    def stepping(self) -> Iterator[None]:
        """While optimizer steps run (the loop's part): :meth:`ask` is honoured inside."""
        with self._lock:
            self._stepping = True
        try:
            yield
        finally:
            with self._lock:
                self._stepping = False
