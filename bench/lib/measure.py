"""What a benchmark measures besides its own results: the median wall time of a call, and the
CPU seconds and memory of other processes (a server it started, the browser), read from Linux's
``/proc``.

Example::

    seconds = median_time(lambda: projector.fit(x), repeats=3)
    before = cpu_seconds(server.pid)
"""

from __future__ import annotations

import os
import statistics
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any


def median_time(fn: Callable[[], Any], repeats: int) -> float:
    """The median of ``repeats`` wall-clock timings of ``fn()``, in seconds."""
    times = []
    for _ in range(repeats):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return statistics.median(times)


def cpu_seconds(pid: int) -> float:
    """User + system CPU seconds of a process and its reaped children (Linux /proc)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return sum(int(v) for v in fields[11:15]) / os.sysconf("SC_CLK_TCK")


def wait_idle(pid: int, quiet: float = 1.5, limit: float = 120.0) -> None:
    """Wait until process ``pid`` has used under 5% of a CPU for ``quiet`` seconds (e.g. the
    app's preload thread has loaded the model), at most ``limit`` seconds (then return)."""
    end = time.perf_counter() + limit
    last, since = cpu_seconds(pid), time.perf_counter()
    while time.perf_counter() < end:
        time.sleep(0.25)
        now = cpu_seconds(pid)
        if now - last > 0.05 * 0.25:
            since = time.perf_counter()
        elif time.perf_counter() - since >= quiet:
            return
        last = now


def chromium_rss() -> float:
    """Resident memory of every Chromium process on this machine, in MB (Linux /proc)."""
    total = 0
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            if b"chromium" not in (proc / "cmdline").read_bytes():
                continue
            for line in (proc / "status").read_text().splitlines():
                if line.startswith("VmRSS:"):
                    total += int(line.split()[1])
        except OSError:
            continue
    return total / 1024
