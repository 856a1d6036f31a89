"""The app's memo: a value being computed by one thread (the server's preload) is computed once;
a second thread asking meanwhile waits for it, and computes it itself only when that failed."""

from __future__ import annotations

import contextlib
import threading

import pytest

from webapp.memo import Memo


def test_a_value_under_way_is_waited_for_not_computed_again():
    memo, started, release = Memo(4), threading.Event(), threading.Event()
    calls, waited = [], []

    def slow():
        calls.append("preload")
        started.set()
        release.wait(10)
        return "vectors"

    preload = threading.Thread(target=lambda: memo.get("k", slow))
    preload.start()
    started.wait(10)

    @contextlib.contextmanager
    def waiting():
        waited.append(True)
        release.set()  # the preload finishes while the page waits
        yield

    assert memo.get("k", lambda: calls.append("page") or "again", waiting) == "vectors"
    preload.join(10)
    assert calls == ["preload"] and waited == [True] and "k" in memo


def test_a_failed_computation_is_done_again_by_the_waiting_thread():
    memo, started, release = Memo(4), threading.Event(), threading.Event()

    def failing():
        started.set()
        release.wait(10)
        raise RuntimeError("stopped")

    errors = []

    def preload():
        try:
            memo.get("k", failing)
        except RuntimeError as exc:
            errors.append(exc)

    thread = threading.Thread(target=preload)
    thread.start()
    started.wait(10)
    waited = []

    @contextlib.contextmanager
    def waiting():
        waited.append(True)
        release.set()  # the preload fails while the page waits
        yield

    assert memo.get("k", lambda: "mine", waiting) == "mine"
    thread.join(10)
    assert waited == [True] and len(errors) == 1 and memo.get("k", lambda: "never") == "mine"


def test_least_recently_used_values_leave_first():
    memo = Memo(2)
    for key in "abc":
        memo.get(key, lambda key=key: key.upper())
    assert "a" not in memo and "b" in memo and "c" in memo
    with pytest.raises(ZeroDivisionError):
        memo.get("d", lambda: 1 / 0)
    assert memo.get("d", lambda: "D") == "D"  # a failure leaves nothing behind
