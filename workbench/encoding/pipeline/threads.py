"""The overlapped run's two threads, both stoppable at any moment.

:class:`Prefetcher` computes ``fn(item)`` for the next items on a producer thread, a bounded
number ahead of the consumer; :class:`RowWriter` writes staged rows into the output on a writer
thread once their device-to-host copy has completed. Each is a context manager: leaving the
block (normally, on an exception or on ``KeyboardInterrupt``) stops its thread and joins it,
and an exception raised in the thread is raised in the caller's. A blocked thread looks every
``POLL_S`` seconds whether it was stopped, so no thread outlives its run.
:func:`workbench.encoding.pipeline.overlap.run_overlapped` runs the batches through them.

Example::

    with Prefetcher(prepare, batches, depth=4) as source:
        for prepared in source:      # in order; prepare's error is raised here
            run(prepared)
"""

from __future__ import annotations

import queue
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from typing import TYPE_CHECKING, Any, Generic, TypeVar

from workbench.errors import EncodingError

if TYPE_CHECKING:
    import torch

POLL_S = 0.05  # how often a blocked thread looks whether the run was stopped
T = TypeVar("T")
R = TypeVar("R")


class Clock:
    """Seconds per activity of a pipeline's threads, for a profile of an overlapped run: each
    thread adds to its own keys (``"producer: prepare"``, ``"writer: write"``, ...) of
    ``seconds``; with ``seconds`` None nothing is recorded.

    Example::

        clock = Clock({})
        t = time.perf_counter()
        work()
        t = clock.add("main: work", t)   # the time now, to time the next activity from
    """

    def __init__(self, seconds: dict[str, float] | None = None) -> None:
        self.seconds = seconds

    def add(self, activity: str, since: float) -> float:
        """Add the seconds from ``since`` to now to ``activity``; returns now."""
        now = time.perf_counter()
        if self.seconds is not None:
            self.seconds[activity] = self.seconds.get(activity, 0.0) + now - since
        return now


class Prefetcher(Generic[T, R]):
    """``fn(item)`` for each item, in order, computed by a producer thread at most ``depth``
    items ahead of the consumer (at least one).

    Use as a context manager: leaving it (normally, on an exception or a KeyboardInterrupt)
    stops the producer and joins it. An exception raised by ``fn`` is raised in the
    consumer when it reaches that item. ``clock`` gets the producer's time getting each item
    (``producer: input``: a chunk's tokenizing happens there), computing ``fn``
    (``producer: prepare``) and waiting for room in the queue (``producer: wait for room``).
    """

    def __init__(
        self,
        fn: Callable[[T], R],
        items: Iterable[T],
        depth: int,
        name: str = "workbench-prepare",
        clock: Clock | None = None,
    ) -> None:
        self.fn = fn
        self.items = items
        self.depth = max(int(depth), 1)
        self.clock = clock or Clock()
        self._queue: queue.Queue[tuple[str, Any]] = queue.Queue(maxsize=self.depth)
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._work, name=name, daemon=True)

    def __enter__(self) -> Prefetcher[T, R]:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __iter__(self) -> Iterator[R]:
        while True:
            kind, value = self._get()
            if kind == "done":
                return
            if kind == "error":
                raise value
            yield value

    def close(self) -> None:
        """Stop the producer and wait for it to end (idempotent)."""
        self._stop.set()
        while self._thread.is_alive():
            _drain(self._queue)
            self._thread.join(POLL_S)

    def _get(self) -> tuple[str, Any]:
        while True:
            try:
                return self._queue.get(timeout=POLL_S)
            except queue.Empty:
                if not self._thread.is_alive() and self._queue.empty():
                    raise EncodingError("the batch producer stopped without a result") from None

    def _put(self, message: tuple[str, Any]) -> bool:
        while not self._stop.is_set():
            try:
                self._queue.put(message, timeout=POLL_S)
                return True
            except queue.Full:
                continue
        return False

    def _work(self) -> None:
        clock, t = self.clock, time.perf_counter()
        try:
            for item in self.items:
                t = clock.add("producer: input", t)
                if self._stop.is_set():
                    return
                result = self.fn(item)
                t = clock.add("producer: prepare", t)
                if not self._put(("item", result)):
                    return
                t = clock.add("producer: wait for room", t)
            self._put(("done", None))
        except BaseException as exc:  # noqa: BLE001 - handed to the consumer, raised there
            self._put(("error", exc))


class RowWriter:
    """Writes staged rows into the output on a writer thread, in the order they are given.

    Args:
        dest: the output ``(n_rows, n_layers, dim)`` (CPU; may share a memory map's pages).
        depth: staged batches queued at most; :meth:`put` blocks beyond that.

    Use as a context manager; :meth:`finish` waits for every write and raises a write's
    error; leaving the block without it (an exception) stops the thread without waiting.
    ``clock`` gets the writer's time waiting for rows (``writer: wait for rows``), for their
    copy to the host (``writer: wait for the copy``) and writing them (``writer: write``).
    """

    def __init__(
        self,
        dest: torch.Tensor,
        depth: int,
        name: str = "workbench-write",
        clock: Clock | None = None,
    ) -> None:
        self.dest = dest
        self.clock = clock or Clock()
        self._queue: queue.Queue[tuple[torch.Tensor, torch.Tensor, Any] | None] = queue.Queue(
            maxsize=max(depth, 1)
        )
        self._stop = threading.Event()
        self._error: BaseException | None = None
        self._thread = threading.Thread(target=self._work, name=name, daemon=True)

    def __enter__(self) -> RowWriter:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        while self._thread.is_alive():
            _drain(self._queue)
            self._thread.join(POLL_S)

    def put(self, rows: torch.Tensor, host: torch.Tensor, ready: Any) -> None:
        """Queue ``host`` ``(n, n_layers, dim)`` for rows ``rows`` ``(n,)`` of the output, to
        be written once ``ready`` (a CUDA event, or None) has completed."""
        while True:
            self._raise_error()
            try:
                self._queue.put((rows, host, ready), timeout=POLL_S)
                return
            except queue.Full:
                continue

    def finish(self) -> None:
        """Wait until every queued row is written; raise a write's error."""
        while self._thread.is_alive():
            try:
                self._queue.put(None, timeout=POLL_S)
                break
            except queue.Full:
                self._raise_error()
        self._thread.join()
        self._raise_error()

    def _raise_error(self) -> None:
        if self._error is not None:
            raise self._error

    def _work(self) -> None:
        import torch

        clock, t = self.clock, time.perf_counter()
        try:
            with torch.inference_mode():
                while not self._stop.is_set():
                    try:
                        job = self._queue.get(timeout=POLL_S)
                    except queue.Empty:
                        continue
                    finally:
                        t = clock.add("writer: wait for rows", t)
                    if job is None:
                        return
                    rows, host, ready = job
                    if ready is not None:
                        ready.synchronize()
                    t = clock.add("writer: wait for the copy", t)
                    self.dest.index_copy_(0, rows, host)
                    t = clock.add("writer: write", t)
        except BaseException as exc:  # noqa: BLE001 - raised in the caller's thread
            self._error = exc


def _drain(q: queue.Queue) -> None:
    """Empty a queue without blocking (so a producer blocked on ``put`` can see the stop)."""
    while True:
        try:
            q.get_nowait()
        except queue.Empty:
            return
