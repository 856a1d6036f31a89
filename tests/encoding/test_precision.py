"""Compute dtype on the CPU: float32 by default, bfloat16 one option away, cached apart."""

from __future__ import annotations

import numpy as np
import torch

from workbench import Encoder
from workbench.encoding.cache import encode_cached
from workbench.encoding.models import choose_dtype, cpu_bf16_native

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


def test_float32_stays_the_cpu_default():
    assert choose_dtype("auto", "cpu") == torch.float32
    assert choose_dtype("bfloat16", "cpu") == torch.bfloat16


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
