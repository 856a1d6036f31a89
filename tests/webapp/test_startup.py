"""The preload stands aside for visitors: later steps wait while a visitor's script run is under
way, and in the first seconds until a first run has ended; every wait has a deadline."""

from __future__ import annotations

import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

import webapp.startup as startup


@pytest.fixture(autouse=True)
def fresh_visits():
    startup.visits_now.clear()
    yield
    startup.visits_now.clear()


def test_no_visitor_and_the_first_seconds_past_means_no_wait():
    assert startup.yield_to_visitors(time.monotonic() - 60) < startup.FIRST_VISIT_SECONDS


def test_a_later_step_waits_for_a_visitors_run_to_end():
    inside, release, ended = threading.Event(), threading.Event(), threading.Event()

    def visitor() -> None:
        with startup.visitor_run():
            inside.set()
            release.wait(10)
        ended.set()

    thread = threading.Thread(target=visitor)
    thread.start()
    inside.wait(10)
    threading.Timer(0.3, release.set).start()
    startup.yield_to_visitors(time.monotonic() - 60)
    assert ended.is_set() or startup.visits_now().active == 0  # it returned after the run ended
    thread.join(10)


def test_in_the_first_seconds_it_waits_for_a_first_visit(monkeypatch):
    monkeypatch.setattr(startup, "FIRST_VISIT_SECONDS", 0.3)
    monkeypatch.setattr(startup, "FIRST_DRAW_SECONDS", 0.0)
    assert startup.yield_to_visitors(time.monotonic()) >= 0.25
    with startup.visitor_run():
        pass  # a first run ended: no more waiting for one
    assert startup.yield_to_visitors(time.monotonic()) < 0.25


def test_after_the_first_run_it_waits_while_the_browser_draws_that_page(monkeypatch):
    """The first run has sent its page: the later steps wait FIRST_DRAW_SECONDS more, once."""
    monkeypatch.setattr(startup, "FIRST_DRAW_SECONDS", 0.3)
    assert startup.yield_to_visitors(time.monotonic() - 60) < 0.25  # no run yet, no wait
    with startup.visitor_run():
        pass
    first_end = startup.visits_now().first_end
    assert 0.2 <= startup.yield_to_visitors(time.monotonic() - 60) < 2
    with startup.visitor_run():  # a later run does not start the wait again
        pass
    assert startup.visits_now().first_end == first_end
    assert startup.yield_to_visitors(time.monotonic() - 60) < 0.25


def test_a_run_that_never_ends_holds_the_preload_no_longer_than_the_deadline(monkeypatch):
    monkeypatch.setattr(startup, "MAX_YIELD_SECONDS", 0.2)
    startup.visits_now().active += 1  # a run under way that does not end
    waited = startup.yield_to_visitors(time.monotonic() - 60)
    assert waited >= 0.2 and startup.visits_now().active == 1


def test_run_steps_yields_only_from_the_first_view_on(monkeypatch):
    calls: list[str] = []
    monkeypatch.setattr(startup, "yield_to_visitors", lambda started: calls.append("yield"))
    steps = [(n, lambda n=n: calls.append(n)) for n in ("model", "view", "umap")]
    record = startup.run_steps(steps, first_view=2)
    assert calls == ["model", "view", "yield", "umap"]
    assert [s.state for s in record] == ["done", "done", "done"]


def test_a_step_that_meets_a_concurrent_import_is_tried_once_more(monkeypatch):
    monkeypatch.setattr(startup, "IMPORT_RETRY_SECONDS", 0.0)
    tries: list[int] = []

    def flaky() -> None:
        tries.append(1)
        if len(tries) == 1:
            raise ImportError("cannot import name 'x' (most likely due to a circular import)")

    def broken() -> None:
        raise ImportError("no module named 'nowhere'")

    record = startup.run_steps([("flaky", flaky), ("broken", broken)])
    assert len(tries) == 2 and record[0].state == "done"
    assert record[1].state == "failed" and "nowhere" in record[1].error


def test_a_plan_that_cannot_be_loaded_is_one_failed_step_and_a_plan_runs_its_steps():
    def unloadable() -> tuple[startup.Steps, int | None]:
        raise ImportError("no module named 'torch'")

    record = startup.run_plan(unloadable)
    assert [(s.name, s.state) for s in record] == [("the preload's code", "failed")]
    assert "torch" in record[0].error
    ran: list[str] = []
    record = startup.run_plan(lambda: ([("a", lambda: ran.append("a"))], None))
    assert ran == ["a"] and [(s.name, s.state) for s in record] == [("a", "done")]


#: In a new process: pandas imported slowly in one thread (its module in ``sys.modules``, half
#: made, for a second), then plotly's lookup of it in another, as a figure does; argv[1]
#: "guarded" enters ``visitor_run`` first.
SLOW_PANDAS = r"""
import importlib.abc, importlib.machinery, sys, threading, time

class Slow(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path, target=None):
        if name != "pandas":
            return None
        spec = importlib.machinery.PathFinder.find_spec(name, path)
        run = spec.loader.exec_module
        def slowly(module):
            time.sleep(1.0)  # the module is in sys.modules, half made, meanwhile
            run(module)
        spec.loader.exec_module = slowly
        return spec

sys.meta_path.insert(0, Slow())
import webapp.startup as startup
from _plotly_utils.optional_imports import get_module

threading.Thread(target=lambda: __import__("pandas")).start()
time.sleep(0.3)
if sys.argv[1] == "guarded":
    with startup.visitor_run():
        pd = get_module("pandas", should_load=False)
else:
    pd = get_module("pandas", should_load=False)
print("whole" if hasattr(pd, "Series") else "half")
"""


@pytest.mark.parametrize(("mode", "seen"), [("bare", "half"), ("guarded", "whole")])
def test_a_visitors_run_sees_pandas_whole_while_another_thread_imports_it(mode, seen):
    """The race that broke a figure on the Explore page ("partially initialized module
    'pandas'"): without the guard, plotly's lookup meets the half-made module; a visitor's run
    waits for the import to end."""
    repo = Path(__file__).resolve().parents[2]
    done = subprocess.run([sys.executable, "-c", SLOW_PANDAS, mode], cwd=repo, text=True,
                          capture_output=True, timeout=120)  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert done.stdout.split()[-1] == seen
