"""The batch worker process (workbench.encoding.batch_process, batch_worker): the same batches
as the producer thread, its failures reach the caller as the project's errors, it is reused
from call to call, started afresh after it dies, and ends with its encoder."""

from __future__ import annotations

import gc
import os
import pickle
import signal
import socket
import threading
from multiprocessing.connection import Connection

import numpy as np
import pytest
import torch

from workbench import Encoder
from workbench.encoding.alignment import normalize_input
from workbench.encoding.batch_process import BatchProcess
from workbench.encoding.batch_worker import WordFeed, dumps, loads, portable, run_job
from workbench.encoding.batching import ChunkBuilders
from workbench.encoding.pipeline import PipelineConfig, run_batches
from workbench.encoding.prepare import Preparer
from workbench.encoding.rows import RowLayout
from workbench.encoding.stream import BatchStream
from workbench.encoding.workers import Clock
from workbench.errors import EncodingError

PROCESS = PipelineConfig(
    prefetch=2, transfer="staged", in_flight=1, stream_words=40, producer="process"
)
SENTENCES = [["the", "river", "bank", "flooded"], ["she", "sat", "on", "the", "bank"]] * 30


def workbench_threads() -> list[str]:
    return [t.name for t in threading.enumerate() if t.name.startswith("workbench-")]


def pid_of(worker: BatchProcess) -> int:
    assert worker.alive and worker._proc is not None  # noqa: SLF001 - the test looks inside
    return worker._proc.pid  # noqa: SLF001


@pytest.fixture(scope="module")
def encoder(tiny_model_dir):
    return Encoder(model=str(tiny_model_dir), device="cpu", max_batch_tokens=64, pipeline=PROCESS)


def stream_of(enc: Encoder, rows: np.ndarray) -> BatchStream:
    """A stream of SENTENCES whose builders get ``rows`` as the output rows."""
    builders = ChunkBuilders(enc.specials, rows, "mean", "exact", 64, enc.max_length, 0.1)
    return BatchStream(SENTENCES, Preparer(enc.tokenizer, enc.window_tokens), builders, 40)


def test_same_batches_as_the_producer_thread(encoder):
    """Each batch received from the worker has the arrays the producer thread builds."""
    rows = RowLayout.build(SENTENCES, None).rows
    here = [builder.build(batch) for builder, batch in stream_of(encoder, rows)]
    worker = encoder.batch_process
    assert worker is not None
    with worker.batches(stream_of(encoder, rows), "cpu", 2, Clock()) as batches:
        there = [hb for hb, packed in batches]
    assert len(here) == len(there) > 3
    for a, b in zip(here, there):
        np.testing.assert_array_equal(a.ids, b.ids)
        np.testing.assert_array_equal(a.mask, b.mask)
        np.testing.assert_array_equal(a.rows, b.rows)
        for name in ("single_words", "single_positions", "multi_words", "multi_positions",
                     "multi_segments", "multi_weights"):  # fmt: skip
            np.testing.assert_array_equal(getattr(a.plan, name), getattr(b.plan, name))
        assert (a.n_tokens, a.n_owned, a.padded) == (b.n_tokens, b.n_owned, b.padded)


def test_a_failure_in_the_worker_reaches_the_caller(encoder, tmp_path):
    """An error of another kind than the project's, raised while the worker builds a batch (here
    an output-row array too short), ends the run as an EncodingError naming it; the worker
    serves the next call."""
    short = np.arange(3, dtype=np.int64)  # rows for 3 words: the 4th word is out of bounds
    worker = encoder.batch_process
    assert worker is not None
    pid = pid_of(worker)
    dest = torch.zeros((200, 1, encoder.dim))
    stream = stream_of(encoder, short)
    source = lambda depth, clock: worker.batches(stream, "cpu", depth, clock)  # noqa: E731
    with pytest.raises(EncodingError, match="prep stage.*IndexError"), torch.inference_mode():
        run_batches([], encoder.runner, [0], dest, "cpu", PROCESS, source=source)
    assert workbench_threads() == []
    assert pid_of(worker) == pid  # the same worker, ready for the next call
    assert len(encoder.encode(SENTENCES, progress=False)) == 270


def test_a_killed_worker_ends_the_call_and_a_new_one_serves_the_next(encoder, tmp_path):
    worker = encoder.batch_process
    assert worker is not None
    pid = pid_of(worker)
    seen = []

    def progress(fraction):
        seen.append(fraction)
        if len(seen) == 1:
            os.kill(pid, signal.SIGKILL)  # as the kernel's out-of-memory killer would

    many = SENTENCES * 40  # batches enough that the run outlasts the kill
    with pytest.raises(EncodingError, match="batch worker process stopped"):
        encoder.encode(many, out=tmp_path / "v.npy", progress=progress)
    assert workbench_threads() == []
    assert list(tmp_path.iterdir()) == []  # no output passed off as complete
    again = encoder.encode(SENTENCES, progress=False)
    assert pid_of(worker) != pid and len(again) == 270


def test_the_worker_is_reused_and_ends_with_its_encoder(tiny_model_dir):
    enc = Encoder(model=str(tiny_model_dir), device="cpu", max_batch_tokens=64, pipeline=PROCESS)
    worker = enc.batch_process
    assert worker is not None
    pid = pid_of(worker)
    first = enc.encode(SENTENCES, progress=False)
    second = enc.encode(SENTENCES, progress=False)
    np.testing.assert_array_equal(first.vectors, second.vectors)
    assert pid_of(worker) == pid  # one worker for every call
    proc = worker._proc  # noqa: SLF001
    del enc, first, second
    gc.collect()
    assert proc is not None and proc.wait(timeout=10) is not None  # ended with the encoder
    assert not worker.alive


def test_no_worker_where_nothing_is_prepared_ahead(tiny_model_dir):
    """producer="process" is about batches prepared ahead: on the CPU's default (prepared
    in the calling thread) no worker starts."""
    cfg = PipelineConfig(producer="process")
    enc = Encoder(model=str(tiny_model_dir), device="cpu", pipeline=cfg)
    assert enc.batch_process is None
    assert len(enc.encode(SENTENCES[:2], progress=False)) == 9


def test_job_error_and_stop_messages(tiny_encoder):
    """The worker's side alone: a failing build is sent as the error, a stopped feed ends the
    job with "stopped"."""
    ours, theirs = socket.socketpair()
    here, there = Connection(ours.detach()), Connection(theirs.detach())

    class Failing:
        def __call__(self, prep, first, last):
            raise IndexError("index 70000 is out of bounds")

    stream = BatchStream(SENTENCES, Preparer(tiny_encoder.tokenizer, 30), Failing(), 0)
    feed = WordFeed()
    feed.add(normalize_input(SENTENCES))
    run_job(there, stream, feed)
    kinds = []
    while here.poll(0.5):
        kinds.append(here.recv())
    assert kinds[-1][0] == "error" and isinstance(kinds[-1][1], IndexError)
    stopped = WordFeed()
    stopped.stop()
    run_job(
        there, BatchStream(SENTENCES, Preparer(tiny_encoder.tokenizer, 30), Failing(), 0), stopped
    )
    assert here.recv() == ("stopped",)
    here.close()
    there.close()


def test_portable_errors():
    class Odd(Exception):
        def __init__(self, a, b):  # not rebuilt by pickle from its args
            super().__init__(a)

    assert isinstance(portable(IndexError("x")), IndexError)
    converted = portable(Odd("half", 2))
    assert isinstance(converted, EncodingError) and "Odd: half" in str(converted)


def test_the_tokenizer_travels_by_reference(tiny_encoder):
    tok = tiny_encoder.tokenizer
    message = ("job", {"tokenizer": tok, "backend": tok.backend_tokenizer})
    by_ref = dumps(message, tok)
    assert len(by_ref) < 500 < len(pickle.dumps(message))
    back = loads(by_ref, tok)
    assert back[1]["tokenizer"] is tok and back[1]["backend"] is tok.backend_tokenizer
    with pytest.raises(pickle.UnpicklingError, match="unknown reference"):
        loads(by_ref, None)


def test_a_call_starts_the_worker_and_close_ends_it(encoder):
    worker = BatchProcess()
    assert not worker.alive
    try:
        rows = RowLayout.build(SENTENCES, None).rows
        with worker.batches(stream_of(encoder, rows), "cpu", 2, Clock()) as batches:
            assert sum(1 for _ in batches) > 3
        assert worker.alive and worker.tokenizer is encoder.tokenizer
    finally:
        worker.close()
    assert not worker.alive
    worker.close()  # idempotent
