"""What a visitor sees of errors and long work: an error as a message, never a traceback, and a
progress bar while something computes.

User errors (:class:`~workbench.errors.WorkbenchError`) become ``st.error`` messages through
:func:`user_errors`; anything else is logged on the server with its traceback and shown as one
line.

Example::

    with user_errors():
        result = with_progress("Encoding…", lambda progress: work(progress))
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Callable, Iterator

import streamlit as st

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
