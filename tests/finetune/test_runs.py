"""Runs as the front ends start them: uploaded files, the baselines' refusals, a whole run
with its baselines, the summary."""

from __future__ import annotations

import tempfile

import pytest

from workbench.errors import InputError, WorkbenchError
from workbench.finetune import runs
from workbench.finetune.data.readers import PairExample, TextExample, in_memory
from workbench.finetune.data.splits import TaskData, uploaded_data
from workbench.finetune.runs import is_main_process, run_baselines, summary, train_with_baselines
from workbench.finetune.training.config import TrainConfig
from workbench.finetune.training.store import read_card


def test_uploaded_files_are_read_by_kind_and_named_by_their_upload(tmp_path, monkeypatch):
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    train = b"text,label\ngood,pos\nbad,neg\n"
    dev = b"text,label\nfine,pos\n"
    # both uploads have the same name: neither may replace the other
    data = uploaded_data("seqcls", ("data.csv", train), ("data.csv", dev))
    assert data.train.examples == (TextExample("good", "pos"), TextExample("bad", "neg"))
    assert data.dev is not None and data.dev.examples == (TextExample("fine", "pos"),)
    assert data.train.source == data.dev.source == "data.csv" and data.test is None
    pairs = uploaded_data("pair", ("p.jsonl", b'{"text_a": "a", "text_b": "b", "label": "x"}\n'))
    assert pairs.train.examples == (PairExample("a", "b", "x"),) and pairs.dev is None
    assert list(tmp_path.iterdir()) == []  # the written copies are gone
    with pytest.raises(WorkbenchError) as bad:  # a broken upload: its name, no server temp path
        uploaded_data("pair", ("mine.jsonl", b'{"text_a": "a"\n'))
    assert "mine.jsonl" in str(bad.value) and str(tmp_path) not in str(bad.value)
    assert "workbench-ft-" not in str(bad.value)
    assert list(tmp_path.iterdir()) == []


def test_baselines_need_a_kind_that_has_them_and_dev_data():
    train = in_memory([TextExample("a", "x"), TextExample("b", "y")], "train")
    with pytest.raises(InputError, match="not for mlm"):
        run_baselines("mlm", TaskData(train, train, None, {}), TrainConfig())
    with pytest.raises(InputError, match="need dev data"):
        run_baselines("seqcls", TaskData(train, None, None, {}), TrainConfig())


def test_baselines_that_cannot_run_are_refused_before_training(tmp_path, monkeypatch):
    def no_training(*args, **kwargs):
        raise AssertionError("trained before refusing the baselines")

    monkeypatch.setattr(runs, "finetune", no_training)
    train = in_memory([TextExample("a", "x"), TextExample("b", "y")], "train")
    out = tmp_path / "run"
    with pytest.raises(InputError, match="need dev data"):
        train_with_baselines("seqcls", TaskData(train, None, None, {}), TrainConfig(), out,
                             baselines=True)  # fmt: skip
    with pytest.raises(InputError, match="not for mlm"):
        train_with_baselines("mlm", TaskData(train, train, None, {}), TrainConfig(), out,
                             baselines=True)  # fmt: skip
    assert not out.exists()


def test_summary_lists_epochs_best_test_and_baselines():
    card = {
        "metric": "f1", "task": "token", "base_model": "tiny", "train_seconds": 12.0,
        "device": "cpu", "parameters": {"trainable": 1000, "total": 5000},
        "epochs": [{"epoch": 1, "train_loss": 0.5, "dev": {"f1": 0.25}}],
        "best_epoch": 1, "best_metric": 0.25, "test": {"f1": 0.2},
        "baselines": [{"name": "majority", "metric": "accuracy", "value": 0.5}],
        "output": "runs/x",
    }  # fmt: skip
    assert summary(card).splitlines() == [
        "model directory: runs/x",
        "task token on tiny; 1,000 of 5,000 parameters trained; 12s on cpu",
        "  epoch 1: train_loss 0.5000  dev f1 0.2500",
        "best epoch 1: dev f1 0.2500",
        "test f1 0.2000",
        "baseline majority: dev accuracy 0.5000",
    ]


def test_summary_of_a_run_without_dev_data_says_so_instead_of_nan():
    card = {
        "metric": "loss", "task": "mlm", "base_model": "tiny", "train_seconds": 5.0,
        "device": "cpu", "parameters": {"trainable": 10, "total": 10},
        "epochs": [{"epoch": 1, "train_loss": 9.5, "dev": {}}], "best_epoch": 0,
        "output": "runs/mlm",
    }  # fmt: skip
    lines = summary(card).splitlines()
    assert lines[2] == "  epoch 1: train_loss 9.5000  (no dev data)"
    assert "nan" not in summary(card)


def test_summary_names_the_parts_of_an_epoch_that_a_stop_or_a_limit_cut():
    card = {
        "metric": "accuracy", "task": "seqcls", "base_model": "tiny", "train_seconds": 5.0,
        "device": "cpu", "parameters": {"trainable": 10, "total": 10}, "best_epoch": 1,
        "best_metric": 0.9, "output": "runs/x",
        "epochs": [{"epoch": 1, "train_loss": 0.7, "dev": {}, "cut": 17},  # stopped by hand
                   {"epoch": 1, "train_loss": 0.5, "dev": {"accuracy": 0.8}, "cut": 20},
                   {"epoch": 1, "train_loss": 0.4, "dev": {"accuracy": 0.9}, "cut": 0}],
    }  # fmt: skip
    assert summary(card).splitlines()[2:5] == [
        "  epoch 1 (its first 17 batches): train_loss 0.7000  (not scored)",
        "  epoch 1 (its first 20 batches): train_loss 0.5000  dev accuracy 0.8000",
        "  epoch 1: train_loss 0.4000  dev accuracy 0.9000",
    ]


def test_uploads_that_are_not_text_are_refused_by_name():
    with pytest.raises(InputError, match="notes.csv is not UTF-8 text"):
        uploaded_data("seqcls", ("ok.csv", b"text,label\na,x\n"), ("notes.csv", b"\xc3\x28"))
    with pytest.raises(InputError, match="blob.csv is not a text file"):
        uploaded_data("seqcls", ("blob.csv", b"text\x00label\n"))


def _sentiment(n: int) -> list[TextExample]:
    words = {"pos": ("good", "great", "fine"), "neg": ("bad", "awful", "poor")}
    return [
        TextExample(f"the film was {words[label][i % 3]}", label)
        for i in range(n)
        for label in ("pos", "neg")
    ][:n]


def test_train_with_baselines_writes_the_baselines_into_the_card(
    tiny_model_dir, tmp_path, monkeypatch
):
    monkeypatch.delenv("RANK", raising=False)
    data = TaskData(in_memory(_sentiment(32), "train"), in_memory(_sentiment(12), "dev"),
                    in_memory(_sentiment(8), "test"), {"builtin": {"name": "toy"}})  # fmt: skip
    cfg = TrainConfig(epochs=1, batch_size=16, max_length=16, device="cpu")
    said: list[str] = []
    out = tmp_path / "run"
    card = train_with_baselines("seqcls", data, cfg, out, str(tiny_model_dir), baselines=True,
                                say=said.append, progress=False)  # fmt: skip
    assert said == ["Scoring the baselines…"]
    names = [b["name"] for b in card["baselines"]]
    assert len(names) == 2 and names[0] == "majority"
    assert card["test"] and card["builtin"] == {"name": "toy"}  # test split and data facts
    assert read_card(out) == card  # what is returned is what the model directory holds
    assert summary({**card, "output": str(out)}).count("baseline ") == 2
    # no baselines asked: none run, none in the card
    card = train_with_baselines("seqcls", data, cfg, out, str(tiny_model_dir), say=said.append,
                                overwrite=True, progress=False)  # fmt: skip
    assert "baselines" not in card and said == ["Scoring the baselines…"]


def test_train_with_baselines_scores_them_in_the_main_process_only(
    tiny_model_dir, tmp_path, monkeypatch
):
    monkeypatch.setenv("RANK", "1")  # another process of a multi-GPU launch
    assert not is_main_process()
    monkeypatch.setenv("RANK", "0")
    assert is_main_process()
    # training itself as another process would (no distributed launch here)
    monkeypatch.setattr(runs, "is_main_process", lambda: False)
    data = TaskData(in_memory(_sentiment(16), "train"), in_memory(_sentiment(8), "dev"), None, {})
    cfg = TrainConfig(epochs=1, batch_size=16, max_length=16, device="cpu")
    said: list[str] = []
    card = train_with_baselines("seqcls", data, cfg, tmp_path / "run", str(tiny_model_dir),
                                baselines=True, say=said.append, progress=False)  # fmt: skip
    assert "baselines" not in card and said == []
