"""Long computations in background threads, shared by every session of the app.

:func:`background` starts ``work(build)`` once per key in a daemon thread and hands every caller
the same :class:`Build`, which the work updates (message, stage, fraction) and ends with its
result or error; a page polls it and shows progress. The work goes on when the user changes a
widget or leaves the page, so nothing it computed is lost; a failed build starts again on the
next call. :func:`settle` waits briefly for work that turns out to be quick; :func:`show_progress`
polls a running build on the page and stops the page until it is done.

Example::

    build = settle(background(("index", key), lambda b: load_or_build(b)))
    if build.done and build.error is None:
        use(build.result)
"""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Callable, Hashable
from dataclasses import dataclass, field

import streamlit as st

from webapp.text import plain


@dataclass
class Build:
    """A long computation in a background thread, shared by every session: it goes on when
    the user changes a widget or leaves the page, and nothing it computed is lost.

    Attributes:
        message: what is being built and why it takes a while.
        fraction: progress, 0 to 1; stage: what runs now.
        result: the value once done; error: the exception it ended with, if any.
    """

    message: str = ""
    stage: str = ""
    fraction: float = 0.0
    result: object = None
    error: BaseException | None = None
    thread: threading.Thread | None = field(default=None, repr=False)
    started: float = field(default_factory=time.monotonic)  # time.monotonic() at the start

    @property
    def done(self) -> bool:
        return self.thread is not None and not self.thread.is_alive()

    @property
    def elapsed(self) -> float:
        """Seconds since the build started."""
        return time.monotonic() - self.started

    def left(self) -> float:
        """Seconds left at the rate so far (elapsed time per fraction done); NaN before any
        progress."""
        if self.fraction <= 0.0:
            return math.nan
        return self.elapsed * (1.0 - self.fraction) / self.fraction

    def timing(self) -> str:
        """``"3 min 10 s so far, about 5 min left"``: elapsed and, once there is progress,
        the estimate."""
        left = self.left()
        text = f"{_duration(self.elapsed)} so far"
        return text + (f", about {_duration(left)} left" if left == left else "")


def _duration(seconds: float) -> str:
    minutes, secs = divmod(int(round(seconds)), 60)
    return f"{minutes} min {secs} s" if minutes else f"{secs} s"


@st.cache_resource
def _builds() -> tuple[dict[Hashable, Build], threading.Lock]:
    return {}, threading.Lock()


def background(key: Hashable, work: Callable[[Build], object]) -> Build:
    """The :class:`Build` of ``key``, started (``work(build)`` in a thread) unless one is
    running or done; a failed one starts again."""
    builds, lock = _builds()
    with lock:
        build = builds.get(key)
        if build is not None and not (build.done and build.error is not None):
            return build
        build = builds[key] = Build()

        def run() -> None:
            try:
                build.result = work(build)
                build.fraction = 1.0
            except BaseException as exc:  # noqa: BLE001 - shown on the page that asked
                build.error = exc

        build.thread = threading.Thread(target=run, name=f"workbench-build-{key}", daemon=True)
        build.thread.start()
        return build


def settle(build: Build, seconds: float = 30.0) -> Build:
    """Wait up to ``seconds`` while ``build`` is quick work (loading from the cache dir): until
    it is done, or says that it is building (then its page shows the progress instead)."""
    deadline = time.monotonic() + seconds
    while not build.done and not build.message and time.monotonic() < deadline:
        time.sleep(0.05)
    return build


def show_progress(build: Build, before_stop: Callable[[], None] | None = None) -> None:
    """While ``build`` runs: its message and progress bar, polled every second (the page
    reruns once it is done), then the page stops here; ``before_stop`` draws what the page
    still shows meanwhile (its link). Does nothing once the build is done."""
    if build.done:
        return

    @st.fragment(run_every=1.0)
    def _poll() -> None:
        if build.done:
            st.rerun()
        if build.message:
            st.info(plain(build.message), icon=":material/hourglass_top:")
        st.progress(build.fraction, text=f"{build.stage} {build.fraction:.0%}: {build.timing()}")

    _poll()
    if before_stop is not None:
        before_stop()
    st.stop()
