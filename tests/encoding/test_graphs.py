"""CUDA graphs of the eager forward (workbench.encoding.graphs) and the ``cudagraphs`` mode.

CI has no GPU, so a real CUDA graph never runs here: these tests replace the capture alone
(:meth:`GraphedForward.capture`) by an emulation with a graph's semantics (inputs copied
into fixed buffers, every replay overwriting the same output buffers) and check everything
around it: one capture per shape and thread, the pipeline reading a batch's hidden states
before the next replay, bucketed shapes, and the fallback to eager when a capture fails.
"""

from __future__ import annotations

import threading

import numpy as np
import pytest
import torch

from workbench import Encoder
from workbench.encoding.batching import bucket_width
from workbench.encoding.graphs import Captured, GraphedForward
from workbench.encoding.pipeline import PipelineConfig
from workbench.encoding.runner import ModelRunner

SENTENCES = [
    "The bank raised its rates again .".split(),
    "She sat on the bank of the river and watched the boats".split(),
    "Rates fell".split(),
    "An unusually long sentence with many more words than the others in this small batch".split(),
] * 5


def emulated_capture(self: GraphedForward, ids: torch.Tensor, mask: torch.Tensor | None):
    """A CUDA graph's contract on the CPU: fixed input buffers, and output buffers that every
    replay overwrites (so a caller reading them after the next replay reads the wrong batch)."""
    static_ids = ids.clone()
    static_mask = None if mask is None else mask.clone()

    def run() -> tuple[torch.Tensor, ...]:
        out = self.model(
            input_ids=static_ids, attention_mask=static_mask, output_hidden_states=True
        )
        return tuple(out.hidden_states)

    outputs = tuple(torch.full_like(h, float("nan")) for h in run())

    def replay() -> None:
        for buffer, hidden in zip(outputs, run(), strict=True):
            buffer.copy_(hidden)

    return Captured(static_ids, static_mask, outputs, replay)


def graphed_encoder(model_dir, monkeypatch, pipeline: PipelineConfig | None = None) -> Encoder:
    """An encoder on the CPU whose runner goes through :class:`GraphedForward` with the
    emulated capture, and whose batches are bucketed, as ``compile="cudagraphs"`` on cuda; a
    small budget makes many batches (three rows of 32 tokens)."""
    monkeypatch.setattr(GraphedForward, "capture", emulated_capture)
    enc = Encoder(model=str(model_dir), device="cpu", pipeline=pipeline, max_batch_tokens=96)
    enc.runner.graphs = GraphedForward(enc.model)
    enc.runner.mode = "cudagraphs"
    enc.shapes = "bucketed"
    return enc


def test_cudagraphs_need_cuda(tiny_model_dir, tiny_encoder):
    with pytest.warns(UserWarning, match="compile='cudagraphs' ignored: CUDA graphs need a cuda"):
        enc = Encoder(model=str(tiny_model_dir), device="cpu", compile="cudagraphs")
    assert not enc.runner.compiled and enc.runner.mode is None and enc.shapes == "exact"
    np.testing.assert_array_equal(
        enc.encode(SENTENCES).vectors, tiny_encoder.encode(SENTENCES).vectors
    )


@pytest.mark.parametrize("producer", ["thread", "process"])
def test_replayed_graphs_give_the_eager_vectors(
    tiny_model_dir, tiny_encoder, monkeypatch, producer
):
    """Every batch's hidden states are pooled before the next replay overwrites them: the same
    vectors as eager, in input order, with layers, keep and float16 storage."""
    pipeline = PipelineConfig(prefetch=2, transfer="staged", producer=producer)
    enc = graphed_encoder(tiny_model_dir, monkeypatch, pipeline)
    got = enc.encode(SENTENCES)
    want = tiny_encoder.encode(SENTENCES)
    np.testing.assert_allclose(got.vectors, want.vectors, atol=1e-5)
    keep = [[i % 2 == 0 for i in range(len(s))] for s in SENTENCES]
    got = enc.encode(SENTENCES, layers=[0, 2], keep=keep, store_dtype="float16")
    want = tiny_encoder.encode(SENTENCES, layers=[0, 2], keep=keep, store_dtype="float16")
    np.testing.assert_allclose(got.vectors, want.vectors, atol=1e-3)
    assert not np.isnan(got.vectors).any()


def test_one_capture_per_shape_and_thread(tiny_model_dir, monkeypatch):
    enc = graphed_encoder(tiny_model_dir, monkeypatch)
    # a graph per shape and mask (a batch without padding runs without one)
    shapes = {(*ids.shape, not mask.all()) for ids, mask in enc.model_inputs(SENTENCES)}
    assert all(bucket_width(width, 512) == width for _, width, _ in shapes)
    assert all(rows & (rows - 1) == 0 or rows == 96 // width for rows, width, _ in shapes)
    enc.encode(SENTENCES)
    graphs = enc.runner.graphs
    assert graphs is not None and graphs.captures == len(shapes)
    assert set(graphs.shapes) == shapes
    enc.encode(SENTENCES[::-1])  # the same shapes, already captured: replayed
    assert graphs.captures == len(shapes)
    other = threading.Thread(target=enc.encode, args=(SENTENCES,))
    other.start()
    other.join()
    assert graphs.captures == 2 * len(shapes)  # a thread never replays another's graphs


def test_a_failed_capture_falls_back_to_eager(tiny_model_dir, tiny_encoder, monkeypatch):
    def broken(self, ids, mask):
        raise RuntimeError("operation not permitted when stream is capturing\ntrace")

    enc = graphed_encoder(tiny_model_dir, monkeypatch)
    monkeypatch.setattr(GraphedForward, "capture", broken)
    with pytest.warns(UserWarning, match="CUDA graph capture failed .*not permitted"):
        got = enc.encode(SENTENCES)
    assert not enc.runner.compiled and enc.runner.graphs is None
    assert "RuntimeError" in (enc.runner.error or "")
    np.testing.assert_allclose(got.vectors, tiny_encoder.encode(SENTENCES).vectors, atol=1e-5)


def test_a_capture_out_of_memory_frees_the_graphs_and_goes_on(
    tiny_model_dir, tiny_encoder, monkeypatch
):
    """Out of memory while capturing: this thread's graphs are dropped, that batch runs
    eagerly, and later shapes are captured again (the graphs stay on)."""
    enc = graphed_encoder(tiny_model_dir, monkeypatch)
    graphs = enc.runner.graphs
    assert graphs is not None
    calls = {"n": 0}

    def sometimes_out_of_memory(self, ids, mask):
        calls["n"] += 1
        if calls["n"] == 2:
            raise RuntimeError("CUDA out of memory. Tried to allocate 2.00 GiB")
        return emulated_capture(self, ids, mask)

    monkeypatch.setattr(GraphedForward, "capture", sometimes_out_of_memory)
    got = enc.encode(SENTENCES)
    assert enc.runner.graphs is graphs and enc.runner.error is None
    shapes = {(*ids.shape, not mask.all()) for ids, mask in enc.model_inputs(SENTENCES)}
    assert len(graphs.shapes) == len(shapes) - 2  # the first dropped, the second eager
    np.testing.assert_allclose(got.vectors, tiny_encoder.encode(SENTENCES).vectors, atol=1e-5)


def test_clear_drops_this_threads_graphs(tiny_encoder, monkeypatch):
    monkeypatch.setattr(GraphedForward, "capture", emulated_capture)
    graphs = GraphedForward(tiny_encoder.model)
    ids = torch.tensor([[101, 2000, 102]])
    graphs(ids, None)
    graphs.clear()
    graphs(ids, None)
    assert graphs.captures == 2


def test_runner_replays_with_the_new_inputs(tiny_encoder, monkeypatch):
    """A replay sees the inputs of its call, not those it was captured with."""
    monkeypatch.setattr(GraphedForward, "capture", emulated_capture)
    runner = ModelRunner(tiny_encoder.model, "cpu")
    runner.graphs = GraphedForward(tiny_encoder.model)
    a = torch.tensor([[101, 2000, 102], [101, 2001, 102]])
    b = torch.tensor([[101, 3000, 102], [101, 3001, 102]])
    with torch.inference_mode():
        first = runner(a, None).hidden_states[-1].clone()
        second = runner(b, None).hidden_states[-1].clone()
        want = tiny_encoder.model(input_ids=b, output_hidden_states=True).hidden_states[-1]
    assert runner.graphs is not None and runner.graphs.captures == 1
    assert not torch.equal(first, second)
    torch.testing.assert_close(second, want)
