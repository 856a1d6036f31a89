"""The app server's start: a lifespan that starts the preload (:mod:`webapp.preload`) in one
background thread, the record of how far it is, the route that reports it, and the in-page
message for a step that failed.

``app.py`` declares ``st.App`` with :func:`lifespan`: Streamlit's server runs it before it
accepts connections, and it only starts the thread, so the health check answers at once. This
module imports neither torch nor the library: the thread imports :mod:`webapp.preload` (torch,
the model code) while the server already answers and the browser loads the page. A step that
fails is recorded, logged, and shown as an in-page message by :func:`show_failures`; it never
stops the server, and the page that needs the resource tries again and reports its own error.

The server also answers ``GET /_workbench/preload`` with every step's state (JSON).

Example::

    app = st.App("app.py", lifespan=webapp.startup.lifespan, routes=webapp.startup.routes())
    webapp.startup.show_failures()                              # on a page
"""

from __future__ import annotations

import contextlib
import logging
import threading
import time
from collections.abc import AsyncIterator, Callable, Sequence
from dataclasses import asdict, dataclass
from typing import Any

import streamlit as st

log = logging.getLogger("workbench.app")
#: Streamlit warns of every cached call made outside a visitor's script run ("missing
#: ScriptRunContext"), which is what a preload is: those warnings say nothing here.
logging.getLogger("streamlit.runtime.scriptrunner_utils.script_run_context").setLevel(logging.ERROR)


@dataclass
class Step:
    """One thing loaded at server start, and how it went.

    Attributes:
        name: what it loads, in words ("the packaged model").
        state: ``waiting``, ``running``, ``done`` or ``failed``.
        seconds: how long it took (``done`` or ``failed``).
        error: the exception's one-line text when it failed.
    """

    name: str
    state: str = "waiting"
    seconds: float = 0.0
    error: str = ""


@st.cache_resource
def _status() -> tuple[list[Step], threading.Lock]:
    return [], threading.Lock()  # filled when the preload's steps are known (imported)


def run_steps(steps: Sequence[tuple[str, Callable[[], None]]] | None = None) -> list[Step]:
    """Run ``steps`` (by default :data:`webapp.preload.STEPS`, imported here) one after the
    other, recording each one's state; returns the record."""
    record, lock = _status()
    if steps is None:
        try:  # torch and the library: after the server answers
            from webapp.preload import STEPS
        except Exception as exc:  # noqa: BLE001 - shown on the page; the server lives on
            log.warning("the preload's code could not be imported", exc_info=True)
            with lock:
                record[:] = [
                    Step("the preload's code", "failed", 0.0, f"{type(exc).__name__}: {exc}")
                ]
            return record
        steps = STEPS
    with lock:
        record[:] = [Step(name) for name, _ in steps]
    for (name, work), step in zip(steps, record):
        with lock:
            step.state = "running"
        t = time.perf_counter()
        try:
            work()
        except Exception as exc:  # noqa: BLE001 - a failed step is shown on the page
            log.warning("preloading %s failed", name, exc_info=True)
            with lock:
                step.state, step.error = "failed", f"{type(exc).__name__}: {exc}"
        else:
            with lock:
                step.state = "done"
        step.seconds = time.perf_counter() - t
        log.info("preloaded %s in %.1f s", name, step.seconds)
    return record


@st.cache_resource
def start() -> threading.Thread:
    """Start :func:`run_steps` in a daemon thread, once per process; returns the thread."""
    thread = threading.Thread(target=run_steps, name="workbench-preload", daemon=True)
    thread.start()
    return thread


def status() -> list[Step]:
    """A copy of every step's state now."""
    record, lock = _status()
    with lock:
        return [Step(s.name, s.state, s.seconds, s.error) for s in record]


@contextlib.asynccontextmanager
async def lifespan(app: Any) -> AsyncIterator[dict[str, Any]]:
    """Streamlit's server lifespan: start the preload thread and return at once (the server
    accepts connections meanwhile). Nothing raised here can stop the server."""
    try:
        start()
    except Exception:  # noqa: BLE001 - the pages load what they need themselves
        log.exception("could not start preloading")
    yield {}


#: The server's route that tells how far the preload is (JSON; for a deployment's readiness
#: check and the tests): ``{"ready": bool, "steps": [{"name", "state", "seconds", "error"}]}``,
#: ``steps`` empty while the preload still imports torch and the library.
STATUS_PATH = "/_workbench/preload"


async def status_endpoint(request: Any) -> Any:
    """The JSON answer of :data:`STATUS_PATH`: ready once every step is done or failed (no
    steps yet: the preload is still importing what it needs, not ready)."""
    from starlette.responses import JSONResponse

    steps = status()
    ready = bool(steps) and all(s.state in ("done", "failed") for s in steps)
    return JSONResponse({"ready": ready, "steps": [asdict(s) for s in steps]})


def routes() -> list[Any]:
    """The server's own routes beside Streamlit's (:data:`STATUS_PATH`)."""
    from starlette.routing import Route

    return [Route(STATUS_PATH, status_endpoint)]


def show_failures() -> None:
    """An in-page warning for every step that failed at server start (the page goes on)."""
    failed = [s for s in status() if s.state == "failed"]
    for step in failed:
        st.warning(
            f"The server could not load {step.name} when it started ({step.error[:300]}). "
            "This page tries again when it needs it.",
            icon=":material/warning:",
        )
