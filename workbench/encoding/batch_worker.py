"""The worker process's side of :mod:`workbench.encoding.batch_process`: it runs each input's
:class:`~workbench.encoding.stream.BatchStream` and sends every batch built.

Started as ``python -c "...; serve(fd)"`` on one end of a socket pair; it imports no torch.
A reader thread takes every message as it arrives (so the caller's sends never wait for the
worker's work): a job starts as soon as its stream is here, and each chunk's word lists
follow in their own messages while the worker tokenizes the chunks before them
(:class:`WordFeed`). It ignores SIGINT (the caller's ``KeyboardInterrupt`` stops the job
through a ``stop`` message) and ends when told to or when the socket closes.

Messages to the worker (pickled by :func:`dumps`, whose tokenizer travels once:
``("warm", tokenizer)`` unpickles it here, and later messages name it by reference):
``("warm", tokenizer)``, ``("job", stream)`` (its ``words`` left out), ``("words", lists)``
(the next chunk's), ``("stop",)``, ``("exit",)``. From it, per job: ``("chunk", ChunkNotes)``
for each chunk reached, ``("batch", BatchMeta)`` followed by two raw messages (the batch's
int64 and float32 arrays: :func:`batch_arrays`), then one of ``("done", seconds)`` (the
worker's time per activity), ``("error", exception)`` or ``("stopped",)``.
"""

from __future__ import annotations

import gc
import io
import pickle
import queue
import signal
import threading
import time
from dataclasses import dataclass
from multiprocessing.connection import Connection
from typing import Any

import numpy as np

from workbench.encoding.batching import HostBatch
from workbench.encoding.stream import BatchStream
from workbench.encoding.workers import Clock
from workbench.errors import EncodingError, WorkbenchError

#: how messages name the tokenizer the worker holds, and its Rust backend
TOKENIZER_REFS = ("workbench-tokenizer", "workbench-tokenizer-backend")


@dataclass(frozen=True)
class BatchMeta:
    """What the worker sends before a batch's arrays.

    Attributes:
        shape: ``(batch, width)`` of ids and mask.
        sizes: lengths of the eight int64 parts, end to end: ids, mask, single positions,
            multi positions, multi segments (what is copied to the device), single words,
            multi words, rows.
        n_words, n_tokens, n_owned, padded: as in :class:`HostBatch` and its plan.
    """

    shape: tuple[int, int]
    sizes: tuple[int, ...]
    n_words: int
    n_tokens: int
    n_owned: int
    padded: bool


def batch_arrays(hb: HostBatch) -> tuple[BatchMeta, np.ndarray, np.ndarray]:
    """A built batch as its metadata, one int64 array (:attr:`BatchMeta.sizes`'s parts) and
    its float32 pooling weights."""
    plan = hb.plan
    parts = [*hb.device_arrays(), plan.single_words, plan.multi_words, hb.rows]
    ints = np.concatenate(parts, dtype=np.int64, casting="same_kind")
    weights = np.ascontiguousarray(plan.multi_weights, dtype=np.float32)
    rows, width = hb.ids.shape
    sizes = tuple(len(p) for p in parts)
    shape = (int(rows), int(width))
    return BatchMeta(shape, sizes, plan.n_words, hb.n_tokens, hb.n_owned, hb.padded), ints, weights


def _tokenizer_parts(tokenizer: Any) -> tuple[Any, Any]:
    """The tokenizer and its Rust backend (None where it has none)."""
    return tokenizer, getattr(tokenizer, "backend_tokenizer", None)


def dumps(message: tuple, tokenizer: Any) -> bytes:
    """``message`` pickled for the worker, ``tokenizer`` (the one it holds) and its backend
    by reference; ``tokenizer`` None: a plain pickle (fast: a reference check per object
    is a Python call per object, 0.2 s for 20,000 sentences' words)."""
    if tokenizer is None:
        return pickle.dumps(message, protocol=pickle.HIGHEST_PROTOCOL)
    parts = _tokenizer_parts(tokenizer)

    class Pickler(pickle.Pickler):
        def persistent_id(self, obj: Any) -> str | None:
            for ref, part in zip(TOKENIZER_REFS, parts):
                if part is not None and obj is part:
                    return ref
            return None

    buffer = io.BytesIO()
    Pickler(buffer, protocol=pickle.HIGHEST_PROTOCOL).dump(message)
    return buffer.getvalue()


def loads(data: bytes, tokenizer: Any) -> Any:
    """A message from :func:`dumps`, its tokenizer reference resolved to ``tokenizer``."""

    parts = dict(zip(TOKENIZER_REFS, _tokenizer_parts(tokenizer)))

    class Unpickler(pickle.Unpickler):
        def persistent_load(self, pid: Any) -> Any:
            if tokenizer is None or parts.get(pid) is None:
                raise pickle.UnpicklingError(f"unknown reference {pid!r}")
            return parts[pid]

    return Unpickler(io.BytesIO(data)).load()


class Stopped(Exception):
    """The caller stopped the job (or went away)."""


class WordFeed:
    """A job's word lists as they arrive, chunk by chunk: ``feed[a:b]`` waits until sentences
    ``a`` to ``b`` are here (what :class:`BatchStream` asks for each chunk)."""

    def __init__(self) -> None:
        self.sentences: list[list[str]] = []
        self.stopped = False
        self._ready = threading.Condition()

    def add(self, sentences: list[list[str]]) -> None:
        with self._ready:
            self.sentences.extend(sentences)
            self._ready.notify_all()

    def stop(self) -> None:
        with self._ready:
            self.stopped = True
            self._ready.notify_all()

    def __getitem__(self, where: slice) -> list[list[str]]:
        with self._ready:
            while len(self.sentences) < where.stop and not self.stopped:
                self._ready.wait()
            if self.stopped:
                raise Stopped
            return self.sentences[where]


class Inbox:
    """The worker's reader thread: takes each message as it arrives; jobs are handed to the
    worker's loop (:meth:`next_job`), words and stops to the current job's feed."""

    def __init__(self, conn: Connection) -> None:
        self.conn = conn
        self.jobs: queue.Queue[tuple[BatchStream, WordFeed] | None] = queue.Queue()
        self.tokenizer: Any = None
        self.feed = WordFeed()
        self._thread = threading.Thread(target=self._read, name="workbench-inbox", daemon=True)
        self._thread.start()

    def next_job(self) -> tuple[BatchStream, WordFeed] | None:
        """The next job and its feed; None once told to exit or the caller has gone."""
        return self.jobs.get()

    def _read(self) -> None:
        try:
            while True:
                message = loads(self.conn.recv_bytes(), self.tokenizer)
                kind = message[0]
                if kind == "warm":
                    self.tokenizer = message[1]
                elif kind == "job":
                    self.feed = WordFeed()
                    self.jobs.put((message[1], self.feed))
                elif kind == "words":
                    self.feed.add(message[1])
                elif kind == "stop":
                    self.feed.stop()
                elif kind == "exit":
                    break
        except (EOFError, OSError):
            pass
        self.feed.stop()
        self.jobs.put(None)


def serve(fd: int) -> None:
    """The worker's loop: run each job that arrives on socket ``fd``, one after another."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the caller stops a job; Ctrl-C reaches both
    gc.disable()  # many small lists, no reference cycles (as Encoder.encode does)
    conn = Connection(fd)
    inbox = Inbox(conn)
    while (job := inbox.next_job()) is not None:
        try:
            run_job(conn, *job)
        except (EOFError, OSError):  # the caller went away
            return


def run_job(conn: Connection, stream: BatchStream, feed: WordFeed) -> None:
    """Send every batch of ``stream``, its word lists read from ``feed``."""
    seconds: dict[str, float] = {}
    clock = Clock(seconds)
    stream.words = feed  # type: ignore[assignment]  # sliced per chunk, as a list is
    sent = 0  # chunks whose notes were sent
    try:
        t = time.perf_counter()
        for builder, batch in stream:
            t = clock.add("worker: input", t)
            for notes in stream.chunks[sent:]:
                conn.send(("chunk", notes))
            sent = len(stream.chunks)
            if feed.stopped:
                raise Stopped
            meta, ints, weights = batch_arrays(builder.build(batch))
            t = clock.add("worker: build", t)
            conn.send(("batch", meta))
            conn.send_bytes(ints.data)
            conn.send_bytes(weights.data)
            t = clock.add("worker: send (waits for the receiver)", t)
        for notes in stream.chunks[sent:]:
            conn.send(("chunk", notes))
        conn.send(("done", seconds))
    except Stopped:
        conn.send(("stopped",))
    except (EOFError, OSError):
        raise
    except Exception as exc:  # noqa: BLE001 - handed to the caller, raised there
        conn.send(("error", portable(exc)))


def portable(exc: Exception) -> Exception:
    """``exc`` if it pickles (a project error keeps its type), else an EncodingError saying
    what it was."""
    try:
        pickle.loads(pickle.dumps(exc))
        return exc
    except Exception:  # noqa: BLE001 - any failure to pickle
        if isinstance(exc, WorkbenchError):
            return EncodingError(str(exc))
        return EncodingError(f"Preparing a batch failed: {type(exc).__name__}: {exc}")
