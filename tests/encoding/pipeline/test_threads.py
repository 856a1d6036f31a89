"""The overlapped run's threads (workbench.encoding.pipeline.threads): results in order, a
thread's error raised in the caller, and no thread left running however the block is left."""

from __future__ import annotations

import ast
import threading
import time
from pathlib import Path

import pytest
import torch

from workbench.encoding.pipeline.threads import Clock, Prefetcher, RowWriter


def worker_threads() -> list[str]:
    return [t.name for t in threading.enumerate() if t.name.startswith("workbench-")]


def test_prefetcher_order_errors_and_early_exit():
    with Prefetcher(lambda x: x * x, list(range(50)), depth=3) as source:
        assert list(source) == [x * x for x in range(50)]

    def boom(x):
        if x == 7:
            raise ValueError("bad item 7")
        return x

    got = []
    with pytest.raises(ValueError, match="bad item 7"), Prefetcher(boom, range(20), 2) as source:
        got.extend(source)
    assert got == list(range(7))  # everything before the failure, in order
    with Prefetcher(lambda x: x, range(10_000), 2) as source:  # the consumer stops early
        for x in source:
            if x == 3:
                break
    assert worker_threads() == []


def test_row_writer_puts_each_batch_at_its_rows():
    dest = torch.zeros((6, 2, 3))
    batches = [(torch.tensor([4, 0]), torch.full((2, 2, 3), 1.0)),
               (torch.tensor([5, 1, 3]), torch.full((3, 2, 3), 2.0))]  # fmt: skip
    with RowWriter(dest, depth=1) as writer:
        for rows, host in batches:
            writer.put(rows, host, None)
        writer.finish()
    assert dest[:, 0, 0].tolist() == [1.0, 2.0, 0.0, 2.0, 1.0, 2.0]
    assert worker_threads() == []


def test_row_writer_error_is_raised_in_the_caller():
    dest = torch.zeros((2, 2, 3))
    with pytest.raises(IndexError), RowWriter(dest, depth=1) as writer:
        writer.put(torch.tensor([7]), torch.ones((1, 2, 3)), None)  # row 7 of 2
        writer.finish()
    assert worker_threads() == []


def test_row_writer_left_without_finish_stops_its_thread():
    dest = torch.zeros((4, 1, 1))
    with pytest.raises(KeyboardInterrupt), RowWriter(dest, depth=2) as writer:
        writer.put(torch.tensor([0]), torch.ones((1, 1, 1)), None)
        raise KeyboardInterrupt
    assert worker_threads() == []


def test_clock_adds_time_per_activity_or_nothing():
    """A Clock adds each activity's seconds and returns the time to go on from; without a dict
    it records nothing (the pipeline's default)."""
    seconds: dict[str, float] = {}
    clock = Clock(seconds)
    t0 = time.perf_counter()
    time.sleep(0.01)
    t1 = clock.add("main: work", t0)
    clock.add("main: work", t1)
    assert t1 > t0 and seconds["main: work"] >= 0.01 and list(seconds) == ["main: work"]
    assert Clock().add("main: work", t0) >= t1 and Clock().seconds is None


def test_prefetcher_times_its_producer():
    seconds: dict[str, float] = {}
    with Prefetcher(lambda x: x * 2, range(5), depth=2, clock=Clock(seconds)) as source:
        assert list(source) == [0, 2, 4, 6, 8]
    assert set(seconds) == {"producer: input", "producer: prepare", "producer: wait for room"}


def test_threads_live_only_in_the_pipeline_package():
    """No module of workbench.encoding outside encoding/pipeline/ imports threading, queue or
    concurrent.futures: the plain loop meets no thread."""
    encoding = Path(__file__).resolve().parents[3] / "workbench" / "encoding"
    assert (encoding / "encoder.py").is_file()
    bad = []
    for path in sorted(encoding.rglob("*.py")):
        if "pipeline" in path.relative_to(encoding).parts:
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = []
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module:
                names = [node.module]
            if any(n.split(".")[0] in ("threading", "queue", "concurrent") for n in names):
                bad.append(f"{path.name}:{node.lineno}")
    assert bad == []
