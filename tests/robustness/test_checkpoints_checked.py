"""Class 5 of the third hostile round (issue 53), fine-tuning checkpoints: a checkpoint carries
the digest of each of its tensors and of its bookkeeping, checked on resume (one flipped bit is
refused); its bookkeeping fields are bounded (an epoch of -5 or 10^9 is refused); and a resumed
run identifies its base by the fingerprint of its weights, so a base replaced in place is
refused instead of resuming on other frozen layers."""

from __future__ import annotations

import json
import random
import shutil
import struct
from dataclasses import asdict
from pathlib import Path

import pytest
import torch

from workbench.errors import DataError, InputError
from workbench.finetune.data.readers import TextExample, in_memory
from workbench.finetune.tasks.mlm import MlmOptions
from workbench.finetune.tasks.registry import finetune
from workbench.finetune.tasks.sequence import SequenceOptions
from workbench.finetune.tasks.token import TokenOptions
from workbench.finetune.tasks.wsd.options import WsdOptions
from workbench.finetune.training import checkpoint as ckpt
from workbench.finetune.training.config import TrainConfig


def _state(**fields) -> ckpt.RunState:
    history = [{"epoch": 1}, {"epoch": 2}]
    usual = {"epoch": 2, "history": history, "best": 0.5, "best_epoch": 1, "bad_epochs": 1,
             "step": 6, "batch": 0}  # fmt: skip
    return ckpt.RunState(**{**usual, **fields})


IDENTITY = {"task": "seqcls", "options": {"epochs": 3, "lr": 1e-3}, "dev": None}


def _saved(tmp_path: Path, state: ckpt.RunState | None = None, identity: dict = IDENTITY) -> Path:
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(4, 3), torch.nn.Linear(3, 2))
    optimizer = torch.optim.AdamW(model.parameters())
    scheduler = torch.optim.lr_scheduler.LambdaLR(optimizer, lambda step: 1.0)
    model(torch.randn(5, 4)).sum().backward()
    optimizer.step()
    scheduler.step()
    ckpt.save_checkpoint(tmp_path, model, optimizer, scheduler, state or _state(), identity)
    return tmp_path / ckpt.LAST


def _tensor_spans(path: Path) -> dict[str, tuple[int, int]]:
    """Each tensor's byte range in a safetensors file, from its header."""
    data = path.read_bytes()
    (n,) = struct.unpack("<Q", data[:8])
    header = json.loads(data[8 : 8 + n])
    return {
        key: (8 + n + info["data_offsets"][0], 8 + n + info["data_offsets"][1])
        for key, info in header.items()
        if key != "__metadata__"
    }


def test_a_checkpoint_carries_and_passes_its_digests(tmp_path):
    path = _saved(tmp_path)
    back = ckpt.load_checkpoint(tmp_path, IDENTITY)
    assert back["state"] == _state().__dict__
    from safetensors import safe_open

    with safe_open(str(path), framework="pt") as fh:
        digests = json.loads(fh.metadata()["digests"])
        assert set(digests) == {*fh.keys(), ckpt.TREE_DIGEST}  # noqa: SIM118


def test_a_checkpoint_of_every_task_s_options_in_one_flat_dict_resumes_the_same_options(tmp_path):
    """Before each task had its own options, a checkpoint's identity held every task's options
    in one flat dict (another task's at their defaults): it resumes a run whose loop and task
    options are the same; one of this run's own that differs, or that it lacks, is refused."""
    now = TrainConfig(epochs=3, task=SequenceOptions(head_pooling="mean")).to_dict()
    others = {**asdict(TokenOptions()), **asdict(MlmOptions()), **asdict(WsdOptions())}
    flat = {**others, **now}  # the earlier version's one dict: every option of every task
    assert set(flat) > set(now) and flat["gloss_max_length"] == 48
    _saved(tmp_path, identity={**IDENTITY, "options": flat})
    ckpt.load_checkpoint(tmp_path, {**IDENTITY, "options": now})
    for changed in ({**now, "head_pooling": "cls"}, {**now, "lr": 1.0}, {**now, "new": 1}):
        with pytest.raises(InputError, match=r"other settings \(options differ\)"):
            ckpt.load_checkpoint(tmp_path, {**IDENTITY, "options": changed})


@pytest.mark.parametrize("which", ["model", "optimizer", "rng", "last"])
@pytest.mark.parametrize("bit", [0, 7])
def test_one_flipped_bit_in_any_tensor_is_refused(tmp_path, which, bit):
    path = _saved(tmp_path)
    spans = _tensor_spans(path)
    keys = sorted(k for k in spans if k.startswith(f"/{which}/") and spans[k][1] > spans[k][0])
    key = keys[-1] if which != "last" else max(spans, key=lambda k: spans[k][0])
    start, stop = spans[key]
    data = bytearray(path.read_bytes())
    data[(start + stop) // 2] ^= 1 << bit
    path.write_bytes(bytes(data))
    with pytest.raises(DataError, match=r"does not match its digest.*start a new run") as err:
        ckpt.load_checkpoint(tmp_path, IDENTITY)
    assert str(path) in str(err.value)


def test_changed_bookkeeping_or_missing_digests_are_refused(tmp_path):
    from safetensors.torch import load_file, save_file

    path = _saved(tmp_path)
    from safetensors import safe_open

    with safe_open(str(path), framework="pt") as fh:
        meta = fh.metadata()
    tensors = load_file(str(path))
    tree = json.loads(meta["tree"])
    tree["state"]["epoch"] = 1  # a plausible value, but not what was saved
    save_file(tensors, str(path), metadata={**meta, "tree": json.dumps(tree)})
    with pytest.raises(DataError, match="bookkeeping does not match its digest"):
        ckpt.load_checkpoint(tmp_path, IDENTITY)
    del meta["digests"]  # as an earlier version wrote it: no digests, never trusted
    save_file(tensors, str(path), metadata=meta)
    with pytest.raises(DataError, match="no digests"):
        ckpt.load_checkpoint(tmp_path, IDENTITY)
    digests = {"/model/0.weight": "0" * 64}
    save_file(tensors, str(path), metadata={**meta, "digests": json.dumps(digests)})
    with pytest.raises(DataError, match="digests do not list its tensors"):
        ckpt.load_checkpoint(tmp_path, IDENTITY)


@pytest.mark.parametrize(
    ("fields", "expected"),
    [
        ({"epoch": -5}, "its epoch is -5, not a whole number from 0 to 3"),
        ({"epoch": 10**9}, "its epoch is 1000000000"),
        ({"epoch": 2.5}, "its epoch is 2.5"),
        ({"epoch": True}, "its epoch is true"),
        ({"epoch": "2"}, 'its epoch is "2"'),
        ({"best_epoch": 10**9}, "its best_epoch is 1000000000"),
        ({"best_epoch": -1}, "its best_epoch is -1"),
        ({"bad_epochs": 5}, "its bad_epochs is 5, not a whole number from 0 to 2"),
        ({"step": -1}, "its step count is -1"),
        ({"step": 1 << 60}, "its step count is"),
        ({"batch": -3}, "its batch count is -3"),
        ({"batch": None}, "its batch count is null"),
        ({"best": float("inf")}, "its best dev score is Infinity"),
        ({"best": "0.5"}, "its best dev score is"),
        ({"history": "x"}, "its history is not a list"),
        ({"history": [1, 2]}, "its history is not a list"),
    ],
    ids=lambda v: json.dumps(v) if isinstance(v, dict) else "",
)
def test_bookkeeping_out_of_its_range_is_refused_even_with_true_digests(tmp_path, fields, expected):
    _saved(tmp_path, _state(**fields))  # written by the workbench's own writer: digests agree
    with pytest.raises(DataError, match="is damaged: " + expected.replace("(", r"\(")):
        ckpt.load_checkpoint(tmp_path, IDENTITY)


# ---------------------------------------------------------------------- whole runs


POS, NEG = ["good", "great", "fine", "nice"], ["bad", "awful", "poor", "sad"]


def _sentiment(n: int, seed: int) -> list[TextExample]:
    rng = random.Random(seed)
    out = []
    for _ in range(n):
        label = rng.random() < 0.5
        word = rng.choice(POS if label else NEG)
        out.append(TextExample(f"the film was {word} today", "pos" if label else "neg"))
    return out


CFG = TrainConfig(epochs=2, lr=3e-3, batch_size=8, max_length=32, warmup_ratio=0.0,
                  freeze_layers=1, task=SequenceOptions(head_pooling="mean"))  # fmt: skip


@pytest.fixture
def cut_run(tiny_model_dir, tmp_path):
    """A run on a copy of the tiny BERT as its base (its lower layer frozen), cut by
    ``max_steps`` in its second epoch: its checkpoint kept for a resume."""
    base = tmp_path / "base"
    shutil.copytree(tiny_model_dir, base)
    train, dev = in_memory(_sentiment(48, 0), "train"), in_memory(_sentiment(16, 1), "dev")
    out = tmp_path / "run"
    finetune("seqcls", train, dev, CFG.replace(max_steps=8), out, model=str(base),
             progress=False)  # fmt: skip
    assert (out / "checkpoint" / ckpt.LAST).is_file()
    return base, out, (train, dev)


def test_a_base_replaced_in_place_is_refused_on_resume_and_the_original_resumes(cut_run):
    from transformers import BertConfig, BertModel

    base, out, (train, dev) = cut_run
    kept = base.parent / "kept"
    shutil.copytree(base, kept)
    torch.manual_seed(99)  # another model of the same shape, saved over the base
    BertModel(BertConfig.from_pretrained(base)).save_pretrained(base)
    with pytest.raises(InputError, match="replaced since the run began") as err:
        finetune("seqcls", train, dev, CFG, out, model=str(base), progress=False, resume=True)
    assert "other frozen layers" in str(err.value) and str(base) in str(err.value)
    shutil.rmtree(base)
    shutil.copytree(kept, base)  # the original back: the run goes on
    result = finetune("seqcls", train, dev, CFG, out, model=str(base), progress=False,
                      resume=True)  # fmt: skip
    assert [r.epoch for r in result.history][-1] == 2


@pytest.mark.parametrize(("field", "value"), [("batch", 10**9), ("step", 10**6)])
def test_a_batch_or_step_past_the_run_is_refused_on_resume(cut_run, field, value):
    base, out, (train, dev) = cut_run
    path = out / "checkpoint" / ckpt.LAST
    tree = ckpt.load_tree(path)
    tree["state"][field] = value
    ckpt.save_tree(tree, path)  # true digests: the bound is what refuses it
    with pytest.raises(DataError, match=f"{value:,}"):
        finetune("seqcls", train, dev, CFG, out, model=str(base), progress=False, resume=True)


def test_the_same_base_under_another_name_resumes_and_another_base_does_not(tmp_path):
    """``--model tiny-bert`` then ``--resume --model /abs/path/tiny-bert``: one folder, two
    spellings, was refused as "base differ". The fingerprint of the weights decides; a base
    without one (a hub model not downloaded) is still compared by name."""
    saved = {**IDENTITY, "base": "tiny-bert", "base_fingerprint": "f1"}
    _saved(tmp_path, identity=saved)
    ckpt.load_checkpoint(tmp_path, {**saved, "base": "/home/me/runs/tiny-bert"})
    with pytest.raises(InputError, match="replaced since the run began"):
        ckpt.load_checkpoint(tmp_path, {**saved, "base": "/home/me/runs/tiny-bert",
                                        "base_fingerprint": "f2"})  # fmt: skip
    unknown = {**IDENTITY, "base": "org/model", "base_fingerprint": ""}
    _saved(tmp_path, identity=unknown)
    with pytest.raises(InputError, match="base differ"):
        ckpt.load_checkpoint(tmp_path, {**unknown, "base": "org/other"})
