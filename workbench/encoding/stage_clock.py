"""The profile seam of :meth:`workbench.Encoder.encode`: a clock the call reports its stages to.

``Encoder.encode(..., clock=c)`` calls ``c(stage)`` as each of its stages ends, in this order:
``input`` (the input checked, the output rows laid out and allocated), ``tokenize``, ``layout``
(windows and batches), then per batch ``prep`` (built), ``h2d`` (moved to the device),
``forward``, ``pooling``, ``d2h`` (copied back; torch only: ONNX Runtime's batches are already
on the host) and ``write``, and last ``finish`` (the vectors checked, the result made). Each
built batch is passed to ``c.count``. With ``c.in_turn`` the call runs the plain loop whatever
its pipeline setting (each stage alone); otherwise it runs as it would (overlapped where the
setting says so) and the overlapped run adds each thread's seconds per activity to
``c.threads``. Without a clock the call reports nothing. The implementation that times the
stages is the bench's (``bench/lib/stages.py``); the library only calls it.

Example::

    class Count:
        in_turn, threads = True, None
        def __init__(self): self.seen = []
        def __call__(self, stage=None): self.seen.append(stage)
        def count(self, batch): pass

    enc.encode(["A bank."], clock=(c := Count()))
    c.seen[:3]          # ['input', 'tokenize', 'layout']
"""

from __future__ import annotations

from typing import Protocol

from workbench.encoding.batching import Batch

#: The stages an encode call reports, in order (``prep`` .. ``write`` once per batch).
STAGES: tuple[str, ...] = (
    "input", "tokenize", "layout", "prep", "h2d", "forward", "pooling", "d2h", "write", "finish",
)  # fmt: skip


class StageClock(Protocol):
    """What :meth:`workbench.Encoder.encode` calls when it is given a clock (see the module)."""

    #: run the plain loop, stage after stage, whatever the pipeline setting
    in_turn: bool
    #: the overlapped run's seconds per ``"thread: activity"`` (None: not wanted)
    threads: dict[str, float] | None

    def __call__(self, stage: str | None = None) -> None:
        """``stage`` has just ended (None: only restart the clock)."""

    def count(self, batch: Batch) -> None:
        """A batch was built (called before its stages are reported)."""


def no_clock(stage: str | None = None) -> None:
    """The clock of an unprofiled call: reports go nowhere."""
