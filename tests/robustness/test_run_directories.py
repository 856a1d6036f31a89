"""A fine-tuning run's directory is complete or absent, and nothing the user had is lost.

* ``--overwrite`` checks the data, the options and the device first: a refused run leaves the
  finished model as it was, byte for byte;
* the new model replaces the old one only once it is complete: a run that fails while its
  model is written (a kill during the WSD gloss index, a full disk) leaves the old model and
  its checkpoint, and no half-written directory anywhere;
* an unfinished run (a checkpoint) is refused without ``--resume`` or ``--overwrite``;
* a loss that becomes NaN or infinite stops the run with one clear line, keeping the last good
  checkpoint; a run stopped before its first checkpoint leaves no folder;
* a model directory whose ledger lists a sense index that is gone is an error, never another
  system's answer.
"""

from __future__ import annotations

import re
import warnings
from pathlib import Path

import pytest
import torch

from workbench.cli.main import main
from workbench.errors import TrainingError
from workbench.finetune.data.splits import file_data
from workbench.finetune.tasks.registry import finetune
from workbench.finetune.tasks.sequence import SequenceTask
from workbench.finetune.training import checkpoint as ckpt
from workbench.finetune.training import modeling
from workbench.finetune.training.config import TrainConfig
from workbench.finetune.training.store import CHECKPOINT_DIR, is_run_dir, read_card
from workbench.outputs import LEDGER
from workbench.wsd.biencoder import CARD

FAST = dict(epochs=2, lr=3e-3, batch_size=8, max_length=32, warmup_ratio=0.0, seed=0)


def _rows(n: int) -> str:
    return "".join(f"the film was {'good' if i % 2 else 'bad'},{i % 2}\n" for i in range(n))


@pytest.fixture
def place(tmp_path, monkeypatch) -> Path:
    monkeypatch.setenv("WORKBENCH_CACHE", str(tmp_path / "cache"))
    (tmp_path / "train.csv").write_text("text,label\n" + _rows(16))
    (tmp_path / "dev.csv").write_text("text,label\n" + _rows(8))
    (tmp_path / "bad-dev.csv").write_text("sentence,class\nno such columns,1\n")
    return tmp_path


def _argv(place: Path, tiny: Path, out: str, *more: str) -> list[str]:
    return ["finetune", "seqcls", "--train", str(place / "train.csv"), "--dev",
            str(place / "dev.csv"), "--out", str(place / out), "--model", str(tiny),
            "--device", "cpu", "--epochs", "1", "--batch-size", "8", "--max-length", "32",
            "--no-progress", *more]  # fmt: skip


def _main(argv: list[str]) -> int:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return main(argv)


def _snapshot(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in folder.rglob("*") if p.is_file()}


def _one_line(capsys, pattern: str) -> None:
    err = capsys.readouterr().err
    lines = [line for line in err.splitlines() if line.startswith("workbench: error: ")]
    assert len(lines) == 1 and re.search(pattern, lines[0]), err
    assert "Traceback" not in err


def _finished(place: Path, tiny: Path, capsys) -> dict[str, bytes]:
    assert _main(_argv(place, tiny, "run")) == 0
    capsys.readouterr()
    assert is_run_dir(place / "run") and (place / "run" / CARD).is_file()
    return _snapshot(place / "run")


REFUSED_OVERWRITES = [
    ("a-dev-file-without-the-columns", ["--dev", "{w}/bad-dev.csv"], r"bad-dev.csv"),
    ("a-missing-dev-file", ["--dev", "{w}/missing.csv"], r"missing.csv does not exist"),
    ("a-dev-directory", ["--dev", "{w}/cache"], r"cache is a directory, not a file"),
    ("a-non-finite-lr", ["--lr", "inf"], r"argument --lr: must be a finite number > 0"),
    ("an-options-of-another-task", ["--mlm-probability", "0.3"], r"option of the mlm task"),
    *(
        [("cuda-on-a-cpu-machine", ["--device", "cuda"], r"CUDA is not available")]
        if not torch.cuda.is_available()
        else []
    ),
]


@pytest.mark.parametrize(
    "name, more, expect", REFUSED_OVERWRITES, ids=[c[0] for c in REFUSED_OVERWRITES]
)
def test_overwrite_checks_everything_before_the_old_model_is_touched(
    place, tiny_model_dir, capsys, name, more, expect
):
    before = _finished(place, tiny_model_dir, capsys)
    (place / "cache").mkdir(exist_ok=True)
    extra = [a.format(w=place) for a in more]
    assert _main(_argv(place, tiny_model_dir, "run", "--overwrite", *extra)) == 2
    _one_line(capsys, expect)
    assert _snapshot(place / "run") == before  # the finished model, byte for byte


def test_a_rerun_without_flags_keeps_a_finished_model(place, tiny_model_dir, capsys):
    before = _finished(place, tiny_model_dir, capsys)
    assert _main(_argv(place, tiny_model_dir, "run")) == 2
    _one_line(capsys, r"already holds a fine-tuned model.*--overwrite")
    assert _snapshot(place / "run") == before
    card = read_card(place / "run")
    assert "config.json" in card["files"] and CARD not in card["files"]


def test_the_old_model_stays_until_the_new_one_is_complete(
    place, tiny_model_dir, capsys, monkeypatch
):
    before = _finished(place, tiny_model_dir, capsys)

    def killed(self, output, model, card, data):
        assert output.name != "run" and output.parent == place  # written beside, not in place
        assert (output / "config.json").is_file() and not (output / CARD).is_file()
        raise RuntimeError("killed while the model's own files are written")

    monkeypatch.setattr(SequenceTask, "finish", killed)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        code = main(_argv(place, tiny_model_dir, "run", "--overwrite", "--epochs", "2"))
    assert code == 2
    capsys.readouterr()
    after = _snapshot(place / "run")
    checkpoint = {k: v for k, v in after.items() if k.startswith(CHECKPOINT_DIR)}
    assert {k: v for k, v in after.items() if k not in checkpoint and k != LEDGER} == {
        k: v for k, v in before.items() if k != LEDGER
    }  # the old model, whole
    assert f"{CHECKPOINT_DIR}/{ckpt.LAST}" in checkpoint  # the new run can be resumed
    left = {p.name for p in place.iterdir()} - {"cache"}
    assert left == {"bad-dev.csv", "dev.csv", "run", "train.csv"}  # nothing half-written beside
    monkeypatch.undo()
    # the run is unfinished now: refused without a flag, finished with --resume
    argv = _argv(place, tiny_model_dir, "run", "--epochs", "2")
    assert _main(argv) == 2
    _one_line(capsys, r"holds a fine-tuned model and a checkpoint .*--resume.*--overwrite")
    assert _main([*argv, "--resume"]) == 0
    card = read_card(place / "run")
    assert len(card["epochs"]) == 2 and not (place / "run" / CHECKPOINT_DIR).exists()
    assert all((place / "run" / name).exists() for name in card["files"])


def test_an_unfinished_run_is_not_trained_again_from_scratch(place, tiny_model_dir, capsys):
    data = file_data("seqcls", place / "train.csv", place / "dev.csv")
    cfg = TrainConfig(**{**FAST, "epochs": 3})

    def stop_in_epoch_2(event: dict) -> None:
        if event["event"] == "step" and event["epoch"] == 2:
            raise KeyboardInterrupt  # the run is killed

    with pytest.raises(KeyboardInterrupt):
        finetune("seqcls", data.train, data.dev, cfg, place / "run", model=str(tiny_model_dir),
                 progress=False, callback=stop_in_epoch_2)  # fmt: skip
    checkpoint = place / "run" / CHECKPOINT_DIR / ckpt.LAST
    saved = checkpoint.read_bytes()
    assert ckpt.load_tree(checkpoint)["state"]["epoch"] == 1
    argv = _argv(place, tiny_model_dir, "run", "--epochs", "3", "--lr", "0.003",
                 "--warmup-ratio", "0")  # fmt: skip
    assert _main(argv) == 2
    _one_line(capsys, r"holds an unfinished run")
    assert checkpoint.read_bytes() == saved  # not overwritten by a fresh start
    assert not (place / "run" / CARD).exists()


def _nan_after(monkeypatch, calls: int) -> None:
    """Training losses become NaN after ``calls`` training forward passes."""
    forward = modeling.SequenceModel.forward
    seen = [0]

    def poisoned(self, labels=None, **batch):
        loss, logits = forward(self, labels, **batch)
        if self.training and loss is not None:
            seen[0] += 1
            if seen[0] > calls:
                loss = loss * float("nan")
        return loss, logits

    monkeypatch.setattr(modeling.SequenceModel, "forward", poisoned)


def test_a_non_finite_loss_stops_the_run_and_keeps_the_last_good_checkpoint(
    place, tiny_model_dir, monkeypatch
):
    _nan_after(monkeypatch, 3)  # the set-up's probe, then epoch 1's 2 batches of 8: fine
    data = file_data("seqcls", place / "train.csv", place / "dev.csv")
    with pytest.raises(TrainingError, match=r"became nan in epoch 2, batch 1.*after epoch 1"):
        finetune("seqcls", data.train, data.dev, TrainConfig(**{**FAST, "epochs": 3}),
                 place / "run", model=str(tiny_model_dir), progress=False)  # fmt: skip
    saved = ckpt.load_tree(place / "run" / CHECKPOINT_DIR / ckpt.LAST)
    assert saved["state"]["epoch"] == 1
    assert all(torch.isfinite(t).all() for t in saved["model"].values())
    assert not (place / "run" / CARD).exists() and not (place / "run" / "config.json").exists()


def test_a_loss_that_is_nan_from_the_start_leaves_no_folder(
    place, tiny_model_dir, capsys, monkeypatch
):
    _nan_after(monkeypatch, 0)
    assert _main(_argv(place, tiny_model_dir, "new")) == 2
    _one_line(capsys, r"training loss became nan in epoch 1, batch 1.*no checkpoint")
    assert not (place / "new").exists()


def test_a_huge_learning_rate_ends_in_one_line_not_a_nan_model(place, tiny_model_dir, capsys):
    argv = _argv(place, tiny_model_dir, "huge", "--lr", "1e30", "--max-grad-norm", "0")
    assert _main(argv) == 2
    _one_line(capsys, r"training loss became (nan|inf)")
    assert not (place / "huge" / CARD).exists()
