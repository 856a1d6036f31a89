"""The server's preload yields to visitors: a later step waits while a visitor's script runs and
for a quiet moment after it, never longer than its limit, and the first page's steps never wait."""

from __future__ import annotations

import threading
import time

import webapp.startup as startup


def test_a_later_step_waits_for_a_visitors_run_and_a_quiet_moment_after_it():
    release = threading.Event()

    def visitor() -> None:
        with startup.visitor_run():
            release.wait(5)

    thread = threading.Thread(target=visitor)
    thread.start()
    time.sleep(0.05)
    assert startup.visitors().quiet_for() == 0.0  # a run in progress
    timer = threading.Timer(0.4, release.set)
    timer.start()
    waited = startup.wait_for_quiet(quiet_s=0.3, max_wait_s=5)
    thread.join()
    assert 0.65 <= waited < 3.0  # the run's 0.4 s, then 0.3 s of quiet


def test_the_wait_has_a_limit_while_visitors_keep_running():
    with startup.visitor_run():
        waited = startup.wait_for_quiet(quiet_s=0.2, max_wait_s=0.5)
    assert 0.5 <= waited < 2.0


def test_only_the_later_steps_wait(monkeypatch):
    order: list[str] = []
    monkeypatch.setattr(startup, "wait_for_quiet", lambda: order.append("wait") or 0.0)
    first = (("one", lambda: order.append("one")),)
    later = (("two", lambda: order.append("two")),)
    record = startup.run_steps(first + later, later, [startup.Step("one"), startup.Step("two")])
    assert order == ["one", "wait", "two"]
    assert [s.state for s in record] == ["done", "done"]
