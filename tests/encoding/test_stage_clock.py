"""The encoder's profile seam (``Encoder.encode(..., clock=...)``): the stages it reports."""

from __future__ import annotations

import re

import numpy as np
import pytest

from workbench.encoding.batching import Batch
from workbench.encoding.encoder import Encoder
from workbench.encoding.pipeline.overlap import PipelineConfig

SENTENCES = ["The bank raised its rates.", "She sat on the bank of the river and watched it.",
             "A", "Time flies like an arrow; fruit flies like a banana."] * 7  # fmt: skip


class Recorder:
    """A clock that keeps what it is told."""

    def __init__(self, in_turn: bool = True, threads: dict | None = None) -> None:
        self.in_turn, self.threads = in_turn, threads
        self.stages: list[str | None] = []
        self.batches: list[Batch] = []

    def __call__(self, stage: str | None = None) -> None:
        self.stages.append(stage)

    def count(self, batch: Batch) -> None:
        self.batches.append(batch)


@pytest.mark.parametrize(
    ("backend", "per_batch"),
    [("torch", "prep h2d forward pooling d2h write"), ("onnx", "prep forward pooling write")],
)
def test_each_stage_is_reported_in_order_and_the_vectors_are_the_same(
    tiny_model_dir, backend, per_batch
):
    enc = Encoder(model=str(tiny_model_dir), device="cpu", backend=backend, max_batch_tokens=64)
    clock = Recorder()
    emb = enc.encode(SENTENCES, clock=clock)
    told = " ".join(s for s in clock.stages if s is not None)
    assert re.fullmatch(rf"input tokenize layout( {per_batch})+ finish", told), told
    assert told.count(" prep") == len(clock.batches) > 3
    np.testing.assert_array_equal(emb.vectors, enc.encode(SENTENCES).vectors)


def test_a_clock_in_turn_runs_the_plain_loop_where_the_setting_overlaps(tiny_model_dir):
    enc = Encoder(model=str(tiny_model_dir), device="cpu", backend="torch",
                  pipeline=PipelineConfig(overlap=True))  # fmt: skip
    in_turn, overlapped = Recorder(), Recorder(in_turn=False, threads={})
    a = enc.encode(SENTENCES, clock=in_turn)
    b = enc.encode(SENTENCES, clock=overlapped)
    assert "h2d" in in_turn.stages and in_turn.batches
    assert "h2d" not in overlapped.stages and overlapped.threads  # the threads' own clocks
    np.testing.assert_allclose(a.vectors, b.vectors, atol=1e-6)
