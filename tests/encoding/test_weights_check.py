"""A model's weights are checked finite when it is loaded, whatever the CPU's kernels do with
NaN: safetensors files scanned in chunks (every float dtype, damaged headers refused), a
``.bin`` model on its loaded state dict, shards by their index, and each file's verdict kept so
that a second load does not scan again."""

from __future__ import annotations

import json
import os
import shutil
import struct
from pathlib import Path

import numpy as np
import pytest
import torch
from safetensors.torch import load_file, save_file

from workbench.encoding import weights_check
from workbench.encoding.models import load_model, resolve_model
from workbench.encoding.weights_check import check_file, non_finite_bits, scan_safetensors
from workbench.errors import ModelLoadError

FLOAT_DTYPES = [torch.float64, torch.float32, torch.float16, torch.bfloat16]
FLOAT_DTYPES += [d for d in (getattr(torch, "float8_e5m2", None),) if d is not None]


def _weights(path: Path, dtype: torch.dtype, bad: float | None, at: int = 777) -> Path:
    """A file of three tensors, the middle one of ``dtype`` with ``bad`` at element ``at``."""
    middle = torch.linspace(-2, 2, 1000).to(dtype)
    if bad is not None:
        middle[at] = bad
    state = {
        "a.weight": torch.ones(3, 5),
        "b.middle": middle.reshape(10, 100),
        "c.ids": torch.full((4,), 0x7FF0_0000_0000_0001, dtype=torch.int64),  # NaN's bits
    }
    save_file(state, str(path))
    return path


@pytest.mark.parametrize("dtype", FLOAT_DTYPES, ids=str)
@pytest.mark.parametrize("bad", [float("nan"), float("inf"), float("-inf")])
def test_a_non_finite_value_of_any_float_dtype_is_found_across_chunks(tmp_path, dtype, bad):
    path = _weights(tmp_path / "w.safetensors", dtype, bad)
    for chunk in (1, 64, 1 << 20):  # a value on a chunk's edge, in a chunk, all at once
        problem = scan_safetensors(path, chunk_bytes=chunk)
        assert problem is not None and "tensor 'b.middle' holds 1 NaN or infinite value" in problem
        assert str(path) in problem and "non-finite" in problem


@pytest.mark.parametrize("dtype", FLOAT_DTYPES, ids=str)
def test_finite_weights_and_integer_tensors_pass(tmp_path, dtype):
    assert scan_safetensors(_weights(tmp_path / "w.safetensors", dtype, None), 64) is None


def test_float8_e4m3_nan_is_its_all_ones_pattern():
    assert non_finite_bits(bytes([0x7F, 0xFF, 0x7E, 0x00, 0x78]), "F8_E4M3") == 2
    assert non_finite_bits(bytes([0x7C, 0xFC, 0x7B]), "F8_E5M2") == 2
    assert non_finite_bits(np.array([1, 2**31 - 1], "<i4").tobytes(), "I32") == 0


def _raw(path: Path, header: dict, data: bytes) -> Path:
    text = json.dumps(header).encode()
    path.write_bytes(struct.pack("<Q", len(text)) + text + data)
    return path


@pytest.mark.parametrize(
    ("header", "data", "expected"),
    [
        ({"x": {"dtype": "F32", "shape": [4], "data_offsets": [0, 16]}}, b"\0" * 8,
         "lies outside the file"),
        ({"x": {"dtype": "F32", "shape": [5], "data_offsets": [0, 16]}}, b"\0" * 16,
         "does not fill its 16 bytes"),
        ({"x": {"dtype": "F32", "shape": [-4], "data_offsets": [0, 16]}}, b"\0" * 16,
         "lies outside the file"),
        ({"x": {"dtype": "Q9", "shape": [4], "data_offsets": [0, 16]}}, b"\0" * 16,
         "unknown dtype 'Q9'"),
        ({"x": {"dtype": "F32", "shape": 4}}, b"\0" * 16, "damaged header entry"),
        (["not", "an", "object"], b"", "not a JSON object"),
    ],
)  # fmt: skip
def test_a_damaged_header_is_refused_naming_the_file(tmp_path, header, data, expected):
    path = _raw(tmp_path / "bad.safetensors", header, data)
    problem = scan_safetensors(path)
    assert problem is not None and expected in problem and str(path) in problem


def test_a_header_longer_than_the_file_is_refused_before_reading_it(tmp_path):
    path = tmp_path / "huge-header.safetensors"
    path.write_bytes(struct.pack("<Q", 10**15) + b"{}")
    problem = scan_safetensors(path)
    assert problem is not None and "not a safetensors file" in problem


def test_a_verdict_is_kept_per_file_and_a_changed_file_is_scanned_again(tmp_path, monkeypatch):
    scans: list[Path] = []
    real = weights_check.scan_safetensors

    def counting(path: Path, chunk_bytes: int = weights_check.CHUNK_BYTES) -> str | None:
        scans.append(path)
        return real(path, chunk_bytes)

    monkeypatch.setattr(weights_check, "scan_safetensors", counting)
    path = _weights(tmp_path / "kept.safetensors", torch.float32, None)
    check_file(path)
    check_file(path)
    (tmp_path / "link.safetensors").symlink_to(path)
    check_file(tmp_path / "link.safetensors")  # the same file by another name
    assert len(scans) == 1
    _weights(path, torch.float32, float("nan"))  # rewritten in place: another mtime
    os.utime(path, ns=(1, 1))
    with pytest.raises(ModelLoadError, match="tensor 'b.middle'"):
        check_file(path)
    with pytest.raises(ModelLoadError, match="tensor 'b.middle'"):
        check_file(path)  # a refusal is kept too
    assert len(scans) == 2


def _poisoned(tiny_model_dir: Path, dst: Path, value: float, **save) -> Path:
    from transformers import AutoModel

    model = AutoModel.from_pretrained(tiny_model_dir)
    with torch.no_grad():
        model.encoder.layer[1].output.dense.weight[3, 7] = value
    model.save_pretrained(dst, **save)
    for name in os.listdir(tiny_model_dir):
        if name.startswith(("tokenizer", "vocab", "special")):
            shutil.copy(tiny_model_dir / name, dst / name)
    return dst


def test_a_model_with_an_infinite_weight_is_refused_at_load(tiny_model_dir, tmp_path):
    folder = _poisoned(tiny_model_dir, tmp_path / "inf", float("inf"))
    with pytest.raises(ModelLoadError) as info:
        load_model(resolve_model(str(folder)), torch.float32)
    message = str(info.value)
    assert "encoder.layer.1.output.dense.weight" in message and "non-finite" in message
    assert str(folder / "model.safetensors") in message


def test_a_sharded_model_is_checked_shard_by_shard(tiny_model_dir, tmp_path):
    folder = _poisoned(tiny_model_dir, tmp_path / "shards", float("nan"), max_shard_size="100KB")
    assert (folder / "model.safetensors.index.json").is_file()
    weight_map = json.loads((folder / "model.safetensors.index.json").read_text())["weight_map"]
    shard = weight_map["encoder.layer.1.output.dense.weight"]
    with pytest.raises(ModelLoadError, match=f"{shard}.*tensor 'encoder.layer.1.output.dense"):
        load_model(resolve_model(str(folder)), torch.float32)


def test_a_shard_index_naming_a_file_outside_its_folder_is_refused(tiny_model_dir, tmp_path):
    folder = _poisoned(tiny_model_dir, tmp_path / "escape", 0.5, max_shard_size="100KB")
    index = folder / "model.safetensors.index.json"
    data = json.loads(index.read_text())
    data["weight_map"]["pooler.dense.bias"] = "../../elsewhere.safetensors"
    index.write_text(json.dumps(data))
    with pytest.raises(ModelLoadError, match="shard outside its folder"):
        weights_check.safetensors_files(folder)


def test_a_bin_model_is_checked_on_its_loaded_state_dict(tiny_model_dir, tmp_path):
    folder = _poisoned(tiny_model_dir, tmp_path / "bin", float("-inf"))
    state = load_file(str(folder / "model.safetensors"))
    torch.save(state, folder / "pytorch_model.bin")  # the older format, as such models have it
    (folder / "model.safetensors").unlink()
    with pytest.raises(ModelLoadError) as info:
        load_model(resolve_model(str(folder)), torch.float32)
    message = str(info.value)
    assert "encoder.layer.1.output.dense.weight" in message
    assert str(folder / "pytorch_model.bin") in message


def test_a_finite_bin_model_is_checked_once(tiny_model_dir, tmp_path, monkeypatch):
    folder = _poisoned(tiny_model_dir, tmp_path / "bin-ok", 0.5)
    torch.save(load_file(str(folder / "model.safetensors")), folder / "pytorch_model.bin")
    (folder / "model.safetensors").unlink()
    checks: list[str] = []
    real = weights_check.check_state_dict
    monkeypatch.setattr(
        weights_check,
        "check_state_dict",
        lambda state, where: (checks.append(where), real(state, where)),
    )
    load_model(resolve_model(str(folder)), torch.float32)
    load_model(resolve_model(str(folder)), torch.float32)
    assert checks == [str(folder / "pytorch_model.bin")]


def test_a_finite_model_loads_and_its_weights_match_the_file(tiny_model_dir):
    model = load_model(resolve_model(str(tiny_model_dir)), torch.float32)
    state = load_file(str(tiny_model_dir / "model.safetensors"))
    key = "encoder.layer.0.attention.self.query.weight"
    assert torch.equal(model.state_dict()[key], state[key])
