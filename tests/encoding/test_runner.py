"""The compiled forward path (workbench.encoding.runner.ModelRunner) and its fallbacks."""

from __future__ import annotations

import shutil

import numpy as np
import pytest
import torch

from workbench import Encoder
from workbench.encoding.batching import bucket_width
from workbench.encoding.runner import ModelRunner, compile_mode
from workbench.errors import InputError

SENTENCES = [
    "The bank raised its rates again .".split(),
    "She sat on the bank of the river and watched the boats".split(),
    "Rates fell".split(),
    "An unusually long sentence with many more words than the others in this small batch".split(),
]


@pytest.mark.skipif(
    not any(shutil.which(c) for c in ("g++", "c++", "clang++")),
    reason="torch.compile on CPU needs a C++ compiler (g++, c++ or clang++)",
)
def test_compiled_encoder_matches_eager(tiny_model_dir, tiny_encoder):
    """torch.compile (inductor, frozen weights, dynamic shapes) gives the eager vectors."""
    compiled = Encoder(model=str(tiny_model_dir), device="cpu", compile=True)
    first = compiled.encode(SENTENCES)
    again = compiled.encode(SENTENCES[1:] + [["Another", "batch", "shape", "entirely"]] * 3)
    assert compiled.runner.compiled, compiled.runner.error
    eager = tiny_encoder.encode(SENTENCES)
    np.testing.assert_allclose(first.vectors, eager.vectors, atol=1e-4, rtol=1e-4)
    eager_again = tiny_encoder.encode(
        SENTENCES[1:] + [["Another", "batch", "shape", "entirely"]] * 3
    )
    np.testing.assert_allclose(again.vectors, eager_again.vectors, atol=1e-4, rtol=1e-4)


def test_single_sequence_batches_run_eagerly(tiny_model_dir, monkeypatch):
    calls = []

    def fake_compile(model, **kwargs):
        def compiled(**inputs):
            calls.append(inputs["input_ids"].shape[0])
            return model(**inputs)

        return compiled

    monkeypatch.setattr(torch, "compile", fake_compile)
    enc = Encoder(model=str(tiny_model_dir), device="cpu", compile=True)
    enc.encode([SENTENCES[0]])
    assert calls == []  # batch of one: eager, no second graph specialised on size 1
    enc.encode(SENTENCES[:2])
    assert calls and all(n >= 2 for n in calls)


def test_compile_failure_falls_back_to_eager_with_a_warning(
    tiny_model_dir, tiny_encoder, monkeypatch
):
    def broken_compile(model, **kwargs):
        def compiled(**inputs):
            raise RuntimeError("inductor: no working C++ compiler found\nlong trace")

        return compiled

    monkeypatch.setattr(torch, "compile", broken_compile)
    enc = Encoder(model=str(tiny_model_dir), device="cpu", compile=True)
    with pytest.warns(UserWarning, match="torch.compile failed .*no working C\\+\\+ compiler"):
        emb = enc.encode(SENTENCES)
    assert not enc.runner.compiled and "RuntimeError" in enc.runner.error
    np.testing.assert_allclose(emb.vectors, tiny_encoder.encode(SENTENCES).vectors, atol=1e-6)


def test_mps_is_never_compiled(tiny_encoder):
    with pytest.warns(UserWarning, match="compile=True ignored"):
        runner = ModelRunner(tiny_encoder.model, "mps", compile=True)
    assert not runner.compiled


def test_compile_modes_are_checked():
    assert compile_mode(False) is None and compile_mode(True) == "default"
    assert compile_mode("reduce-overhead") == "reduce-overhead"
    with pytest.raises(InputError, match="Unknown compile mode 'fast'"):
        compile_mode("fast")


def test_cuda_graph_mode_buckets_shapes_and_marks_steps(tiny_model_dir, tiny_encoder, monkeypatch):
    """compile="reduce-overhead": torch.compile gets the mode, batches come in bucketed shapes,
    and each call starts a new CUDA-graph step (on a CPU the graphs themselves never run)."""
    seen, steps = [], []

    def fake_compile(model, **kwargs):
        seen.append(kwargs)

        def compiled(**inputs):
            steps.append(inputs["input_ids"].shape)
            return model(**inputs)

        return compiled

    monkeypatch.setattr(torch, "compile", fake_compile)
    marks = []
    monkeypatch.setattr(torch.compiler, "cudagraph_mark_step_begin", lambda: marks.append(1))
    enc = Encoder(model=str(tiny_model_dir), device="cpu", compile="reduce-overhead")
    assert seen == [{"mode": "reduce-overhead"}] and enc.runner.cuda_graphs
    assert enc.shapes == "bucketed"
    emb = enc.encode(SENTENCES * 3)
    assert steps and len(marks) == len(steps)
    assert all(bucket_width(width, enc.max_length) == width for _, width in steps)
    np.testing.assert_allclose(emb.vectors, tiny_encoder.encode(SENTENCES * 3).vectors, atol=1e-5)


def test_attention_kernel_switch(tiny_model_dir, tiny_encoder):
    eager = Encoder(model=str(tiny_model_dir), device="cpu", attention="eager")
    assert eager.model.config._attn_implementation == "eager"
    np.testing.assert_allclose(
        eager.encode(SENTENCES).vectors, tiny_encoder.encode(SENTENCES).vectors, atol=1e-5
    )
    with pytest.raises(InputError, match="Unknown attention 'flash'"):
        Encoder(model=str(tiny_model_dir), device="cpu", attention="flash")
