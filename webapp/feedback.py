"""What a visitor sees of errors and long work: an error as a message, never a traceback, and a
progress bar while something computes.

User errors (:class:`~workbench.errors.WorkbenchError`) become ``st.error`` messages through
:func:`user_errors`; anything else is logged on the server with its traceback and shown as one
line.

A wait says what it waits for (:func:`waiting`): a spinner that shows once the work takes
more than half a second, with the time so far, naming the preload step that shares the machine
while the server is still preparing.

Example::

    with user_errors():
        result = with_progress("Encoding…", lambda progress: work(progress))
    with waiting("Measuring every layer…"):
        result = measure()
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Callable, Iterator

import streamlit as st

import webapp.startup
from webapp.text import plain
from workbench.errors import WorkbenchError

log = logging.getLogger("workbench.app")


@contextlib.contextmanager
def user_errors(where: object = None) -> Iterator[None]:
    """Show a raised error as a message instead of a traceback, then stop the page.

    ``WorkbenchError`` (the user's input) is shown as is; anything else is logged with its
    traceback on the server and shown as a one-line message.
    """
    area = where or st
    try:
        yield
    except WorkbenchError as exc:
        area.error(plain(exc), icon=":material/warning:")
        st.stop()
    except Exception as exc:  # noqa: BLE001 - the page must not show a traceback
        log.exception("unexpected error in the app")
        area.error(
            f"Something went wrong: {type(exc).__name__}: {plain(exc)}. "
            "Try other settings; the server log has the details.",
            icon=":material/error:",
        )
        st.stop()


def with_progress(text: str, work: Callable[[Callable[[float], None]], object]):
    """Run ``work(progress)`` under a progress bar that is removed afterwards."""
    bar = st.progress(0.0, text=text)
    try:
        return work(lambda fraction: bar.progress(min(max(float(fraction), 0.0), 1.0), text=text))
    finally:
        bar.empty()


def preload_note() -> str:
    """While the server's preload runs: a sentence naming the step it is on (it shares the
    machine's cores with every page, so answers are slower until it is done); else ""."""
    running = [s.name for s in webapp.startup.status() if s.state == "running"]
    if not running:
        return ""
    return (
        f" The server is still preparing {running[0]} (its start-up work), which slows this "
        "answer until it is done."
    )


def waiting(text: str) -> contextlib.AbstractContextManager[None]:
    """A spinner for work that may take a while: ``text`` says what it is, with the time so far
    and :func:`preload_note`; shown only once the work passes half a second (Streamlit's
    spinner delay), so a cached answer draws nothing."""
    return st.spinner(text + preload_note(), show_time=True)
