"""A ``top_layers`` bi-encoder run: the frozen lower layers run once and are cached on disk, the
top layers train from the cache. The cut gives the full forward's outputs; a cache of another
model, cut or damaged is never read; only the top layers move; the saved directory answers
with the full forward as the training's own evaluation did; a resumed run ends where an
uninterrupted one does."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest
import torch

from tests.finetune.tasks.tiny_wsd import TINY_WSD
from workbench.corpora.datasets import load_dataset
from workbench.encoding import models
from workbench.encoding.encoder import Encoder
from workbench.errors import InputError, ModelLoadError
from workbench.fileio import sha256_file
from workbench.finetune.data.readers import DataFile
from workbench.finetune.tasks.registry import finetune, load_finetuned, make_task
from workbench.finetune.training.activations import ActivationCache, frozen_fingerprint
from workbench.finetune.training.encoders import load_encoder
from workbench.finetune.training.model_io import transformer_layers
from workbench.finetune.training.top_layers import (
    cut_point,
    frozen_modules,
    lower_states,
    top_states,
)
from workbench.wsd.biencoder import BiEncoder

CFG = TINY_WSD.with_task(top_layers=1)


@pytest.fixture(scope="module")
def semcor(wsd_data):
    """The first 24 SemCor sentences with instances, and the next 8 (dev)."""
    sentences = [s for s in load_dataset("semcor", wsd_data).sentences[:60] if s.instances]
    return sentences[:24], sentences[24:32]


def _batch(n: int, width: int, seed: int) -> tuple[torch.Tensor, torch.Tensor]:
    gen = torch.Generator().manual_seed(seed)
    ids = torch.randint(1000, 5000, (n, width), generator=gen)
    mask = torch.ones_like(ids)
    for i in range(1, n):  # ragged: padding on the right, as the collate pads
        mask[i, width - 2 * i :] = 0
    ids[mask == 0] = 0
    return ids, mask


@pytest.mark.parametrize("which", ["tiny", "packaged"])
def test_the_cached_lower_layers_give_the_full_forwards_last_hidden_state(
    which, tiny_model_dir, tmp_path
):
    source = models.resolve_model(str(tiny_model_dir) if which == "tiny" else None)
    encoder = load_encoder(source).eval()
    n_layers = len(transformer_layers(encoder))
    ids, mask = _batch(4, 14, seed=3)
    with torch.no_grad():
        full = encoder(input_ids=ids, attention_mask=mask).last_hidden_state
    real = mask.bool()
    for top in range(1, n_layers + 1):
        below = cut_point(encoder, top)
        hidden = lower_states(encoder, ids, mask, below)
        # through the disk cache: float16, written, read back by a new cache object
        identity = {"frozen": frozen_fingerprint(frozen_modules(encoder, below)), "below": below}
        seqs = [ids[i, : int(mask[i].sum())].tolist() for i in range(len(ids))]
        ActivationCache(identity, hidden.shape[-1], tmp_path).store(
            seqs, [hidden[i, : len(s)].numpy() for i, s in enumerate(seqs)]
        )
        cached, found = ActivationCache(identity, hidden.shape[-1], tmp_path).lookup(seqs)
        assert found == len(seqs)
        restored = torch.zeros_like(hidden)
        for i, states in enumerate(cached):
            assert states is not None and states.dtype == np.float16
            restored[i, : len(states)] = torch.from_numpy(states.astype(np.float32))
        with torch.no_grad():
            top_out = top_states(encoder, restored, mask, below)
        scale = float(full[real].abs().max())
        torch.testing.assert_close(top_out[real], full[real], atol=2e-3 * scale, rtol=0)
    with pytest.raises(InputError, match="top_layers=0"):
        cut_point(encoder, 0)
    with pytest.raises(InputError, match=f"has {n_layers} layers"):
        cut_point(encoder, n_layers + 1)


def _shard(cache: ActivationCache):
    return next(cache.folder.glob("*.npz"))


def test_a_cache_of_another_model_or_cut_or_a_damaged_one_is_computed_again(tmp_path):
    seqs = [[101, 7, 8, 102], [101, 9, 102]]
    states = [np.full((4, 8), 0.5, np.float32), np.full((3, 8), -1.0, np.float32)]
    mine = ActivationCache({"frozen": "a" * 16, "below": 2}, 8, tmp_path)
    mine.store(seqs, states)
    assert ActivationCache({"frozen": "a" * 16, "below": 2}, 8, tmp_path).lookup(seqs)[1] == 2
    # another model's folder and another cut's folder do not find them ...
    for other in ({"frozen": "b" * 16, "below": 2}, {"frozen": "a" * 16, "below": 3}):
        cache = ActivationCache(other, 8, tmp_path)
        assert cache.folder != mine.folder and cache.lookup(seqs)[1] == 0
        # ... and a shard copied in from elsewhere is refused, removed, never read
        cache.folder.mkdir(parents=True, exist_ok=True)
        shutil.copy(_shard(mine), cache.folder / "copied.npz")
        with pytest.warns(RuntimeWarning, match="another model or layer"):
            again = ActivationCache(other, 8, tmp_path)
        assert again.lookup(seqs)[1] == 0 and not (cache.folder / "copied.npz").exists()
    # damaged shards: cut off, arrays that do not fit, values that are not finite
    path = _shard(mine)
    good = dict(np.load(path))
    damages = {
        "cut off": lambda: path.write_bytes(path.read_bytes()[:100]),
        "offsets": lambda: np.savez(path, **{**good, "offsets": np.array([0, 4, 99])}),
        "nan": lambda: np.savez(
            path, **{**good, "hidden": np.where(good["hidden"] < 0, np.nan, good["hidden"])}
        ),
    }
    for name, damage in damages.items():
        damage()
        with pytest.warns(RuntimeWarning, match="computed again"):
            cache = ActivationCache({"frozen": "a" * 16, "below": 2}, 8, tmp_path)
        assert cache.lookup(seqs)[1] == 0, name
        assert not path.exists(), name
        np.savez(path, **good)
    # what would be stored is checked too: another shape, non-finite values
    with pytest.raises(ValueError, match="shape"):
        mine.store([[1, 2]], [np.zeros((3, 8), np.float32)])
    with pytest.raises(ValueError, match="not finite"):
        mine.store([[1, 2]], [np.full((2, 8), np.inf, np.float32)])


def _data(semcor):
    return (
        DataFile(tuple(semcor[0]), "semcor[:24]", "a"),
        DataFile(tuple(semcor[1]), "semcor[24:32]", "b"),
    )


@pytest.fixture(scope="module")
def top_run(tiny_model_dir, semcor, tmp_path_factory):
    """A top_layers=1 run on the tiny BERT (2 layers), dev = test."""
    train, dev = _data(semcor)
    out = tmp_path_factory.mktemp("top1") / "model"
    result = finetune("wsd", train, dev, CFG.replace(epochs=2), out, model=str(tiny_model_dir),
                      progress=False, test=dev)  # fmt: skip
    return out, result


def test_only_the_top_layers_train_and_the_saved_model_answers_as_training_evaluated(
    tiny_model_dir, semcor, top_run
):
    train, dev = _data(semcor)
    source = models.resolve_model(str(tiny_model_dir))
    task = make_task("wsd", CFG, models.load_tokenizer(source), train)
    feats = task.features(train, train=True)
    model, _ = task.build_model(source)
    batch = task.collate(feats.rows[:4], torch.Generator().manual_seed(0))
    assert batch["context_hidden"].shape == (*batch["input_ids"].shape, 32)
    assert batch["gloss_hidden"].shape == (*batch["gloss_input_ids"].shape, 32)
    out, result = top_run
    assert any("top_layers=1" in n and "1 lower layers" in n for n in result.notes)
    # saved as the trained layers alone, against the base (no copy of the base weights)
    for part in (out, out / "gloss_encoder"):
        assert (part / "trained_layers.safetensors").is_file()
        assert not (part / "model.safetensors").exists()
        assert not (part / "adapter_config.json").exists()
    record = json.loads((out / "base_model.json").read_text())
    assert record["fingerprint"] == Encoder(model=str(tiny_model_dir), device="cpu").fingerprint
    start = models.load_model(source).state_dict()
    trained, _, _ = load_finetuned(out)
    for tower in (trained.encoder, trained.gloss_encoder):
        moved = {
            name.split(".")[2] if name.startswith("encoder.layer.") else name.split(".")[0]
            for name, weight in tower.state_dict().items()
            if name in start and not torch.equal(weight, start[name])
        }
        assert moved and moved <= {"1", "pooler"}, moved  # layer 1 of 0-1 (pooler: unused)
    # the saved directory, loaded as every answer loads it (full forward, no cache), scores
    # the dev data exactly as training's evaluation from the cached lower layers did
    card = result.card
    assert card["test"]["f1"] == pytest.approx(card["best_metric"], abs=1e-9)


def test_a_resumed_run_ends_with_the_parameters_of_an_uninterrupted_one(
    tiny_model_dir, semcor, tmp_path
):
    train, _ = _data(semcor)
    cfg = CFG.replace(epochs=2, lora_r=4, lora_alpha=8)
    whole = finetune("wsd", train, None, cfg, tmp_path / "whole", model=str(tiny_model_dir),
                     progress=False)  # fmt: skip
    out = tmp_path / "cut"
    first = finetune("wsd", train, None, cfg.replace(max_steps=3), out,
                     model=str(tiny_model_dir), progress=False)  # fmt: skip
    assert any("--resume goes on from that step" in n for n in first.notes)
    assert (out / "checkpoint").is_dir()  # kept, so that the run can go on
    assert first.history[-1].steps == 3
    more = finetune("wsd", train, None, cfg, out, model=str(tiny_model_dir), progress=False,
                    resume=True)  # fmt: skip
    assert [e.epoch for e in more.history] == [1, 1, 2]  # the cut epoch, then its rest
    assert more.history[-1].steps == whole.history[-1].steps
    a = whole.model.state_dict()
    b = more.model.state_dict()
    assert a.keys() == b.keys()
    for name in a:
        torch.testing.assert_close(b[name], a[name], atol=1e-6, rtol=0, msg=name)


def _damage_truncated(d: Path) -> str:
    f = d / "trained_layers.safetensors"
    f.write_bytes(f.read_bytes()[:100])
    return "damaged or was replaced"


def _resave(d: Path, change) -> None:
    """Rewrite the trained layers through ``change`` and record their new digest (a
    hand-made directory: only the content checks can catch it)."""
    from safetensors.torch import load_file, save_file

    f = d / "trained_layers.safetensors"
    save_file(change(load_file(str(f))), str(f))
    record = json.loads((d / "base_model.json").read_text())
    record["adapter_sha256"] = sha256_file(f)
    (d / "base_model.json").write_text(json.dumps(record))


def _damage_nan(d: Path) -> str:
    _resave(d, lambda state: {k: v * float("nan") for k, v in state.items()})
    return "non-finite: tensor 'encoder.layer."


def _damage_foreign_key(d: Path) -> str:
    _resave(d, lambda state: {**state, "encoder.layer.9.output.dense.weight": torch.zeros(2)})
    return "does not have"


def _damage_shape(d: Path) -> str:
    _resave(d, lambda state: {k: v[..., :1].contiguous() for k, v in state.items()})
    return "another shape"


def _damage_foreign_base(d: Path) -> str:
    record = json.loads((d / "base_model.json").read_text())
    record["fingerprint"] = "0123456789abcdef"
    (d / "base_model.json").write_text(json.dumps(record))
    return "fingerprint 0123456789abcdef"


@pytest.mark.parametrize(
    "damage",
    [_damage_truncated, _damage_nan, _damage_foreign_key, _damage_shape, _damage_foreign_base],
)
def test_damaged_or_foreign_trained_layers_are_refused_naming_the_file(top_run, tmp_path, damage):
    out, _ = top_run
    broken = Path(shutil.copytree(out, tmp_path / "broken"))
    message = damage(broken / "gloss_encoder" if damage is _damage_nan else broken)
    with pytest.raises(ModelLoadError, match=message):
        BiEncoder(broken, device="cpu")


def test_a_top_layers_run_continued_with_frozen_glosses_keeps_the_gloss_tower_it_continued(
    tiny_model_dir, semcor, top_run, tmp_path
):
    # the frozen gloss encoder trains nothing, yet its top layers are the continued run's, not
    # the base model's: they are saved, and the new directory answers with the same glosses
    out, _ = top_run
    train, dev = _data(semcor)
    more = tmp_path / "more"
    cfg = CFG.with_task(freeze_glosses=True)
    finetune("wsd", train, dev, cfg, more, model=str(out), progress=False, test=dev)
    before = load_finetuned(out)[0].gloss_encoder.state_dict()
    after, _, _ = load_finetuned(more)
    for name, weight in after.gloss_encoder.state_dict().items():
        torch.testing.assert_close(weight, before[name], atol=0, rtol=0)
    start = models.load_model(models.resolve_model(str(tiny_model_dir))).state_dict()
    assert any(not torch.equal(w, start[n]) for n, w in before.items() if n in start)
    wordnet_glosses = ["bank.n.01", "bank.n.02"]
    np.testing.assert_array_equal(
        BiEncoder(more, device="cpu").gloss_vectors(wordnet_glosses),
        BiEncoder(out, device="cpu").gloss_vectors(wordnet_glosses),
    )
