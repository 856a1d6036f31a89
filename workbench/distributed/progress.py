"""Progress of a whole sharded job on the driver: shards and rows done, rows per second, ETA.

The ETA comes from the input items (lines, rows, sentences) still to do at the rate items were
done so far in this run; shards skipped as already complete count neither way.

Example::

    progress = JobProgress(total_shards=40, total_items=80_000)
    progress.add(items=2_000, rows=51_234, ok=True)
    progress.line()
    # 'shards 1/40 (0 failed), 51,234 rows, 8,540 rows/s, 2.5% of items, ETA 0:03:54'
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import timedelta


@dataclass
class JobProgress:
    """Counters of one run of a job (shards computed in this run only)."""

    total_shards: int
    total_items: int
    done_shards: int = 0
    failed_shards: int = 0
    done_items: int = 0
    rows: int = 0
    started: float = field(default_factory=time.monotonic)

    def add(self, items: int, rows: int, ok: bool) -> None:
        """Count one finished shard (a failed one counts its items as done: no retry here)."""
        self.done_shards += 1
        self.failed_shards += 0 if ok else 1
        self.done_items += int(items)
        self.rows += int(rows)

    @property
    def elapsed(self) -> float:
        return time.monotonic() - self.started

    @property
    def rows_per_second(self) -> float:
        return self.rows / self.elapsed if self.elapsed > 0 else 0.0

    @property
    def eta_seconds(self) -> float | None:
        """Seconds left at the item rate so far (None before the first shard)."""
        if self.done_items == 0:
            return None
        rate = self.done_items / max(self.elapsed, 1e-9)
        return max(0.0, (self.total_items - self.done_items) / rate)

    def line(self) -> str:
        """One line for the terminal."""
        share = 100.0 * self.done_items / max(self.total_items, 1)
        eta = self.eta_seconds
        eta_text = "?" if eta is None else str(timedelta(seconds=round(eta)))
        return (
            f"shards {self.done_shards}/{self.total_shards} ({self.failed_shards} failed), "
            f"{self.rows:,} rows, {self.rows_per_second:,.0f} rows/s, {share:.1f}% of items, "
            f"ETA {eta_text}"
        )


def printer(min_interval: float = 1.0) -> Callable[[JobProgress], None]:
    """A progress callback printing :meth:`JobProgress.line` to stderr, at most once per
    ``min_interval`` seconds (always the last shard)."""
    last = [0.0]

    def show(progress: JobProgress) -> None:
        now = time.monotonic()
        final = progress.done_shards == progress.total_shards
        if final or now - last[0] >= min_interval:
            last[0] = now
            print(f"embed: {progress.line()}", file=sys.stderr, flush=True)

    return show
