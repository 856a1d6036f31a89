"""Checkpoints that cannot run code: everything a resume needs goes through safetensors + JSON
and comes back exactly; damaged, foreign and pickled files are refused with a clear error, and
nothing in them is executed."""

from __future__ import annotations

import ast
import json
import pickle
import random
from pathlib import Path

import numpy as np
import pytest
import torch

from workbench.errors import DataError, InputError
from workbench.finetune.training import checkpoint as ckpt

REPO = Path(__file__).resolve().parents[3]


def _training_state():
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(4, 3), torch.nn.Linear(3, 2))
    groups = [
        {"params": model[0].parameters(), "lr": 1e-3, "weight_decay": 0.0},
        {"params": model[1].parameters(), "lr": 5e-4},
    ]
    optimizer = torch.optim.AdamW(groups, betas=(0.9, 0.98))
    scheduler = torch.optim.lr_scheduler.LambdaLR(optimizer, lambda step: 1.0 / (step + 1))
    for _ in range(3):
        model(torch.randn(5, 4)).sum().backward()
        optimizer.step()
        scheduler.step()
        optimizer.zero_grad()
    return model, optimizer, scheduler


def test_a_checkpoint_round_trips_exactly(tmp_path):
    model, optimizer, scheduler = _training_state()
    random.seed(7)
    np.random.seed(7)
    torch.manual_seed(7)
    state = ckpt.RunState(2, [{"epoch": 1, "dev": {"acc": 0.5}}], 0.5, 1, 1, 6)
    identity = {"task": "seqcls", "options": {"layers": (1, 2), "lr": 1e-3}, "dev": None}
    ckpt.save_checkpoint(tmp_path, model, optimizer, scheduler, state, identity)
    expected = (random.random(), float(np.random.rand()), float(torch.rand(1)))
    back = ckpt.load_checkpoint(tmp_path, identity)
    assert sorted(p.name for p in tmp_path.iterdir()) == [ckpt.LAST]
    for key, value in model.state_dict().items():
        torch.testing.assert_close(back["model"][key], value, rtol=0, atol=0)
    want, got = optimizer.state_dict(), back["optimizer"]
    assert got["param_groups"] == want["param_groups"]  # tuples (betas) stay tuples
    assert set(got["state"]) == set(want["state"])  # integer parameter ids
    for pid, moments in want["state"].items():
        for name, value in moments.items():
            torch.testing.assert_close(got["state"][pid][name], value, rtol=0, atol=0)
    assert back["scheduler"] == scheduler.state_dict()
    assert back["state"] == state.__dict__ and back["identity"] == identity
    ckpt.set_rng_state(back["rng"])
    assert (random.random(), float(np.random.rand()), float(torch.rand(1))) == expected
    fresh, fresh_opt, fresh_sched = _training_state()
    fresh_opt.load_state_dict(back["optimizer"])
    fresh_sched.load_state_dict(back["scheduler"])


def test_other_settings_are_refused(tmp_path):
    model, optimizer, scheduler = _training_state()
    ckpt.save_checkpoint(tmp_path, model, optimizer, scheduler, ckpt.RunState(), {"lr": 1.0})
    with pytest.raises(InputError, match="lr differ"):
        ckpt.load_checkpoint(tmp_path, {"lr": 2.0})
    with pytest.raises(InputError, match="Nothing to resume"):
        ckpt.load_checkpoint(tmp_path / "elsewhere", {"lr": 1.0})


def test_an_option_added_after_the_checkpoint_resumes_only_at_its_default(tmp_path):
    # a checkpoint written before workbench had "distil_from" does not record it: resuming
    # with it at its default is the same run; with another value, or with an option that has
    # no default, it is not
    model, optimizer, scheduler = _training_state()
    old = {"task": "wsd", "options": {"lr": 1e-4, "top_layers": 2}}
    ckpt.save_checkpoint(tmp_path, model, optimizer, scheduler, ckpt.RunState(), old)
    defaults = {"lr": 5e-5, "top_layers": 0, "distil_from": ""}
    now = {"task": "wsd", "options": {"lr": 1e-4, "top_layers": 2, "distil_from": ""}}
    assert ckpt.load_checkpoint(tmp_path, now, defaults)["identity"] == old
    other = {"task": "wsd", "options": {**now["options"], "distil_from": "runs/teacher"}}
    with pytest.raises(InputError, match="options differ"):
        ckpt.load_checkpoint(tmp_path, other, defaults)
    with pytest.raises(InputError, match="options differ"):
        ckpt.load_checkpoint(tmp_path, now)  # no defaults known: an unrecorded option differs
    changed = {"task": "wsd", "options": {**now["options"], "lr": 2e-4}}
    with pytest.raises(InputError, match="options differ"):
        ckpt.load_checkpoint(tmp_path, changed, defaults)


class _Planted:
    """Unpickling this creates a file: proof that code ran."""

    def __init__(self, marker: str) -> None:
        self.marker = marker

    def __reduce__(self):
        return (Path.touch, (Path(self.marker),))


@pytest.mark.parametrize(
    "damage",
    ["truncated", "empty", "garbage", "pickle", "torch-save", "other-safetensors",
     "bad-tree", "missing-tensor", "object-array", "incomplete", "extra-state"],
)  # fmt: skip
def test_damaged_or_foreign_checkpoints_are_refused_without_running_code(tmp_path, damage):
    from safetensors.torch import save_file

    model, optimizer, scheduler = _training_state()
    ckpt.save_checkpoint(tmp_path, model, optimizer, scheduler, ckpt.RunState(), {"a": 1})
    last = tmp_path / ckpt.LAST
    marker = tmp_path / "code-ran"
    data = last.read_bytes()
    meta = {"format": ckpt.FORMAT, "tree": json.dumps({"model": {"__tensor__": "x"}})}
    if damage == "truncated":
        last.write_bytes(data[: len(data) // 2])
    elif damage == "empty":
        last.write_bytes(b"")
    elif damage == "garbage":
        last.write_bytes(b"\xff" * 4096)
    elif damage == "pickle":
        last.write_bytes(pickle.dumps(_Planted(str(marker))))
    elif damage == "torch-save":
        torch.save({"model": _Planted(str(marker))}, last)
    elif damage == "other-safetensors":
        save_file({"w": torch.zeros(2)}, str(last))
    elif damage == "bad-tree":
        save_file({"w": torch.zeros(2)}, str(last), metadata={**meta, "tree": "{not json"})
    elif damage == "missing-tensor":
        save_file({"w": torch.zeros(2)}, str(last), metadata=meta)
    elif damage == "object-array":
        tree = {"__ndarray__": [1], "dtype": "|O"}
        save_file({"w": torch.zeros(2)}, str(last), metadata={**meta, "tree": json.dumps(tree)})
    elif damage == "incomplete":
        save_file({"w": torch.zeros(2)}, str(last), metadata={**meta, "tree": '{"model": 1}'})
    else:
        tree = {k: {} for k in ("model", "optimizer", "scheduler", "rng", "identity")}
        tree["state"] = {"epoch": 1, "evil": 2}
        save_file({"w": torch.zeros(2)}, str(last), metadata={**meta, "tree": json.dumps(tree)})
    with pytest.raises(DataError, match="start a new run"):
        ckpt.load_checkpoint(tmp_path, {"a": 1})
    assert not marker.exists()


def test_a_pickled_checkpoint_of_an_earlier_version_is_never_loaded(tmp_path):
    marker = tmp_path / "code-ran"
    torch.save({"model": _Planted(str(marker))}, tmp_path / "last.pt")
    with pytest.raises(InputError, match="pickled checkpoint of an earlier workbench version"):
        ckpt.load_checkpoint(tmp_path, {})
    assert not marker.exists()


def test_best_weights_round_trip(tmp_path):
    model, _, _ = _training_state()
    ckpt.save_weights(model, tmp_path / ckpt.BEST)
    back = ckpt.load_weights(tmp_path / ckpt.BEST)
    for key, value in model.state_dict().items():
        torch.testing.assert_close(back[key], value, rtol=0, atol=0)
    (tmp_path / ckpt.BEST).write_bytes(b"\0" * 10)
    with pytest.raises(DataError):
        ckpt.load_weights(tmp_path / ckpt.BEST)


def test_every_torch_load_says_weights_only_true():
    """No torch.load in the project may unpickle arbitrary objects (checked on the source)."""
    bad = []
    for folder in ("workbench", "webapp", "bench", "tests"):
        for path in (REPO / folder).rglob("*.py"):
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                if not (
                    isinstance(node, ast.Call)
                    and isinstance(node.func, ast.Attribute)
                    and node.func.attr == "load"
                    and isinstance(node.func.value, ast.Name)
                    and node.func.value.id == "torch"
                ):
                    continue
                safe = any(
                    k.arg == "weights_only"
                    and isinstance(k.value, ast.Constant)
                    and k.value.value is True
                    for k in node.keywords
                )
                if not safe:
                    bad.append(f"{path.relative_to(REPO)}:{node.lineno}")
    assert bad == []
