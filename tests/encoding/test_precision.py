"""Compute dtype on the CPU: bfloat16 by default where the CPU computes in it natively, float32
elsewhere, the other one option away; cached apart, named in the results."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from workbench import Encoder
from workbench.encoding.cache import encode_cached
from workbench.encoding.device import choose_dtype, cpu_bf16_native
from workbench.encoding.embeddings import LayerwiseEmbeddings
from workbench.errors import ModelLoadError
from workbench.wsd.config import EncoderInfo
from workbench.wsd.systems import SYSTEMS, system_index_path

SENTENCES = [["The", "bank", "raised", "interest", "rates", "."], ["Unbelievably", "calm", "water"]]


def test_native_bf16_is_read_from_the_cpu_flags(tmp_path):
    amx = tmp_path / "amx"
    amx.write_text("flags\t\t: fpu sse2 avx2 avx512f amx_bf16 amx_tile\n")
    avx = tmp_path / "avx"
    avx.write_text("flags\t\t: fpu sse2 avx2 avx512f avx512_bf16\n")
    plain = tmp_path / "plain"
    plain.write_text("flags\t\t: fpu sse2 avx2 fma\n")
    assert cpu_bf16_native(amx) and cpu_bf16_native(avx)
    assert not cpu_bf16_native(plain) and not cpu_bf16_native(tmp_path / "missing")


def test_auto_is_bfloat16_on_a_cpu_with_bfloat16_instructions_else_float32(monkeypatch):
    monkeypatch.delenv("WORKBENCH_DTYPE")  # the suite's float32 (conftest)
    monkeypatch.setattr("workbench.encoding.device.cpu_bf16_native", lambda: True)
    assert choose_dtype("auto", "cpu") == torch.bfloat16
    assert choose_dtype("float32", "cpu") == torch.float32  # one option away
    monkeypatch.setattr("workbench.encoding.device.cpu_bf16_native", lambda: False)
    assert choose_dtype("auto", "cpu") == torch.float32
    assert choose_dtype("bfloat16", "cpu") == torch.bfloat16
    assert choose_dtype("auto", "mps") == torch.float32


def test_workbench_dtype_sets_what_auto_means(monkeypatch):
    monkeypatch.setattr("workbench.encoding.device.cpu_bf16_native", lambda: False)
    monkeypatch.setenv("WORKBENCH_DTYPE", "bfloat16")
    assert choose_dtype("auto", "cpu") == torch.bfloat16
    assert choose_dtype("float32", "cpu") == torch.float32  # an explicit dtype wins
    monkeypatch.setenv("WORKBENCH_DTYPE", "fp8")
    with pytest.raises(ModelLoadError, match="WORKBENCH_DTYPE='fp8' is not a dtype"):
        choose_dtype("auto", "cpu")


def test_the_compute_dtype_is_named_in_the_vectors_and_the_index_identity(
    tiny_model_dir, tiny_encoder, tmp_path
):
    bf16 = Encoder(model=str(tiny_model_dir), device="cpu", dtype="bfloat16")
    emb = bf16.encode(SENTENCES)
    assert emb.compute_dtype == "bfloat16" and tiny_encoder.encode(SENTENCES).compute_dtype == (
        "float32"
    )
    assert LayerwiseEmbeddings.load(emb.save(tmp_path / "v.npz")).compute_dtype == "bfloat16"
    assert EncoderInfo.of(bf16).dtype == EncoderInfo.of(emb).dtype == "bfloat16"
    best = SYSTEMS["best"]
    bf16_info, float32_info = EncoderInfo.of(bf16), EncoderInfo.of(tiny_encoder)
    assert system_index_path(bf16_info, best, "x") != system_index_path(float32_info, best, "x")


def test_bfloat16_on_the_cpu_is_close_and_cached_apart(tiny_model_dir, tiny_encoder, tmp_cache):
    bf16 = Encoder(model=str(tiny_model_dir), device="cpu", dtype="bfloat16")
    assert bf16.describe()["dtype"] == "bfloat16"
    a = encode_cached(tiny_encoder, SENTENCES).vectors  # float32, now in the cache
    b = encode_cached(bf16, SENTENCES).vectors  # must not be served the float32 entry
    assert b.dtype == np.float32 and a.shape == b.shape
    cos = (a * b).sum(-1) / (np.linalg.norm(a, axis=-1) * np.linalg.norm(b, axis=-1))
    assert cos.min() > 0.99 and not np.array_equal(a, b)  # close, yet computed in bfloat16
    np.testing.assert_array_equal(bf16.encode(SENTENCES).vectors, b)
    np.testing.assert_array_equal(encode_cached(tiny_encoder, SENTENCES).vectors, a)
