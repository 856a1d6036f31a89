"""The app's background builds: one thread per key shared by every caller, progress and result
on the shared Build, an error kept for the page and a failed build started again."""

from __future__ import annotations

import threading
import time

from webapp.builds import Build, background, settle


def _wait(build: Build) -> Build:
    assert build.thread is not None
    build.thread.join(timeout=30)
    assert build.done
    return build


def test_one_build_per_key_shared_by_every_caller():
    calls: list[int] = []
    gate = threading.Event()

    def work(build: Build) -> str:
        calls.append(1)
        build.message, build.stage, build.fraction = "building", "half way", 0.5
        gate.wait(timeout=30)
        return "index"

    first = background(("test-builds", "shared"), work)
    second = background(("test-builds", "shared"), work)  # running: the same build
    assert second is first
    assert settle(first, seconds=5).message == "building"  # settles once it says it builds
    assert not first.done and first.fraction == 0.5
    gate.set()
    _wait(first)
    assert (first.result, first.error, first.fraction) == ("index", None, 1.0)
    assert background(("test-builds", "shared"), work) is first  # done: not built again
    assert len(calls) == 1


def test_a_failed_build_keeps_its_error_and_starts_again():
    attempts: list[int] = []

    def work(build: Build) -> int:
        attempts.append(1)
        if len(attempts) == 1:
            raise OSError("disk full")
        return len(attempts)

    failed = _wait(background(("test-builds", "retry"), work))
    assert isinstance(failed.error, OSError) and failed.result is None
    again = _wait(background(("test-builds", "retry"), work))
    assert again is not failed
    assert (again.result, again.error) == (2, None)


def test_settle_waits_for_quick_work_only():
    quick = settle(background(("test-builds", "quick"), lambda build: 42), seconds=10)
    assert quick.done and quick.result == 42
    gate = threading.Event()

    def slow(build: Build) -> None:
        gate.wait(timeout=30)

    pending = settle(background(("test-builds", "slow"), slow), seconds=0.2)
    assert not pending.done  # gave up after 0.2 s: the page shows the progress instead
    gate.set()
    _wait(pending)


def test_distinct_keys_get_distinct_builds():
    a = _wait(background(("test-builds", "a"), lambda build: "a"))
    b = _wait(background(("test-builds", "b"), lambda build: "b"))
    assert a is not b and (a.result, b.result) == ("a", "b")


def test_a_build_says_how_long_it_has_run_and_how_long_is_left():

    build = Build(started=time.monotonic() - 125)
    assert build.left() != build.left()  # NaN before any progress
    assert build.timing() == "2 min 5 s so far"
    build.fraction = 0.25
    assert build.timing().startswith("2 min 5 s so far, about 6 min 1") and 370 < build.left() < 380
