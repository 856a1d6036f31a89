"""A task defined here, outside the library, with its own options dataclass: registered in
``TASKS`` it trains through the shared loop, saves and loads its model, and gets its own flags
on the command line, with no change to ``workbench/finetune/training/`` (which imports no task
module and names no task class: checked on the source below)."""

from __future__ import annotations

import ast
import json
import random
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import torch
from torch import nn

from workbench.bounds import PROBABILITY
from workbench.cli.main import main
from workbench.encoding.models import ModelSource, load_model
from workbench.encoding.pooling import pool_sequence
from workbench.errors import InputError
from workbench.finetune.data.readers import DataFile, TextExample, in_memory
from workbench.finetune.tasks.base import Features, Task
from workbench.finetune.tasks.kind import TaskKind
from workbench.finetune.tasks.registry import TASKS, finetune, load_finetuned
from workbench.finetune.training.config import TaskOptions, TrainConfig, option
from workbench.finetune.training.encoders import load_encoder
from workbench.finetune.training.model_io import Batch, ModelOutput, encoder_config, encoder_inputs

REPO = Path(__file__).resolve().parents[3]
TRAINING = REPO / "workbench" / "finetune" / "training"


@dataclass(frozen=True)
class ToyOptions(TaskOptions):
    """The toy task's own options."""

    label_smoothing: float = option(
        0.0, "share of each label's probability spread over the others", PROBABILITY
    )
    first_token: bool = option(False, "the head reads the first token, not the mean")


class ToyModel(nn.Module):
    def __init__(self, encoder: nn.Module, n_labels: int, options: ToyOptions) -> None:
        super().__init__()
        self.encoder = encoder
        self.head = nn.Linear(encoder_config(encoder).hidden_size, n_labels)
        self.options = options

    def forward(self, labels: torch.Tensor | None = None, **batch: torch.Tensor) -> ModelOutput:
        hidden = self.encoder(**encoder_inputs(batch)).last_hidden_state
        first = self.options.first_token
        vector = hidden[:, 0] if first else pool_sequence(hidden, batch["attention_mask"], "mean")
        logits = self.head(vector)
        if labels is None:
            return None, logits
        smoothing = self.options.label_smoothing
        return nn.functional.cross_entropy(
            logits.float(), labels, label_smoothing=smoothing
        ), logits


class ToyTask(Task):
    """``text -> label`` with a linear head; metric: accuracy."""

    kind = "toy"
    metric = "accuracy"
    Options = ToyOptions
    options: ToyOptions

    def features(self, data: DataFile, train: bool) -> Features:
        texts = [e.text for e in data.examples]
        enc = self.tokenizer(texts, truncation=True, max_length=self.cfg.max_length)
        rows = [
            {"input_ids": ids, "attention_mask": mask, "labels": self.label_set.id(e.label)}
            for ids, mask, e in zip(enc["input_ids"], enc["attention_mask"], data.examples)
        ]
        return Features(rows)

    def build_model(self, source: ModelSource) -> tuple[ToyModel, list[str]]:
        return ToyModel(load_encoder(source), len(self.label_set.names), self.options), []

    @classmethod
    def load_model(
        cls, directory: Path, head: dict[str, Any], weights: dict, source: ModelSource
    ) -> ToyModel:
        options = ToyOptions(head["label_smoothing"], head["first_token"])
        model = ToyModel(load_model(source, torch.float32), len(head["labels"]), options)
        model.head.load_state_dict(weights)
        return model

    def predict(self, model: nn.Module, batch: Batch) -> tuple[torch.Tensor, ...]:
        labels = batch.pop("labels")
        _, logits = model(**batch)
        return logits.argmax(-1), labels

    def score(self, outputs: tuple[np.ndarray, ...], feats: Features) -> dict[str, float]:
        pred, gold = outputs
        return {"accuracy": float(np.mean(pred == gold))}


@pytest.fixture
def toy(monkeypatch):
    kind = TaskKind(ToyTask, TextExample, "toy classification", "CSV with text,label",
                    baselines=False)  # fmt: skip
    monkeypatch.setitem(TASKS, "toy", kind)
    return kind


def _examples(n: int, seed: int) -> list[TextExample]:
    rng = random.Random(seed)
    good, bad = ["good", "great", "fine"], ["bad", "awful", "poor"]
    out = []
    for _ in range(n):
        label = rng.random() < 0.5
        out.append(TextExample(f"it was {rng.choice(good if label else bad)}", str(int(label))))
    return out


def test_a_task_defined_outside_the_library_trains_saves_and_loads(toy, tiny_model_dir, tmp_path):
    train, dev = in_memory(_examples(64, 0), "train"), in_memory(_examples(32, 1), "dev")
    cfg = TrainConfig(epochs=2, lr=3e-3, batch_size=16, max_length=16, warmup_ratio=0.0,
                      task=ToyOptions(label_smoothing=0.1))  # fmt: skip
    out = tmp_path / "toy"
    result = finetune("toy", train, dev, cfg, out, model=str(tiny_model_dir), progress=False)
    assert [r.epoch for r in result.history] == [1, 2]
    assert {"accuracy"} == set(result.history[-1].dev)
    card = json.loads((out / "training_card.json").read_text())
    assert card["task"] == "toy" and card["options"]["label_smoothing"] == 0.1
    assert card["options"]["lr"] == 3e-3 and "gloss_max_length" not in card["options"]
    head = json.loads((out / "head.json").read_text())
    assert head == {"task": "toy", "labels": ["0", "1"], "label_smoothing": 0.1,
                    "first_token": False}  # fmt: skip
    loaded, _, _ = load_finetuned(out)
    assert isinstance(loaded, ToyModel) and loaded.options == ToyOptions(label_smoothing=0.1)
    torch.testing.assert_close(loaded.head.weight, result.model.head.weight.detach().cpu())
    with pytest.raises(InputError, match="label_smoothing must be"):
        ToyOptions(label_smoothing=1.5)  # its bound checked like the library's options


def test_the_task_s_options_are_flags_of_its_own_command(toy, tiny_model_dir, tmp_path, capsys):
    assert main(["finetune", "toy", "--help"]) == 0
    usage = capsys.readouterr().out
    assert "toy options:" in usage and "--label-smoothing" in usage and "--first-token" in usage
    assert "--gloss-max-length" not in usage  # another task's
    csv = tmp_path / "train.csv"
    csv.write_text("text,label\n" + "".join(f"{e.text},{e.label}\n" for e in _examples(40, 2)))
    out = tmp_path / "run"
    argv = ["finetune", "toy", "--train", str(csv), "--dev", str(csv), "--out", str(out),
            "--model", str(tiny_model_dir), "--epochs", "1", "--max-length", "16",
            "--label-smoothing", "0.2", "--first-token", "--no-progress"]  # fmt: skip
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert main(argv) == 0
    options = json.loads((out / "training_card.json").read_text())["options"]
    assert options["label_smoothing"] == 0.2 and options["first_token"] is True
    capsys.readouterr()
    argv = ["finetune", "seqcls", "--train", str(csv), "--out", str(tmp_path / "seq"),
            "--label-smoothing", "0.2"]  # fmt: skip
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert "--label-smoothing: an option of the toy task, not of seqcls" in err
    argv = ["finetune", "toy", "--train", str(csv), "--out", str(out), "--label-smoothing", "2"]
    assert main(argv) == 2
    assert "argument --label-smoothing: must be" in capsys.readouterr().err  # while parsing


def test_the_training_loop_imports_no_task_module_and_names_no_task_class():
    tasks = {kind.task.__name__ for kind in TASKS.values()}
    task_models = {"SequenceModel", "TokenModel", "MaskedLMModel", "BiEncoderModel"}
    for path in sorted(TRAINING.glob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and node.module:
                inside = node.module.startswith("workbench.finetune.tasks")
                assert not inside or node.module == "workbench.finetune.tasks.base", (path, node)
            if isinstance(node, ast.Name):
                assert node.id not in tasks | (task_models - _defined(tree)), (path, node.id)
        text = path.read_text(encoding="utf-8")
        assert "isinstance(model, " not in text, path


def _defined(tree: ast.Module) -> set[str]:
    return {n.name for n in tree.body if isinstance(n, ast.ClassDef)}
