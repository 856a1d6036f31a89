"""Ctrl-C and SIGTERM during a training command: the first one, while optimizer steps run, asks
the run to stop at its next step and save its checkpoint
(:class:`~workbench.finetune.training.stopping.StopRequest`), so that hours of training are not
lost and ``--resume`` goes on from there; at any other moment (loading, caching, scoring), or a
second time, it interrupts at once as before (one line, exit code 130). A signal the caller
ignores (SIGINT in a background job) stays ignored.

Example::

    with stop_on_signals() as stop:
        finetune("wsd", train, dev, cfg, "runs/x", stop=stop)
"""

from __future__ import annotations

import signal
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from types import FrameType

from workbench.finetune.training.stopping import StopRequest

#: The signals that ask a training command to stop.
SIGNALS = (signal.SIGINT, signal.SIGTERM)


@contextmanager
def stop_on_signals() -> Iterator[StopRequest]:
    """Install the handlers for :data:`SIGNALS` (those not ignored) and yield the request they
    ask; the previous handlers are back on leaving."""
    request = StopRequest()

    def handle(signum: int, frame: FrameType | None) -> None:
        if not request.ask():
            raise KeyboardInterrupt
        again = "Ctrl-C" if signum == signal.SIGINT else "the same signal"
        print(
            "workbench: stopping at the next optimizer step to save a checkpoint "
            f"({again} again quits at once)",
            file=sys.stderr,
            flush=True,
        )

    previous = {}
    for number in SIGNALS:
        handler = signal.getsignal(number)
        if handler is signal.SIG_IGN:
            continue
        if handler is None:  # set from C: the interpreter's own after this
            handler = signal.default_int_handler if number == signal.SIGINT else signal.SIG_DFL
        previous[number] = handler
        signal.signal(number, handle)
    try:
        yield request
    finally:
        for number, handler in previous.items():
            signal.signal(number, handler)
