"""The training loop on the tiny random BERT: learning, saving, loading in the Encoder,
freezing, layer-wise decay, LoRA merging, masked-LM with a new head, resume after SIGKILL."""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
import torch

from workbench import Encoder
from workbench.encoding.models import load_model, load_tokenizer, resolve_model
from workbench.errors import InputError
from workbench.fileio import stale_temporaries
from workbench.finetune.data.readers import TaggedSentence, TextExample, in_memory, read_text
from workbench.finetune.data.splits import file_data
from workbench.finetune.tasks.base import module_state
from workbench.finetune.tasks.mlm import MlmOptions
from workbench.finetune.tasks.registry import finetune, load_finetuned
from workbench.finetune.tasks.sequence import SequenceOptions
from workbench.finetune.tasks.token import TokenOptions
from workbench.finetune.training import checkpoint as ckpt
from workbench.finetune.training.config import TrainConfig
from workbench.finetune.training.modeling import SequenceModel, TokenModel
from workbench.finetune.training.parameters import (
    add_lora,
    count_parameters,
    freeze,
    param_groups,
)
from workbench.finetune.training.stopping import StopRequest
from workbench.finetune.training.store import (
    adapter_base_of,
    read_card,
    save_model_dir,
)

REPO = Path(__file__).resolve().parents[3]
POS, NEG = ["good", "great", "fine", "nice"], ["bad", "awful", "poor", "sad"]


def _sentiment(n: int, seed: int) -> list[TextExample]:
    rng = random.Random(seed)
    out = []
    for _ in range(n):
        label = rng.random() < 0.5
        word = rng.choice(POS if label else NEG)
        out.append(TextExample(f"the film was {word} today", "pos" if label else "neg"))
    return out


def _write_csv(path: Path, examples: list[TextExample]) -> Path:
    path.write_text("text,label\n" + "".join(f"{e.text},{e.label}\n" for e in examples))
    return path


def _tagged(n: int, seed: int) -> list[TaggedSentence]:
    """Sentences with multi-word PER / LOC names (B- then I-), for the token task."""
    rng = random.Random(seed)
    names = {"PER": ["john smith", "mary", "ada lovelace"], "LOC": ["paris", "new york city"]}
    out = []
    for _ in range(n):
        words, tags = [], []
        for _ in range(rng.randint(3, 7)):
            if rng.random() < 0.35:
                kind = rng.choice(sorted(names))
                parts = rng.choice(names[kind]).split()
                words += parts
                tags += [f"B-{kind}"] + [f"I-{kind}"] * (len(parts) - 1)
            else:
                words.append(rng.choice(["the", "went", "to", "saw", "and", "today"]))
                tags.append("O")
        out.append(TaggedSentence(tuple(words), tuple(tags)))
    return out


FAST = dict(lr=3e-3, batch_size=16, max_length=32, warmup_ratio=0.0)
MEAN = SequenceOptions(head_pooling="mean")  # the sequence runs' head


def _hidden(model, tokenizer, words: list[str]) -> torch.Tensor:
    batch = tokenizer([words], is_split_into_words=True, return_tensors="pt")
    with torch.no_grad():
        out = model(**batch, output_hidden_states=True)
    return torch.stack(out.hidden_states)[:, 0]  # (n_layers + 1, seq, dim)


def test_sequence_task_learns_and_saved_model_loads_in_encoder(tiny_model_dir, tmp_path):
    train = in_memory(_sentiment(160, 0), "train")
    dev = in_memory(_sentiment(60, 1), "dev")
    out = tmp_path / "seq"
    result = finetune(
        "seqcls",
        train,
        dev,
        TrainConfig(epochs=4, seed=0, **FAST, task=MEAN),
        out,
        model=str(tiny_model_dir),
        progress=False,
    )
    majority = max(sum(e.label == lab for e in dev.examples) for lab in ("pos", "neg")) / 60
    assert result.best > max(0.9, majority + 0.2)
    card = read_card(out)
    assert card["task"] == "seqcls" and card["labels"] == ["neg", "pos"]
    assert card["data"]["train"]["sha256"] == train.sha256 and len(card["epochs"]) == 4
    assert card["best_epoch"] == result.best_epoch and card["options"]["lr"] == FAST["lr"]
    assert not (out / "checkpoint").exists()
    # the Encoder loads the directory and computes the same hidden states as the trained model
    words = ["the", "film", "was", "unbelievably", "good"]
    enc = Encoder(model=str(out), device="cpu", pooling="first")
    assert enc.backend.name == "onnx"  # a fine-tuned model answers from its export too
    tok = load_tokenizer(resolve_model(str(out)))  # transformers' own, for the torch models
    trained = _hidden(result.model.encoder, tok, words)
    loaded = _hidden(enc.model, tok, words)
    torch.testing.assert_close(loaded, trained, atol=1e-5, rtol=1e-5)
    emb = enc.encode([words])
    wids = enc.tokenizer([words], is_split_into_words=True).word_ids(0)
    first = [wids.index(i) for i in range(len(words))]
    np.testing.assert_allclose(emb.vectors, trained[:, first].permute(1, 0, 2).numpy(), atol=1e-5)
    assert enc.fingerprint != Encoder(model=str(tiny_model_dir), device="cpu").fingerprint
    # the head comes back too: same predictions as the trained model
    model, tok, head = load_finetuned(out)
    batch = tok(
        ["the film was great today", "the film was awful today"], return_tensors="pt", padding=True
    )
    with torch.no_grad():
        ours, theirs = model(**batch)[1], result.model(**batch)[1]
    torch.testing.assert_close(ours, theirs)
    assert head["labels"] == ["neg", "pos"]


def test_token_task_entity_f1_and_label_modes(tiny_model_dir, tmp_path):
    train, dev = in_memory(_tagged(160, 0), "train"), in_memory(_tagged(40, 1), "dev")
    for mode in ("first", "all"):
        cfg = TrainConfig(epochs=3, seed=0, **FAST, task=TokenOptions(label_mode=mode))
        result = finetune(
            "token", train, dev, cfg, tmp_path / mode, model=str(tiny_model_dir), progress=False
        )
        assert result.best > 0.8, mode
        assert set(result.history[-1].dev) == {"f1", "precision", "recall", "word_accuracy"}


def test_freezing_and_layerwise_lr(tiny_model_dir, tmp_path):
    from safetensors.torch import load_file

    cfg = TrainConfig(lr=1e-3, layer_lr_decay=0.5, freeze_embeddings=True, freeze_layers=1)
    model = SequenceModel(load_model(resolve_model(str(tiny_model_dir))), 2, "cls", 0.1)
    freeze(model, [model.encoder], cfg)
    frozen = {n for n, p in model.named_parameters() if not p.requires_grad}
    assert any("embeddings" in n for n in frozen) and any(".layer.0." in n for n in frozen)
    assert not any(".layer.1." in n or n.startswith("head") for n in frozen)
    lrs = {}
    for group in param_groups(model, [model.encoder], cfg):
        for p in group["params"]:
            name = next(n for n, q in model.named_parameters() if q is p)
            lrs[name] = group["lr"]
            if p.ndim == 1:
                assert group["weight_decay"] == 0.0
    assert lrs["head.out.weight"] == pytest.approx(1e-3)
    assert lrs["encoder.encoder.layer.1.attention.self.query.weight"] == pytest.approx(1e-3)
    assert not any(".layer.0." in n for n in lrs)  # frozen: not given to the optimizer
    cfg2 = TrainConfig(lr=1e-3, layer_lr_decay=0.5)
    model2 = SequenceModel(load_model(resolve_model(str(tiny_model_dir))), 2, "cls", 0.1)
    lr2 = {
        id(p): g["lr"] for g in param_groups(model2, [model2.encoder], cfg2) for p in g["params"]
    }
    enc = model2.encoder
    assert lr2[id(enc.encoder.layer[0].output.dense.weight)] == pytest.approx(5e-4)
    assert lr2[id(enc.embeddings.word_embeddings.weight)] == pytest.approx(2.5e-4)
    # trained with the freeze: frozen weights are bit-identical to the base afterwards
    train = in_memory(_sentiment(48, 0), "train")
    finetune(
        "seqcls",
        train,
        None,
        TrainConfig(epochs=1, freeze_embeddings=True, freeze_layers=1, **FAST, task=MEAN),
        tmp_path / "frozen",
        model=str(tiny_model_dir),
        progress=False,
    )
    base = load_file(str(Path(tiny_model_dir) / "model.safetensors"))
    tuned = load_file(str(tmp_path / "frozen" / "model.safetensors"))
    assert torch.equal(
        base["embeddings.word_embeddings.weight"], tuned["embeddings.word_embeddings.weight"]
    )
    assert torch.equal(
        base["encoder.layer.0.output.dense.weight"], tuned["encoder.layer.0.output.dense.weight"]
    )
    assert not torch.equal(
        base["encoder.layer.1.output.dense.weight"], tuned["encoder.layer.1.output.dense.weight"]
    )


def test_lora_adapters_are_saved_unmerged_and_load_in_encoder(tiny_model_dir, tmp_path):
    source = resolve_model(str(tiny_model_dir))
    model = TokenModel(load_model(source), 3, 0.0)
    (model.encoder,) = add_lora(
        [model.encoder], TrainConfig(lora_r=4, lora_targets="query,value,dense")
    )
    trainable, total = count_parameters(model)
    assert trainable < total / 10
    with torch.no_grad():  # a trained adapter: non-zero B so the merge changes the weights
        for name, p in model.named_parameters():
            if "lora_B" in name:
                p.normal_(0, 0.5)
    tok = load_tokenizer(source)
    words = ["adapters", "are", "merged"]
    model.eval()
    with_adapters = _hidden(model.encoder, tok, words)
    base = _hidden(load_model(source), tok, words)
    assert not torch.allclose(with_adapters[-1], base[-1], atol=1e-3)
    out = tmp_path / "run"
    base_info = adapter_base_of(source, model.encoder)
    head = {"task": "token", "labels": ["O", "B-X", "I-X"], "head_dropout": 0.0}
    save_model_dir(model.encoder, tok, head, module_state(model.head), {}, out, base_info)
    # PEFT's own format, no copy of the base weights, and the base recorded
    assert (out / "adapter_config.json").is_file() and (out / "adapter_model.safetensors").is_file()
    assert not (out / "model.safetensors").exists() and not (out / "config.json").exists()
    record = json.loads((out / "base_model.json").read_text())
    assert record["name"] == str(tiny_model_dir.resolve()) and not record["packaged"]
    assert record["fingerprint"] == Encoder(model=str(tiny_model_dir), device="cpu").fingerprint
    config = json.loads((out / "adapter_config.json").read_text())
    assert config["peft_type"] == "LORA" and set(config["target_modules"]) >= {"query", "value"}
    # the Encoder loads base + adapters (merged in memory): the same hidden states
    enc = Encoder(model=str(out), device="cpu")
    torch.testing.assert_close(_hidden(enc.model, tok, words), with_adapters, atol=1e-5, rtol=1e-5)
    assert enc.fingerprint not in (record["fingerprint"], "")
    # and PEFT itself loads them onto the base
    from peft import PeftModel

    peft = PeftModel.from_pretrained(load_model(source), str(out)).eval()
    torch.testing.assert_close(_hidden(peft, tok, words), with_adapters, atol=1e-5, rtol=1e-5)
    loaded, _, head = load_finetuned(out)
    assert head["task"] == "token"
    torch.testing.assert_close(
        _hidden(loaded.encoder, tok, words), with_adapters, atol=1e-5, rtol=1e-5
    )


def test_mlm_creates_a_new_head_and_learns(tiny_model_dir, tmp_path):
    lines = [f"the {w} cat sat on the {v} mat ." for w in POS for v in NEG] * 6
    (tmp_path / "text.txt").write_text("\n".join(lines) + "\n")
    data = read_text(tmp_path / "text.txt")
    cfg = TrainConfig(
        epochs=3,
        lr=2e-2,
        batch_size=8,
        max_length=32,
        warmup_ratio=0.0,
        task=MlmOptions(whole_word_mask=True),
    )
    result = finetune(
        "mlm", data, data, cfg, tmp_path / "mlm", model=str(tiny_model_dir), progress=False
    )
    assert any("no masked-LM head: a NEW head was created" in n for n in result.notes)
    losses = [r.dev["loss"] for r in result.history]
    assert losses[-1] < losses[0] - 1.0
    assert result.card["metric"] == "loss" and result.best == min(losses)
    Encoder(model=str(tmp_path / "mlm"), device="cpu")  # loads as a plain encoder
    model, _, head = load_finetuned(tmp_path / "mlm")
    assert head["task"] == "mlm"
    torch.testing.assert_close(
        model.lm.cls.predictions.transform.dense.weight,
        result.model.lm.cls.predictions.transform.dense.weight,
    )


def _cli(args: list[str], env: dict) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-m", "workbench", "finetune", *args],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )


def test_resume_after_sigkill_matches_uninterrupted_run(tiny_model_dir, tmp_path):
    from safetensors.torch import load_file

    train = _write_csv(tmp_path / "train.csv", _sentiment(240, 0))
    dev = _write_csv(tmp_path / "dev.csv", _sentiment(40, 1))
    opts = [
        "--epochs",
        "4",
        "--lr",
        "1e-3",
        "--batch-size",
        "8",
        "--max-length",
        "32",
        "--seed",
        "3",
        "--model",
        str(tiny_model_dir),
        "--no-progress",
    ]
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    killed = tmp_path / "killed"
    # SIGKILL while epoch 2's checkpoint is written: its temporary is complete, not renamed
    kill_env = {**env, "WORKBENCH_KILL_AT": f"atomic:{ckpt.LAST}#2"}
    proc = _cli(
        ["seqcls", "--train", str(train), "--dev", str(dev), "--out", str(killed), *opts],
        kill_env,
    )
    proc.communicate(timeout=300)
    assert proc.returncode == -signal.SIGKILL, "the run ended before it could be killed"
    directory = killed / "checkpoint"
    assert stale_temporaries(directory, [ckpt.LAST])  # what the killed writer left
    epochs_done = ckpt.load_tree(directory / ckpt.LAST)["state"]["epoch"]
    assert epochs_done == 1 and not (killed / "training_card.json").exists()
    resumed = _cli(
        [
            "seqcls",
            "--train",
            str(train),
            "--dev",
            str(dev),
            "--out",
            str(killed),
            "--resume",
            *opts,
        ],
        env,
    )
    log, _ = resumed.communicate(timeout=300)
    assert resumed.returncode == 0, log
    assert f"after epoch {epochs_done}" in log
    assert not stale_temporaries(killed) and not (killed / "checkpoint").exists()
    # the same run, uninterrupted, in this process
    cfg = TrainConfig(epochs=4, lr=1e-3, batch_size=8, max_length=32, seed=3)
    data = file_data("seqcls", train, dev)
    ref = finetune(
        "seqcls",
        data.train,
        data.dev,
        cfg,
        tmp_path / "ref",
        model=str(tiny_model_dir),
        progress=False,
    )
    card = json.loads((killed / "training_card.json").read_text())
    assert [e["epoch"] for e in card["epochs"]] == [1, 2, 3, 4]
    for ours, theirs in zip(card["epochs"], ref.card["epochs"], strict=True):
        assert ours["train_loss"] == pytest.approx(theirs["train_loss"], abs=1e-4)
        assert ours["dev"]["accuracy"] == pytest.approx(theirs["dev"]["accuracy"], abs=1e-6)
    a = load_file(str(killed / "model.safetensors"))
    b = load_file(str(tmp_path / "ref" / "model.safetensors"))
    for key in a:
        torch.testing.assert_close(a[key], b[key], atol=1e-4, rtol=1e-4)


@pytest.mark.parametrize("number", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
def test_ctrl_c_while_training_saves_the_step_and_resume_goes_on(tiny_model_dir, tmp_path, number):
    """Ctrl-C (or SIGTERM) while the steps run: the command stops at the next step, writes that
    step's checkpoint, says how to go on and exits 130; ``--resume`` goes on from that step."""
    train = _write_csv(tmp_path / "train.csv", _sentiment(1000, 0))
    dev = _write_csv(tmp_path / "dev.csv", _sentiment(40, 1))
    out = tmp_path / "stopped"
    args = ["seqcls", "--train", str(train), "--dev", str(dev), "--out", str(out),
            "--epochs", "20", "--batch-size", "8", "--max-length", "32",
            "--model", str(tiny_model_dir)]  # fmt: skip
    proc = subprocess.Popen(
        [sys.executable, "-m", "workbench", "finetune", *args],
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),  # not a background job
    )
    assert proc.stdout is not None
    seen, deadline = b"", time.monotonic() + 240
    while b"epoch 1/20" not in seen:  # the progress bar: the steps run
        chunk = os.read(proc.stdout.fileno(), 4096)
        assert chunk and time.monotonic() < deadline, seen.decode(errors="replace")[-2000:]
        seen += chunk
    proc.send_signal(number)
    rest, _ = proc.communicate(timeout=240)
    log = (seen + rest).decode(errors="replace")
    assert proc.returncode == 130, log[-3000:]
    assert "stopping at the next optimizer step to save a checkpoint" in log
    assert "workbench: interrupted" in log and "Traceback" not in log
    saved = ckpt.load_tree(out / "checkpoint" / ckpt.LAST)["state"]
    step = saved["step"]
    assert 0 < step < 2500 and f"stopped by request after {step} of 2500 planned" in log
    assert not (out / "training_card.json").exists()
    resumed = subprocess.run(
        [sys.executable, "-m", "workbench", "finetune", *args, "--resume", "--max-steps",
         str(step + 3), "--no-progress"],  # fmt: skip
        capture_output=True, text=True, timeout=240,
    )  # fmt: skip
    assert resumed.returncode == 0, resumed.stderr[-3000:]
    card = read_card(out)
    assert card["epochs"][-1]["steps"] == step + 3  # it went on from the saved step
    assert any(
        f"stopped by max_steps={step + 3} after {step + 3} of 2500" in n for n in card["notes"]
    )


def test_data_parallel_run_under_torchrun(tiny_model_dir, tmp_path):
    """Two CPU processes (gloo) via torchrun: the unchanged command trains data-parallel."""
    train = _write_csv(tmp_path / "train.csv", _sentiment(160, 0))
    dev = _write_csv(tmp_path / "dev.csv", _sentiment(40, 1))
    out = tmp_path / "ddp"
    cmd = [
        sys.executable,
        "-m",
        "torch.distributed.run",
        "--nproc_per_node",
        "2",
        "-m",
        "workbench",
        "finetune",
        "seqcls",
        "--train",
        str(train),
        "--dev",
        str(dev),
        "--out",
        str(out),
        "--model",
        str(tiny_model_dir),
        "--epochs",
        "3",
        "--lr",
        "3e-3",
        "--head-pooling",
        "mean",
        "--batch-size",
        "8",
        "--max-length",
        "32",
        "--no-progress",
    ]
    done = subprocess.run(
        cmd, capture_output=True, text=True, timeout=300, env={**os.environ, "OMP_NUM_THREADS": "1"}
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    card = json.loads((out / "training_card.json").read_text())
    assert card["num_processes"] == 2
    assert card["best_metric"] > 0.8
    assert any("pooler" in n and "no gradient" in n for n in card["notes"])
    assert done.stdout.count("model directory:") == 1  # only the main process reports


def test_early_stopping_and_gradient_accumulation(tiny_model_dir, tmp_path):
    train = in_memory(_sentiment(48, 0), "train")
    dev = in_memory(_sentiment(20, 1), "dev")
    # a learning rate too small to change any prediction: the dev accuracy never improves
    cfg = TrainConfig(
        epochs=6,
        lr=1e-9,
        batch_size=8,
        grad_accum=2,
        max_length=32,
        early_stopping=2,
        task=SequenceOptions(head_dropout=0.0),
    )
    result = finetune(
        "seqcls", train, dev, cfg, tmp_path / "es", model=str(tiny_model_dir), progress=False
    )
    assert [r.epoch for r in result.history] == [1, 2, 3]  # 2 epochs without improvement
    assert result.best_epoch == 1
    # 48 examples / batch 8 = 6 forward passes per epoch = 3 optimizer steps with accum 2
    assert [r.steps for r in result.history] == [3, 6, 9]


def test_max_minutes_ends_the_epoch_at_the_next_step_and_a_resume_goes_on_from_there(
    tiny_model_dir, tmp_path
):
    train = in_memory(_sentiment(48, 0), "train")
    dev = in_memory(_sentiment(20, 1), "dev")
    # a limit already past when training starts: one optimizer step, then the epoch ends
    cfg = TrainConfig(epochs=3, **{**FAST, "batch_size": 8}, max_minutes=1e-9, task=MEAN)
    out = tmp_path / "timed"
    result = finetune(
        "seqcls", train, dev, cfg, out, model=str(tiny_model_dir), progress=False,
        keep_checkpoint=True,
    )  # fmt: skip
    assert [(r.epoch, r.steps, r.cut) for r in result.history] == [(1, 1, 1)]  # 6 planned
    assert set(result.history[0].dev) >= {"accuracy"}  # the cut epoch is evaluated ...
    assert result.best_epoch == 0 and result.best is None  # ... but does not compete
    card = read_card(out)
    assert card["best_epoch"] == 0
    assert any("stopped by max_minutes=1e-09 after 1 of 18 planned" in n for n in card["notes"])
    assert card["options"]["max_minutes"] == 1e-9
    Encoder(out, device="cpu")  # a finished model directory
    # a checkpoint written when a cut part competed: its best (an accuracy no whole epoch can
    # beat) is set aside on resuming, or the cut part's weights would be the run's model
    last = out / "checkpoint" / ckpt.LAST
    saved = ckpt.load_tree(last)
    saved["state"].update(best=2.0, best_epoch=1)
    ckpt.save_tree(saved, last)
    # the limit is not part of the run's identity: resuming without one trains the rest
    more = finetune(
        "seqcls", train, dev, cfg.replace(max_minutes=0.0), out, model=str(tiny_model_dir),
        progress=False, resume=True,
    )  # fmt: skip
    # the cut epoch goes on from its second batch, then the other two
    assert [(r.epoch, r.steps) for r in more.history] == [(1, 1), (1, 6), (2, 12), (3, 18)]
    assert [r.cut for r in more.history] == [1, 0, 0, 0]
    whole = {r.epoch: r.dev["accuracy"] for r in more.history[1:]}
    assert more.best == max(whole.values()) and whole[more.best_epoch] == more.best
    assert not any("max_minutes" in n for n in read_card(out)["notes"])


def test_a_stop_request_checkpoints_the_step_it_came_at_and_a_resume_goes_on(
    tiny_model_dir, tmp_path
):
    """A request to stop (Ctrl-C on the command line) ends the run at the next optimizer step:
    that step's checkpoint, no dev scoring of the cut part, no model, KeyboardInterrupt; the
    same call with ``resume`` trains the rest. Asking outside the steps is refused."""
    train = in_memory(_sentiment(48, 0), "train")
    dev = in_memory(_sentiment(20, 1), "dev")
    cfg = TrainConfig(epochs=3, **{**FAST, "batch_size": 8}, task=MEAN)  # 6 steps an epoch
    out, request = tmp_path / "asked", StopRequest()
    assert not request.ask()  # no step running: the caller must stop some other way

    def ask_at_batch_2(event: dict) -> None:
        if event["event"] == "step" and event["epoch"] == 2 and event["batch"] == 2:
            assert request.ask() and not request.ask()  # taken once; a second is refused

    with pytest.raises(KeyboardInterrupt):
        finetune(
            "seqcls", train, dev, cfg, out, model=str(tiny_model_dir), progress=False,
            callback=ask_at_batch_2, stop=request,
        )  # fmt: skip
    assert not request.ask()  # the steps are over
    assert not (out / "training_card.json").exists()
    saved = ckpt.load_tree(out / "checkpoint" / ckpt.LAST)["state"]
    assert (saved["epoch"], saved["batch"], saved["step"]) == (1, 3, 9)  # epoch 2 cut at step 9
    assert [(h["epoch"], h["cut"], h["dev"]) for h in saved["history"]][1] == (2, 3, {})
    more = finetune(
        "seqcls", train, dev, cfg, out, model=str(tiny_model_dir), progress=False, resume=True
    )
    assert [(r.epoch, r.steps, r.cut) for r in more.history] == [
        (1, 6, 0), (2, 9, 3), (2, 12, 0), (3, 18, 0)
    ]  # fmt: skip
    assert more.stopped is None and read_card(out)["best_epoch"] in (1, 2, 3)


def test_max_steps_cuts_the_run_at_that_step_with_the_full_schedule(tiny_model_dir, tmp_path):
    train = in_memory(_sentiment(48, 0), "train")
    dev = in_memory(_sentiment(20, 1), "dev")
    cfg = TrainConfig(epochs=3, **{**FAST, "batch_size": 8}, max_steps=8, task=MEAN)  # 6 an epoch
    out = tmp_path / "stepped"
    result = finetune(
        "seqcls", train, dev, cfg, out, model=str(tiny_model_dir), progress=False,
        keep_checkpoint=True,
    )  # fmt: skip
    assert [(r.epoch, r.steps) for r in result.history] == [(1, 6), (2, 8)]
    card = read_card(out)
    assert any("stopped by max_steps=8 after 8 of 18 planned" in n for n in card["notes"])
    # the same steps as an uncut run's first 8: the schedule is the full run's, not 8 steps'
    full = finetune(
        "seqcls", train, dev, cfg.replace(max_steps=0), tmp_path / "full",
        model=str(tiny_model_dir), progress=False,
    )  # fmt: skip
    assert result.history[0].train_loss == full.history[0].train_loss
    assert not any("max_steps" in n for n in read_card(tmp_path / "full")["notes"])
    # a limit at the schedule's end is no cut; a bad one is refused before any work
    ends = finetune(
        "seqcls", train, dev, cfg.replace(max_steps=18), tmp_path / "ends",
        model=str(tiny_model_dir), progress=False,
    )  # fmt: skip
    assert [r.steps for r in ends.history] == [6, 12, 18]
    assert not any("max_steps" in n for n in read_card(tmp_path / "ends")["notes"])
    with pytest.raises(InputError, match="max_steps must be an integer >= 0"):
        cfg.replace(max_steps=-1)


def test_a_half_precision_checkpoint_trains_in_float32(tiny_model_dir, tmp_path):
    """Checkpoints stored in float16 load in that dtype by default (transformers >= 5): the
    trainer asks for float32, so AdamW's small updates are not rounded away."""
    from safetensors.torch import load_file
    from transformers import AutoModel

    half = tmp_path / "half"
    AutoModel.from_pretrained(tiny_model_dir).half().save_pretrained(half)
    for p in tiny_model_dir.iterdir():
        if p.name not in ("config.json", "model.safetensors"):
            (half / p.name).write_bytes(p.read_bytes())
    assert {v.dtype for v in load_file(half / "model.safetensors").values()} == {torch.float16}
    train = in_memory(_sentiment(32, 0), "train")
    cfg = TrainConfig(epochs=1, **{**FAST, "lr": 1e-4}, task=MEAN)
    out = tmp_path / "tuned"
    finetune("seqcls", train, None, cfg, out, model=str(half), progress=False)
    tuned, base = load_file(out / "model.safetensors"), load_file(half / "model.safetensors")
    assert {v.dtype for v in tuned.values()} == {torch.float32}
    key = "encoder.layer.1.attention.self.query.weight"
    assert 0 < (tuned[key] - base[key].float()).abs().max() < 1e-2  # it trained, from there
