"""A WSD run in two stages by one command (``--then-frozen``), on a tiny random BERT and a few
dozen SemCor sentences: the second stage trains the context tower alone from the first stage's
model, the card records both, a stage cut short resumes and ends where an uninterrupted run
does, and outputs that may not be written are refused before the first stage trains."""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import pytest
from safetensors.numpy import load_file

from tests.finetune.tasks.test_wsd import write_xml
from tests.finetune.tasks.tiny_wsd import TINY_WSD
from workbench.cli.main import main
from workbench.corpora.datasets import load_dataset
from workbench.errors import InputError, OutputError
from workbench.finetune.data.readers import DataFile
from workbench.finetune.data.splits import TaskData, redraw
from workbench.finetune.tasks.wsd.stages import (
    first_stage_dir,
    second_stage_config,
    train_then_frozen,
)
from workbench.finetune.training.store import read_card
from workbench.wsd.biencoder import BiEncoder

CFG = TINY_WSD.replace(epochs=1)
LR = 1e-3


@pytest.fixture(scope="module")
def splits(wsd_data):
    """40 SemCor sentences to train on first, 12 (dev), and 16 others for the second stage."""
    sentences = [s for s in load_dataset("semcor", wsd_data).sentences[:120] if s.instances]
    data = TaskData(
        DataFile(tuple(sentences[:40]), "semcor[:40]", "a"),
        DataFile(tuple(sentences[40:52]), "semcor[40:52]", "b"),
        None,
        {},
    )
    more = TaskData(DataFile(tuple(sentences[52:68]), "semcor[52:68]", "c"), data.dev, None, {})
    return data, more


@pytest.fixture(scope="module")
def whole(tiny_model_dir, splits, tmp_path_factory):
    """Both stages in one uninterrupted call, the first stage's folder kept."""
    data, more = splits
    out = tmp_path_factory.mktemp("stages") / "model"
    result = train_then_frozen(data, more, CFG, out, str(tiny_model_dir), lr=LR, progress=False,
                               keep_checkpoint=True)  # fmt: skip
    return out, result


def tensors(directory: Path) -> dict[str, np.ndarray]:
    """Every tensor of the ``*.safetensors`` files directly in ``directory``."""
    found: dict[str, np.ndarray] = {}
    for path in sorted(directory.glob("*.safetensors")):
        found.update({f"{path.name}:{k}": v for k, v in load_file(str(path)).items()})
    assert found
    return found


def test_the_second_stage_trains_the_context_tower_alone_from_the_first(whole, tiny_model_dir):
    out, result = whole
    first = first_stage_dir(out)
    assert result.stopped is None and result.output == out and first.name == "model.first-stage"
    # the gloss tower is the first stage's, bit for bit; the context tower moved on
    assert_same = np.testing.assert_array_equal
    glosses, first_glosses = tensors(out / "gloss_encoder"), tensors(first / "gloss_encoder")
    assert glosses.keys() == first_glosses.keys()
    for k, v in glosses.items():
        assert_same(v, first_glosses[k])
    context, first_context = tensors(out), tensors(first)
    assert any(
        not np.array_equal(v, first_context[k]) for k, v in context.items() if "head" not in k
    )
    card, first_card = read_card(out), read_card(first)
    assert card["options"] == {**first_card["options"], "lr": LR, "seed": CFG.seed + 1,
                               "freeze_glosses": True}  # fmt: skip
    assert not first_card["options"]["freeze_glosses"]
    assert card["data"]["train"]["source"] == "semcor[52:68]"
    assert card["earlier_training"] == "semcor[:40]"
    assert card["base_location"] == first_card["base_location"] == str(tiny_model_dir)
    told = card["continued_from"]
    assert told["options"] == first_card["options"] and told["model"] == str(first)
    assert told["train_seconds"] == first_card["train_seconds"] > 0
    assert told["test"] == first_card["test"]
    # the result answers as a bi-encoder
    bi = BiEncoder(out)
    assert bi.training.corpus.startswith("semcor[:40] then semcor[52:68]")


def test_a_stage_cut_short_resumes_and_ends_where_an_uninterrupted_run_does(
    whole, tiny_model_dir, splits, tmp_path
):
    data, more = splits
    out = tmp_path / "model"
    first = first_stage_dir(out)
    cut = train_then_frozen(data, more, CFG.replace(max_steps=2), out, str(tiny_model_dir), lr=LR,
                            progress=False)  # fmt: skip
    assert cut.stopped == "the first stage stopped before its end" and cut.output == first
    assert (first / "checkpoint").is_dir() and not out.exists()
    with pytest.raises(InputError, match="--resume"):  # not started again by mistake
        train_then_frozen(data, more, CFG, out, str(tiny_model_dir), lr=LR, progress=False)
    done = train_then_frozen(data, more, CFG, out, str(tiny_model_dir), lr=LR, resume=True,
                             progress=False)  # fmt: skip
    assert done.stopped is None and done.output == out
    assert not first.exists()  # the first stage's folder goes once the model is complete
    assert read_card(out)["continued_from"]["model"].endswith("(removed once the second stage "
                                                                "was complete)")  # fmt: skip
    expected = tensors(whole[0])
    for k, v in tensors(out).items():
        np.testing.assert_allclose(v, expected[k], atol=1e-6, rtol=0)
    with pytest.raises(InputError):  # finished: nothing is left to resume, nothing is redone
        train_then_frozen(data, more, CFG, out, str(tiny_model_dir), lr=LR, resume=True,
                          progress=False)  # fmt: skip


def test_what_may_not_be_written_is_refused_before_the_first_stage_trains(
    whole, tiny_model_dir, splits, tmp_path
):
    data, more = splits
    out = tmp_path / "mine"
    out.mkdir()
    (out / "notes.txt").write_text("the user's")
    with pytest.raises(OutputError):
        train_then_frozen(data, more, CFG, out, str(tiny_model_dir), lr=LR, progress=False)
    assert not first_stage_dir(out).exists() and (out / "notes.txt").read_text() == "the user's"
    # a finished first stage of other options is not taken as this command's
    other = tmp_path / "other"
    shutil.copytree(first_stage_dir(whole[0]), first_stage_dir(other))
    with pytest.raises(InputError, match="other options than this command's"):
        train_then_frozen(data, more, CFG.replace(lr=5e-4), other, str(tiny_model_dir), lr=LR,
                          resume=True, progress=False)  # fmt: skip
    assert not other.exists()


def test_redraw_takes_n_at_random_with_the_seed(splits):
    data, _ = splits
    again = redraw(data.train, seed=1, n=8)
    assert again.source == "semcor[:40](seed=1,n=8)" and len(again.examples) == 8
    assert again == redraw(data.train, seed=1, n=8) and again != redraw(data.train, seed=2, n=8)
    assert set(again.examples) <= set(data.train.examples)
    assert len(redraw(data.train, seed=1, n=1000).examples) == 40  # all of it, shuffled


def test_the_command_trains_both_stages_and_refuses_a_stage_of_nothing(
    wsd_data, tiny_model_dir, tmp_path, capsys
):
    sentences = [s for s in load_dataset("semcor", wsd_data).sentences[:80] if s.instances]
    train = write_xml(sentences[:24], tmp_path / "train.data.xml")
    dev = write_xml(sentences[24:30], tmp_path / "dev.data.xml")
    out = tmp_path / "out"
    args = ["finetune", "wsd", "--train", str(train), "--dev", str(dev), "--out", str(out),
            "--model", str(tiny_model_dir), "--device", "cpu", "--no-progress", "--epochs", "1",
            "--batch-size", "4", "--max-length", "64", "--gloss-max-length", "24",
            "--head-pooling", "mean", "--then-frozen", "8", "--then-lr", "1e-3"]  # fmt: skip
    assert main(args) == 0
    said = capsys.readouterr().out
    assert f"model directory: {out}" in said
    card = read_card(out)
    assert card["data"]["train"]["source"] == f"{train}(seed=1,n=8)"
    assert card["options"]["freeze_glosses"] and card["options"]["lr"] == 1e-3
    assert "--then-frozen 8" in card["command"] and not first_stage_dir(out).exists()
    assert main([*args[:-4], "--then-frozen", "0"]) == 2  # no stage of no sentences
    assert "--then-frozen" in capsys.readouterr().err


def test_the_second_stage_freezes_the_glosses_and_mixes_no_other_text_in():
    mixed = CFG.with_task(gloss_text="esr", gloss_mix=0.3)
    second = second_stage_config(mixed, 3e-5)
    assert second.task.freeze_glosses and second.task.gloss_mix == 0.0
    assert second.task.gloss_text == "esr" and second.lr == 3e-5 and second.seed == CFG.seed + 1
