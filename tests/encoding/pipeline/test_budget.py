"""The batch token budget (workbench.encoding.pipeline.budget): fixed on CPU, measured on a GPU."""

from __future__ import annotations

import pytest
import torch

from workbench import Encoder
from workbench.encoding.batching import CPU_BATCH_TOKENS
from workbench.encoding.pipeline.budget import measure_batch_tokens


class FakeDevice:
    """A forward pass whose duration follows a throughput curve, on a fake clock."""

    def __init__(self, rate, oom_from=None):
        self.rate, self.oom_from, self.now = rate, oom_from, 0.0

    def forward(self, ids, mask):
        n = ids.numel()
        if self.oom_from is not None and n >= self.oom_from:
            raise torch.OutOfMemoryError("CUDA out of memory. Tried to allocate 8.00 GiB")
        self.now += n / self.rate(n)

    def clock(self):
        return self.now


def test_smallest_budget_near_the_best_throughput():
    rates = {1024: 1e5, 2048: 2e5, 4096: 3.9e5, 8192: 4.0e5, 16384: 4.05e5}
    dev = FakeDevice(lambda n: rates[n])
    choice = measure_batch_tokens(dev.forward, "cpu", 100, tuple(rates), clock=dev.clock)
    assert choice.tokens == 4096  # within 5% of the best (8192); 16384 was never needed
    assert [b for b, _ in choice.measured] == [1024, 2048, 4096, 8192]
    assert choice.measured[1][1] == pytest.approx(2e5)
    assert "less than 5%" in choice.note


def test_out_of_memory_stops_the_search():
    budgets = (1024, 2048, 4096, 8192)
    dev = FakeDevice(lambda n: float(n), oom_from=8192)
    choice = measure_batch_tokens(dev.forward, "cpu", 100, budgets, clock=dev.clock)
    assert choice.tokens == 4096 and "out of memory" in choice.note
    dev = FakeDevice(lambda n: float(n), oom_from=1)  # even the smallest: it is used, and said
    choice = measure_batch_tokens(dev.forward, "cpu", 100, budgets, clock=dev.clock)
    assert choice.tokens == 1024 and choice.measured == () and "smallest" in choice.note


def test_other_errors_are_not_taken_for_memory():
    def broken(ids, mask):
        raise RuntimeError("index out of range in self")

    with pytest.raises(RuntimeError, match="index out of range"):
        measure_batch_tokens(broken, "cpu", 100, (64,))


def test_real_forward_on_cpu(tiny_encoder):
    model = tiny_encoder.model

    def forward(ids, mask):
        return model(input_ids=ids, attention_mask=mask, output_hidden_states=True)

    choice = measure_batch_tokens(forward, "cpu", 1000, (64, 128, 256), seq_len=16, repeats=1)
    assert choice.tokens in (64, 128, 256) and all(rate > 0 for _, rate in choice.measured)


def test_encoder_budget_on_cpu(tiny_model_dir, tiny_encoder):
    assert tiny_encoder.max_batch_tokens == CPU_BATCH_TOKENS
    assert tiny_encoder.budget.note == "fixed"
    given = Encoder(model=str(tiny_model_dir), device="cpu", max_batch_tokens=300)
    assert given.max_batch_tokens == 300 and given.budget.note == "given"
    assert given.describe()["max_batch_tokens"] == 300
