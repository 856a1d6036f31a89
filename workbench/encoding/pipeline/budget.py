"""The padded-token budget of a batch on cuda, measured when the encoder loads.

A GPU needs far larger batches than a CPU to be busy, and how large depends on the GPU and the
model, so :func:`measure_batch_tokens` measures it: the bare forward pass (all hidden states)
on synthetic batches of growing budgets, stopping at the first out-of-memory or once
throughput stops growing, and returns the smallest budget within 5% of the best throughput (a
larger one only costs memory). Elsewhere the encoder uses a fixed budget
(:data:`workbench.encoding.batching.CPU_BATCH_TOKENS`).

Example::

    choice = measure_batch_tokens(forward, "cuda", vocab_size=30522)
    choice.tokens, choice.measured        # a budget, ((8192, tokens/s), (16384, tokens/s), ...)
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import torch

GPU_CANDIDATES: tuple[int, ...] = (8192, 16384, 32768, 65536, 131072)  # budgets tried on a GPU


@dataclass(frozen=True)
class BudgetChoice:
    """The budget chosen for a device, and the measurements behind it.

    Attributes:
        tokens: padded tokens per batch.
        measured: ``(budget, tokens per second)`` of each budget tried, in order.
        note: why the search stopped (saturated, out of memory, all tried), or ``fixed`` (the
            CPU's budget) or ``given`` (the caller's).
    """

    tokens: int
    measured: tuple[tuple[int, float], ...]
    note: str


def is_out_of_memory(exc: BaseException) -> bool:
    """Whether ``exc`` is an allocator's out-of-memory error (CUDA's or the CPU's)."""
    text = str(exc).lower()
    return type(exc).__name__ == "OutOfMemoryError" or (
        isinstance(exc, RuntimeError) and ("out of memory" in text or "can't allocate" in text)
    )


def measure_batch_tokens(
    forward: Callable[[torch.Tensor, torch.Tensor | None], Any],
    device: str,
    vocab_size: int,
    candidates: Sequence[int] = GPU_CANDIDATES,
    seq_len: int = 32,
    repeats: int = 3,
    tolerance: float = 0.05,
    clock: Callable[[], float] = time.perf_counter,
) -> BudgetChoice:
    """The padded-token budget at which the forward pass is (nearly) fastest on ``device``.

    Args:
        forward: ``forward(ids, mask)``: the model with every hidden state, as encoding runs it
            (called with ``mask`` None: the synthetic batches have no padding).
        device: where it runs.
        vocab_size: ids are drawn from ``[0, vocab_size)`` (seeded).
        candidates: budgets to try, smallest first.
        seq_len: tokens per synthetic sequence (about a SemCor sentence's, with specials).
        repeats: timed forward passes per budget (after one warm-up pass).
        tolerance: throughput gain below which a larger budget is not worth it.
        clock: the timer (seconds).

    Returns:
        the smallest budget within ``tolerance`` of the best measured throughput.
    """
    import torch

    gen = torch.Generator().manual_seed(0)
    cuda = device.startswith("cuda")

    def sync() -> None:
        if cuda:
            torch.cuda.synchronize(device)

    measured: list[tuple[int, float]] = []
    note = "all candidates tried"
    for budget in sorted(candidates):
        rows = max(1, budget // seq_len)
        ids = torch.randint(0, vocab_size, (rows, seq_len), generator=gen).to(device)
        try:
            with torch.inference_mode():
                forward(ids, None)
                sync()
                start = clock()
                for _ in range(repeats):
                    forward(ids, None)
                sync()
                elapsed = max(clock() - start, 1e-9)
        except (RuntimeError, MemoryError) as exc:
            if not is_out_of_memory(exc):
                raise
            if cuda:
                torch.cuda.empty_cache()
            note = f"{budget} tokens ran out of memory"
            break
        finally:
            del ids
        measured.append((budget, rows * seq_len * repeats / elapsed))
        if len(measured) >= 2 and measured[-1][1] < measured[-2][1] * (1 + tolerance):
            note = f"throughput grew less than {tolerance:.0%} from {measured[-2][0]} to {budget}"
            break
    if not measured:
        smallest = min(candidates)
        return BudgetChoice(smallest, (), f"{note}; using the smallest budget, {smallest}")
    best = max(rate for _, rate in measured)
    chosen = next(b for b, rate in measured if rate >= best * (1 - tolerance))
    return BudgetChoice(chosen, tuple(measured), note)
