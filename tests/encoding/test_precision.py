"""Compute dtype on the CPU: by default the dtype a short probe measured the faster on this CPU
(remembered once per machine), the other one option away; cached apart, named in the results."""

from __future__ import annotations

import time

import numpy as np
import pytest
import torch

from workbench import Encoder
from workbench.encoding.cache import encode_cached
from workbench.encoding.device import choose_dtype, cpu_bf16_native, explain_dtype, torch_dtype
from workbench.encoding.dtype_probe import ProbeShape, decide_dtype, probe_cpu_dtype, probe_path
from workbench.encoding.embeddings import LayerwiseEmbeddings
from workbench.errors import ModelLoadError
from workbench.wsd.builds import system_index_path
from workbench.wsd.config import EncoderInfo
from workbench.wsd.systems.registry import SYSTEMS

SENTENCES = [["The", "bank", "raised", "interest", "rates", "."], ["Unbelievably", "calm", "water"]]


def test_the_decision_is_the_faster_dtype_with_float32_winning_ties():
    assert decide_dtype(0.010, 0.005)[0] == "bfloat16"  # twice as fast
    assert decide_dtype(0.010, 0.020)[0] == "float32"  # the Xeon: half as fast
    assert decide_dtype(0.010, 0.300)[0] == "float32"  # emulated bfloat16
    assert decide_dtype(0.010, 0.010)[0] == "float32"  # a tie: the more precise
    assert decide_dtype(0.0100, 0.0097)[0] == "float32"  # 3% faster: within the margin
    assert decide_dtype(0.0100, 0.0094)[0] == "bfloat16"  # 6% faster: over it
    assert decide_dtype(0.0100, 0.0097, margin=0.0)[0] == "bfloat16"
    dtype, reason = decide_dtype(0.010, 0.025)
    assert "2.50x slower" in reason
    assert "only 1.03x faster" in decide_dtype(0.0100, 0.0097)[1]
    for bad in (0.0, -1.0, float("nan"), float("inf")):
        with pytest.raises(ValueError):
            decide_dtype(bad, 0.01)


def test_the_probe_times_the_model_sized_product_briefly_and_is_remembered(monkeypatch, tmp_cache):
    shape = ProbeShape(hidden=32, intermediate=64, tokens=512)
    start = time.perf_counter()
    probe = probe_cpu_dtype(shape)
    assert time.perf_counter() - start < 1.0 and probe.probe_s < 1.0
    assert not probe.remembered and probe.chosen in ("float32", "bfloat16")
    assert set(probe.seconds) == {"float32", "bfloat16"} and 128 <= probe.rows <= 512
    assert probe.chosen == decide_dtype(probe.seconds["float32"], probe.seconds["bfloat16"])[0]
    assert probe_path().is_file()

    def no_measuring(*args, **kwargs):
        raise AssertionError("measured again")

    monkeypatch.setattr("workbench.encoding.dtype_probe.time_products", no_measuring)
    again = probe_cpu_dtype(shape)  # once per machine: read back, not measured
    assert again.remembered and again.chosen == probe.chosen and again.seconds == probe.seconds
    with pytest.raises(AssertionError, match="measured again"):
        probe_cpu_dtype(ProbeShape(hidden=48, intermediate=96, tokens=512))  # another size


def test_a_damaged_record_is_measured_over(monkeypatch, tmp_cache):
    probe_path().parent.mkdir(parents=True, exist_ok=True)
    probe_path().write_text("{not json")
    fake = ({"float32": 0.02, "bfloat16": 0.01}, 256)
    monkeypatch.setattr("workbench.encoding.dtype_probe.time_products", lambda shape: fake)
    probe = probe_cpu_dtype(ProbeShape(hidden=32, intermediate=64))
    assert probe.chosen == "bfloat16" and not probe.remembered
    assert probe_cpu_dtype(ProbeShape(hidden=32, intermediate=64)).remembered


@pytest.mark.parametrize(
    ("timings", "auto"), [((0.02, 0.01), "bfloat16"), ((0.01, 0.3), "float32")]
)
def test_auto_on_the_cpu_is_the_probe_s_faster_dtype(monkeypatch, tmp_cache, timings, auto):
    monkeypatch.delenv("WORKBENCH_DTYPE")  # the suite's float32 (conftest)
    fake = ({"float32": timings[0], "bfloat16": timings[1]}, 2048)
    monkeypatch.setattr("workbench.encoding.dtype_probe.time_products", lambda shape: fake)
    assert choose_dtype("auto", "cpu") == torch_dtype(auto)
    choice = explain_dtype("auto", "cpu")
    assert choice.name == auto and "remembered" in choice.reason and "GFLOP/s" in choice.reason
    assert choose_dtype("float32", "cpu") == torch.float32  # one option away
    assert choose_dtype("bfloat16", "cpu") == torch.bfloat16
    assert explain_dtype("bfloat16", "cpu").reason == "asked for"
    assert choose_dtype("auto", "mps") == torch.float32
    assert cpu_bf16_native() == (auto == "bfloat16")  # what fine-tuning's auto precision asks


def test_workbench_dtype_sets_what_auto_means_without_probing(monkeypatch):
    def no_probe(*args, **kwargs):
        raise AssertionError("probed")

    monkeypatch.setattr("workbench.encoding.device.probe_cpu_dtype", no_probe)
    monkeypatch.setenv("WORKBENCH_DTYPE", "bfloat16")
    assert choose_dtype("auto", "cpu") == torch.bfloat16
    assert explain_dtype("auto", "cpu").reason == "auto: WORKBENCH_DTYPE=bfloat16"
    assert choose_dtype("float32", "cpu") == torch.float32  # an explicit dtype wins
    monkeypatch.setenv("WORKBENCH_DTYPE", "fp8")
    with pytest.raises(ModelLoadError, match="WORKBENCH_DTYPE='fp8' is not a dtype"):
        choose_dtype("auto", "cpu")


def test_the_encoder_probes_its_own_model_size(monkeypatch, tiny_model_dir, tmp_cache):
    monkeypatch.delenv("WORKBENCH_DTYPE")
    shapes = []

    def fake(shape):
        shapes.append(shape)
        return {"float32": 0.01, "bfloat16": 0.3}, 128

    monkeypatch.setattr("workbench.encoding.dtype_probe.time_products", fake)
    enc = Encoder(model=str(tiny_model_dir), device="cpu", backend="torch")
    assert shapes == [ProbeShape(hidden=32, intermediate=64)]
    assert enc.dtype == torch.float32 and enc.dtype_choice.name == "float32"
    assert "30.00x slower" in enc.dtype_choice.reason


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
