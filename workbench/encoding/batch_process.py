"""Prepare an encoder's batches in a worker process, off this process's GIL.

On a GPU the thread that queues the device's work shares Python's GIL with the producer
thread that tokenizes, plans and builds the next batches; each torch call gives the GIL up
and waits to get it back, so the launching thread runs at about half its speed beside the
producer (docs/benchmarks.md, "The batch pipeline and the GPU"). With
``PipelineConfig(producer="process")`` a :class:`BatchProcess` does the producer's work in a
worker process instead (:mod:`workbench.encoding.batch_worker`): it runs the input's
:class:`~workbench.encoding.stream.BatchStream` (each chunk tokenized, its windows and
batches planned, every batch built) and sends each batch's arrays through a socket; a
receiver thread here reads them straight into (pinned, on cuda) host buffers, with a few
small Python calls per batch. The batches, their arrays and so the vectors are the same as
the producer thread's (bit-identical on the CPU).

The worker is started once per encoder (its imports and the tokenizer load while the model
does) and serves one call after another; each call sends the stream, then each chunk's word
lists, the first chunk's first, so the worker starts on it at once. It is a plain ``python
-c`` child on one end of a socket pair (no re-import of the caller's ``__main__``, unlike
``multiprocessing``'s start methods), never outlives this process (it ends when the socket
closes) and ignores SIGINT: a ``KeyboardInterrupt`` here stops the call, which stops the
worker's job.

Example::

    worker = BatchProcess()
    worker.start(encoder.tokenizer)
    with worker.batches(stream, device="cuda", depth=4, clock=Clock()) as batches:
        for hb, packed in batches:      # HostBatch, PackedBatch (None on the CPU)
            ...
    worker.close()
"""

from __future__ import annotations

import copy
import hashlib
import os
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any

import numpy as np

from workbench.encoding.batch_worker import BatchMeta, dumps
from workbench.encoding.batching import HostBatch
from workbench.encoding.pipeline import PackedBatch
from workbench.encoding.pooling import PoolingPlan
from workbench.encoding.stream import BatchStream
from workbench.encoding.workers import POLL_S, Clock, Prefetcher
from workbench.errors import EncodingError

STOP_WAIT_S = 30.0  # seconds a stopped job may take to end before the worker is killed
PACKED_PARTS = 5  # HostBatch.device_arrays: ids, mask, single and multi positions, segments
_WORKBENCH_ROOT = str(Path(__file__).resolve().parents[2])  # for the child's import path


def rebuild(
    meta: BatchMeta, ints: Any, weights: Any, packed: bool
) -> tuple[HostBatch, PackedBatch | None]:
    """The :class:`HostBatch` of a received batch, its arrays views of the received buffers,
    and (``packed``) the :class:`PackedBatch` that copies it to the device.

    Args:
        ints, weights: the received int64 and float32 torch tensors (pinned for cuda).
        packed: give the packed form (a batch with words, for a device other than the CPU).
    """
    a = ints.numpy()
    bounds = np.cumsum((0, *meta.sizes)).tolist()
    ids, mask, sp, mp, ms, sw, mw, rows = (a[x:y] for x, y in zip(bounds[:-1], bounds[1:]))
    plan = PoolingPlan(meta.n_words, sw, sp, mw, mp, ms, weights.numpy())
    hb = HostBatch(
        ids.reshape(meta.shape),
        mask.reshape(meta.shape),
        plan,
        rows,
        meta.n_tokens,
        meta.n_owned,
        meta.padded,
    )
    if not packed:
        return hb, None
    head = meta.sizes[:PACKED_PARTS]
    return hb, PackedBatch(ints[: sum(head)], weights, meta.shape, head, len(mw))


class BatchProcess:
    """A worker process that prepares an encoder's batches (see the module's notes).

    :meth:`start` launches it (idempotent; :meth:`batches` starts it if needed); a dead or
    killed worker is started afresh by the next call. :meth:`close` ends it.

    Attributes:
        seconds: the last finished job's time per activity in the worker
            (``worker: input`` (tokenizing and planning a chunk, getting the next batch),
            ``worker: build``, ``worker: send (waits for the receiver)``).
    """

    def __init__(self) -> None:
        self._proc: subprocess.Popen | None = None
        self._conn: Connection | None = None
        self.tokenizer: Any = None  # the one the worker holds
        self._tokenizer_digest = b""  # of its pickled state when it was sent
        self._open_job = False  # a job was sent and its end not yet read
        self.seconds: dict[str, float] = {}

    @property
    def alive(self) -> bool:
        return self._proc is not None and self._proc.poll() is None

    def start(self, tokenizer: Any = None) -> None:
        """Launch the worker if it is not running; ``tokenizer``: have it hold that one now
        (its libraries load there while the caller does other work)."""
        if not self.alive:
            self._launch()
        if tokenizer is not None:
            self._hold(tokenizer)

    def _launch(self) -> None:
        self.close()
        ours, theirs = socket.socketpair()
        env = dict(os.environ)
        env["PYTHONPATH"] = os.pathsep.join(
            p for p in (_WORKBENCH_ROOT, env.get("PYTHONPATH", "")) if p
        )
        code = f"from workbench.encoding.batch_worker import serve; serve({theirs.fileno()})"
        try:
            self._proc = subprocess.Popen(
                [sys.executable, "-c", code],
                pass_fds=(theirs.fileno(),),
                env=env,
                stdin=subprocess.DEVNULL,
            )
        except (OSError, ValueError) as exc:  # ValueError: no pass_fds (Windows)
            ours.close()
            raise EncodingError(
                f"The batch worker process could not start: {exc}; "
                'use PipelineConfig(producer="thread").'
            ) from exc
        finally:
            theirs.close()
        self._conn = Connection(ours.detach())
        self._open_job = False
        self.tokenizer, self._tokenizer_digest = None, b""

    def _hold(self, tokenizer: Any) -> None:
        """Have the worker hold ``tokenizer`` as it is now: sent again only if it changed
        since it was last sent (a token added, the unknown token changed, ...)."""
        state = dumps(("warm", tokenizer), None)
        digest = hashlib.blake2b(state, digest_size=16).digest()
        if tokenizer is self.tokenizer and digest == self._tokenizer_digest:
            return
        self._send_bytes(state)
        self.tokenizer, self._tokenizer_digest = tokenizer, digest

    def close(self) -> None:
        """End the worker (idempotent): asked to exit, killed if it does not within a second."""
        conn, proc = self._conn, self._proc
        self._conn, self._proc, self._open_job = None, None, False
        if conn is not None:
            try:
                conn.send_bytes(dumps(("exit",), None))
            except OSError:
                pass
            conn.close()
        if proc is not None:
            try:
                proc.wait(timeout=1.0)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()

    @contextmanager
    def batches(
        self, stream: BatchStream, device: str, depth: int, clock: Clock
    ) -> Iterator[Iterable[tuple[HostBatch, PackedBatch | None]]]:
        """The stream's batches, prepared by the worker, received at most ``depth`` ahead by
        a receiver thread here, in order; each chunk's notes are recorded in ``stream``
        (:meth:`BatchStream.record`). Leaving the block early (an exception, a
        ``KeyboardInterrupt``) stops the receiver and the worker's job.

        Raises:
            WorkbenchError: raised by the worker's job (bad input found late), as it was;
            EncodingError: the worker died or could not be reached.
        """
        self.start(stream.preparer.tokenizer)
        job = copy.copy(stream)  # the stream without its words: they follow chunk by chunk
        job.words = []
        self._send(("job", job), self.tokenizer)
        self._open_job = True
        abandon = threading.Event()
        received = self._receive(stream, device.startswith("cuda"), device != "cpu", abandon)
        receiver = Prefetcher(
            lambda item: item, received, max(depth, 1), name="workbench-receive", clock=clock
        )
        try:
            with receiver:
                for start, stop in stream.bounds:  # the first chunk's words first
                    self._send(("words", stream.words[start:stop]), None)
                yield receiver
        finally:
            abandon.set()
            receiver.close()
            if self._open_job:
                self._stop_job()

    def _send(self, message: tuple, tokenizer: Any) -> None:
        """Send a message to the worker (``tokenizer``: the one it holds, sent by reference)."""
        self._send_bytes(dumps(message, tokenizer))

    def _send_bytes(self, data: bytes) -> None:
        if self._conn is None:
            raise EncodingError("The batch worker process was closed during a call.")
        try:
            self._conn.send_bytes(data)
        except OSError as exc:
            self.close()
            raise EncodingError(f"The batch worker process cannot be reached: {exc}") from exc

    def _receive(
        self, stream: BatchStream, pin: bool, packed: bool, abandon: threading.Event
    ) -> Iterator[tuple[HostBatch, PackedBatch | None]]:
        """The job's batches as they arrive (run by the receiver thread)."""
        import torch

        while True:
            message = self._message(abandon)
            if message is None:
                return
            kind = message[0]
            if kind == "chunk":
                stream.record(message[1])
            elif kind == "batch":
                meta: BatchMeta = message[1]
                ints = torch.empty(sum(meta.sizes), dtype=torch.int64, pin_memory=pin)
                weights = torch.empty(meta.sizes[4], dtype=torch.float32, pin_memory=pin)
                self._read_into(ints)
                self._read_into(weights)
                yield rebuild(meta, ints, weights, packed and meta.n_words > 0)
            elif kind == "done":
                self._open_job = False
                self.seconds = message[1]
                return
            elif kind == "error":
                self._open_job = False
                raise message[1]
            else:
                raise EncodingError(f"The batch worker process sent an unknown message {kind!r}.")

    def _message(self, abandon: threading.Event | None, timeout: float | None = None) -> Any:
        """The worker's next message; None once ``abandon`` is set (or after ``timeout``)."""
        conn = self._conn
        if conn is None:
            raise EncodingError("The batch worker process was closed during a call.")
        waited = 0.0
        while not conn.poll(POLL_S):
            if abandon is not None and abandon.is_set():
                return None
            waited += POLL_S
            if timeout is not None and waited >= timeout:
                return None
            if not self.alive:
                raise self._died()
        try:
            return conn.recv()
        except (EOFError, OSError) as exc:
            raise self._died() from exc

    def _read_into(self, tensor: Any) -> None:
        """Read one raw message straight into a tensor's memory."""
        if self._conn is None:
            raise EncodingError("The batch worker process was closed during a call.")
        if tensor.numel() == 0:
            self._conn.recv_bytes()
            return
        try:
            self._conn.recv_bytes_into(memoryview(tensor.numpy()).cast("B"))
        except (EOFError, OSError) as exc:
            raise self._died() from exc

    def _died(self) -> EncodingError:
        code = None if self._proc is None else self._proc.poll()
        self.close()
        return EncodingError(
            f"The batch worker process stopped (exit code {code}); the next call starts a new one."
        )

    def _stop_job(self) -> None:
        """Stop an unfinished job and read what it still sends, so the worker is ready for the
        next; a worker that does not stop within :data:`STOP_WAIT_S` is killed."""
        if self._conn is None:  # closed meanwhile (it died): nothing to stop
            return
        try:
            self._send(("stop",), None)
            deadline = time.monotonic() + STOP_WAIT_S
            while True:
                message = self._message(None, timeout=max(deadline - time.monotonic(), 0.0))
                if message is None:
                    break
                if message[0] == "batch":
                    self._conn.recv_bytes()
                    self._conn.recv_bytes()
                elif message[0] in ("done", "error", "stopped"):
                    self._open_job = False
                    return
        except (EncodingError, OSError, EOFError):
            pass
        self.close()
