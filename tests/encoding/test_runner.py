"""The compiled forward path (workbench.encoding.runner.ModelRunner) and its fallbacks."""

from __future__ import annotations

import shutil

import numpy as np
import pytest
import torch

from workbench import Encoder
from workbench.encoding.runner import ModelRunner
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


def test_attention_kernel_switch(tiny_model_dir, tiny_encoder):
    eager = Encoder(model=str(tiny_model_dir), device="cpu", attention="eager")
    assert eager.model.config._attn_implementation == "eager"
    np.testing.assert_allclose(
        eager.encode(SENTENCES).vectors, tiny_encoder.encode(SENTENCES).vectors, atol=1e-5
    )
    with pytest.raises(InputError, match="Unknown attention 'flash'"):
        Encoder(model=str(tiny_model_dir), device="cpu", attention="flash")
