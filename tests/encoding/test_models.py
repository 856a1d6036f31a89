"""Model identity and loading errors: a fingerprint from the model's content only (the same
model in two places gives one, a changed weight another); bad devices and broken files give a
ModelLoadError naming the problem; a hub id fetched into the models folder loads from there."""

from __future__ import annotations

import json
import shutil

import pytest

from workbench.encoding.device import choose_device
from workbench.encoding.encoder import Encoder
from workbench.encoding.models import default_model_path, resolve_model
from workbench.errors import ModelLoadError


def _copy(src, dst):
    shutil.copytree(src, dst)
    return dst


def test_same_model_in_two_places_has_one_fingerprint(tiny_model_dir, tmp_path, monkeypatch):
    a = _copy(tiny_model_dir, tmp_path / "one" / "model")
    b = _copy(tiny_model_dir, tmp_path / "two" / "elsewhere")
    # a config saved elsewhere, by another transformers version: same content
    config = json.loads((b / "config.json").read_text())
    config.update(_name_or_path="/some/other/venv/model", transformers_version="0.0.1")
    (b / "config.json").write_text(json.dumps(config, indent=4))
    monkeypatch.chdir(tmp_path)
    prints = {
        Encoder(str(a), device="cpu").fingerprint,
        Encoder(str(b), device="cpu").fingerprint,
        Encoder("./one/model", device="cpu").fingerprint,
        Encoder(str(tiny_model_dir), device="cpu").fingerprint,
    }
    assert len(prints) == 1


def test_a_changed_weight_or_config_changes_the_fingerprint(tiny_model_dir, tmp_path):
    from safetensors.torch import load_file, save_file

    base = Encoder(str(tiny_model_dir), device="cpu").fingerprint
    changed = _copy(tiny_model_dir, tmp_path / "changed")
    weights = load_file(str(changed / "model.safetensors"))
    name = sorted(weights)[len(weights) // 2]  # a tensor in the middle of the file
    weights[name].view(-1)[0] += 1e-3
    save_file(weights, str(changed / "model.safetensors"), metadata={"format": "pt"})
    assert Encoder(str(changed), device="cpu").fingerprint != base
    other = _copy(tiny_model_dir, tmp_path / "other-config")
    config = json.loads((other / "config.json").read_text())
    config["layer_norm_eps"] = 1e-5
    (other / "config.json").write_text(json.dumps(config))
    assert Encoder(str(other), device="cpu").fingerprint != base


def test_packaged_model_copied_elsewhere_keeps_its_fingerprint(default_encoder, tmp_path):
    copy = _copy(default_model_path(), tmp_path / "venv2" / "site-packages" / "model")
    assert Encoder(str(copy), device="cpu").fingerprint == default_encoder.fingerprint
    assert Encoder(str(default_model_path()), device="cpu").fingerprint == (
        default_encoder.fingerprint
    )


@pytest.mark.parametrize(
    "device, message",
    [
        ("bogus", "Unknown device 'bogus'"),
        ("meta", "Unknown device 'meta'"),
        ("cuda:-1", "Unknown device"),
        ("cuda:99", "cuda:99"),
        ("", None),
    ],
)
def test_bad_devices_are_named(device, message):
    import torch

    if message is None:
        assert choose_device(device) in ("cpu", "cuda", "mps")
        return
    if device == "cuda:99" and torch.cuda.is_available() is False:
        message = "CUDA is not available"
    with pytest.raises(ModelLoadError, match=message):
        choose_device(device)


@pytest.mark.parametrize("damage", ["truncate", "garbage", "remove", "bad-config"])
def test_broken_model_files_are_model_load_errors(tiny_model_dir, tmp_path, damage):
    broken = _copy(tiny_model_dir, tmp_path / damage)
    weights = broken / "model.safetensors"
    if damage == "truncate":
        data = weights.read_bytes()
        weights.write_bytes(data[: len(data) // 2])
    elif damage == "garbage":
        weights.write_bytes(b"\x00" * 64)
    elif damage == "remove":
        weights.unlink()
    else:
        (broken / "config.json").write_text("{not json")
    with pytest.raises(ModelLoadError, match=str(broken)):
        Encoder(str(broken), device="cpu")


def test_a_hub_id_fetched_into_the_models_folder_loads_from_there(
    tiny_model_dir, tmp_path, monkeypatch
):
    # `workbench model fetch` unpacks all-mpnet-base-v2 one folder deep under <cache>/models/<name>
    monkeypatch.setenv("WORKBENCH_CACHE", str(tmp_path / "cache"))
    nested = _copy(tiny_model_dir, tmp_path / "cache" / "models" / "tiny-bert" / "tiny-bert")
    for name in ("tiny-bert", "some-org/tiny-bert"):
        source = resolve_model(name)
        assert source.is_local and source.location == str(nested) and source.name == name
    enc = Encoder("some-org/tiny-bert", device="cpu")
    assert enc.fingerprint == Encoder(str(tiny_model_dir), device="cpu").fingerprint
    # a folder without a model does not shadow the hub id
    (tmp_path / "cache" / "models" / "empty-one").mkdir()
    assert not resolve_model("empty-one").is_local
