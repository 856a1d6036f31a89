"""The app server's start: a lifespan that starts the preload in one background thread, the
record of how far it is, the route that reports it, and the in-page message for a step that
failed.

``app.py`` declares ``st.App`` with :func:`lifespan` of its preload :data:`Plan` (a function
that imports :mod:`webapp.preload` and returns its steps): Streamlit's server runs the lifespan
before it accepts connections, and it only starts the thread, so the health check answers at
once. This module imports neither torch nor the library, nor the preload: the thread calls the
plan (the library, the model code imported then) while the server already answers and the
browser loads the page. The
steps a first page does not need stand aside while a visitor's page runs, and for the first
seconds until a first visitor's page is drawn (:func:`yield_to_visitors`; ``app.py`` marks each
run with :func:`visitor_run`), so the first chart does not share two cores with them. A step that
fails is recorded, logged, and shown as an in-page message by :func:`show_failures`; it never
stops the server, and the page that needs the resource tries again and reports its own error.

The server also answers ``GET /_workbench/preload`` with every step's state (JSON).

Example::

    app = st.App("app.py", lifespan=webapp.startup.lifespan(plan), routes=webapp.startup.routes())
    webapp.startup.show_failures()                              # on a page
"""

from __future__ import annotations

import contextlib
import logging
import threading
import time
from collections.abc import AsyncIterator, Callable, Iterator, Sequence
from contextlib import AbstractAsyncContextManager
from dataclasses import asdict, dataclass
from typing import Any

import streamlit as st

log = logging.getLogger("workbench.app")
#: Streamlit warns of every cached call made outside a visitor's script run ("missing
#: ScriptRunContext"), which is what a preload is: those warnings say nothing here.
logging.getLogger("streamlit.runtime.scriptrunner_utils.script_run_context").setLevel(logging.ERROR)


#: The preload's steps: each a name (what it loads, in words) and a function of no argument.
Steps = Sequence[tuple[str, Callable[[], None]]]
#: What the preload runs, called in its thread (it imports the library): its steps, and the
#: index of the first step that stands aside for visitors (None: none does).
Plan = Callable[[], tuple[Steps, int | None]]


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


class Visits:
    """The visitors' script runs under way, so the preload can stand aside while one runs.

    Attributes:
        active: how many script runs are under way now.
        finished: set once a first script run has ended.
        first_end: when the first script run ended (``time.monotonic``), None before.
        condition: guards ``active``; notified when a run ends.
    """

    def __init__(self) -> None:
        self.active = 0
        self.finished = threading.Event()
        self.first_end: float | None = None
        self.condition = threading.Condition()


@st.cache_resource
def visits_now() -> Visits:
    """This server's record of visitors' runs (one per process)."""
    return Visits()


def whole_pandas() -> None:
    """Import pandas in this thread, waiting for another thread's import of it to finish.

    plotly looks pandas up in ``sys.modules`` without importing it
    (``_plotly_utils.optional_imports.get_module("pandas", should_load=False)``), so a figure
    built while another thread is still importing pandas meets the half-made module and fails
    ("partially initialized module 'pandas' has no attribute 'Series'"). An ``import``
    statement waits for that other import instead; every thread of the server that builds
    figures (each visitor's run, the preload) calls this first."""
    import pandas  # noqa: F401


@contextlib.contextmanager
def visitor_run() -> Iterator[None]:
    """Mark one visitor's script run (``app.py`` and every fragment wrap each run in it): the
    preload's later steps wait while runs are under way (:func:`yield_to_visitors`). pandas is
    whole in the run's thread first (:func:`whole_pandas`)."""
    whole_pandas()
    visits = visits_now()
    with visits.condition:
        visits.active += 1
    try:
        yield
    finally:
        with visits.condition:
            visits.active -= 1
            if visits.first_end is None:
                visits.first_end = time.monotonic()
            visits.finished.set()
            visits.condition.notify_all()


#: A step that meets a package half imported by a visitor's page (Python's per-module import
#: locks can then raise ImportError in one of the two threads) is run once more this long after.
IMPORT_RETRY_SECONDS = 0.5
#: Seconds after the preload starts within which a first visitor is expected (a browser opened
#: with the server): until then, and while a visitor's run is under way, the steps a first
#: page does not need wait.
FIRST_VISIT_SECONDS = 2.0
#: Seconds after a first visitor's run ends during which the later steps still wait: the run has
#: sent the page, and the browser is fetching plotly's code and drawing the first chart, which
#: the preload's next step (Geometry's table, on both cores) would slow.
FIRST_DRAW_SECONDS = 2.0
#: The longest one later step waits for visitors' runs to end (every wait has a deadline).
MAX_YIELD_SECONDS = 15.0


def yield_to_visitors(started: float, clock: Callable[[], float] = time.monotonic) -> float:
    """Wait while a visitor's script run is under way; within :data:`FIRST_VISIT_SECONDS` of
    ``started`` (the preload's start on ``clock``), until a first run has ended; and for
    :data:`FIRST_DRAW_SECONDS` after the first run ended; at most :data:`MAX_YIELD_SECONDS`.
    Returns the seconds waited.

    On two cores the preload's later steps (Geometry's table, UMAP's compiled code, the maps)
    take the CPU and the interpreter from the first page's own run; standing aside gives that
    page its chart first, and the preload goes on as soon as it is drawn."""
    visits = visits_now()
    t0 = clock()
    deadline = t0 + MAX_YIELD_SECONDS

    def waiting() -> bool:
        now = clock()
        if now >= deadline:
            return False
        early = now < started + FIRST_VISIT_SECONDS and not visits.finished.is_set()
        drawing = visits.first_end is not None and now < visits.first_end + FIRST_DRAW_SECONDS
        return visits.active > 0 or early or drawing

    with visits.condition:
        while waiting():
            visits.condition.wait(timeout=0.05)
    return clock() - t0


def run_plan(plan: Plan) -> list[Step]:
    """Load the preload's steps (``plan()``, which imports the library) and run them with
    :func:`run_steps`; returns the record. A plan that cannot be loaded is recorded as one
    failed step (shown on the page); the server lives on."""
    try:  # the library: after the server answers
        whole_pandas()
        steps, first_view = plan()
    except Exception as exc:  # noqa: BLE001 - shown on the page; the server lives on
        log.warning("the preload's code could not be imported", exc_info=True)
        record, lock = _status()
        with lock:
            record[:] = [Step("the preload's code", "failed", 0.0, f"{type(exc).__name__}: {exc}")]
        return record
    return run_steps(steps, first_view)


def run_steps(steps: Steps, first_view: int | None = None) -> list[Step]:
    """Run ``steps`` one after the other, recording each one's state; returns the record. The
    steps from index ``first_view`` on (None: none) each wait for visitors' runs first
    (:func:`yield_to_visitors`)."""
    started = time.monotonic()
    record, lock = _status()
    with lock:
        record[:] = [Step(name) for name, _ in steps]
    for index, ((name, work), step) in enumerate(zip(steps, record)):
        if first_view is not None and index >= first_view:
            yield_to_visitors(started)
        with lock:
            step.state = "running"
        t = time.perf_counter()
        try:
            try:
                work()
            except ImportError:  # a page importing the same package at that moment: once more
                log.info("preloading %s met a concurrent import; trying again", name)
                time.sleep(IMPORT_RETRY_SECONDS)
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
def start(_plan: Plan) -> threading.Thread:
    """Start :func:`run_plan` of ``_plan`` in a daemon thread, once per process (whatever the
    plan: it is not part of the cache's key); returns the thread."""
    thread = threading.Thread(target=run_plan, args=(_plan,), name="workbench-preload",
                              daemon=True)  # fmt: skip
    thread.start()
    return thread


def status() -> list[Step]:
    """A copy of every step's state now."""
    record, lock = _status()
    with lock:
        return [Step(s.name, s.state, s.seconds, s.error) for s in record]


def lifespan(plan: Plan) -> Callable[[Any], AbstractAsyncContextManager[dict[str, Any]]]:
    """Streamlit's server lifespan for ``plan``: it starts the preload thread and returns at
    once (the server accepts connections meanwhile). Nothing raised there can stop the
    server."""

    @contextlib.asynccontextmanager
    async def starting(app: Any) -> AsyncIterator[dict[str, Any]]:
        try:
            start(plan)
        except Exception:  # noqa: BLE001 - the pages load what they need themselves
            log.exception("could not start preloading")
        yield {}

    return starting


#: The server's route that tells how far the preload is (JSON; for a deployment's readiness
#: check and the tests): ``{"ready": bool, "steps": [{"name", "state", "seconds", "error"}]}``,
#: ``steps`` empty while the preload still imports the library.
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
