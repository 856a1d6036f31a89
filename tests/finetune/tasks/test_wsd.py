"""The WSD bi-encoder task on a tiny random BERT and a few dozen SemCor sentences: candidates are
WordNet's, multi-gold targets, one context pass per sentence, the loss falls, resume after
SIGKILL, the model directory answering as a bi-encoder, ``workbench wsd eval`` on it, bad input."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
from collections import Counter
from pathlib import Path
from xml.sax.saxutils import escape, quoteattr

import numpy as np
import pytest
import torch
from scipy.optimize import curve_fit

from tests.finetune.tasks.tiny_wsd import TINY_WSD
from workbench.cli.main import main
from workbench.corpora.datasets import load_dataset
from workbench.corpora.readers import Instance, Sentence
from workbench.encoding import models
from workbench.encoding.encoder import Encoder
from workbench.errors import DataError, InputError
from workbench.finetune.data.readers import DataFile
from workbench.finetune.tasks.registry import finetune, load_finetuned, make_task
from workbench.finetune.tasks.wsd.glosses import GlossTable
from workbench.finetune.tasks.wsd.model import (
    CPU_GLOSS_BATCH_TOKENS,
    GPU_GLOSS_BATCH_TOKENS,
    BiEncoderModel,
)
from workbench.finetune.tasks.wsd.options import WsdOptions
from workbench.finetune.tasks.wsd.task import z_weights
from workbench.finetune.training import checkpoint as ckpt
from workbench.lexicon.wordnet import load_wordnet
from workbench.wsd.biencoder import BiEncoder, read_sense_counts
from workbench.wsd.config import SenseIndexConfig
from workbench.wsd.disambiguate import disambiguate
from workbench.wsd.evaluate import load_corpus
from workbench.wsd.index import SenseIndex
from workbench.wsd.opened import OpenedSystem
from workbench.wsd.predict import build_index, encode_instances
from workbench.wsd.sources import gloss_vectors

CFG = TINY_WSD.replace(epochs=3)


TRAINED_ON = "semcor[:40], as a bi-encoder with definition glosses"  # the index's training


def write_xml(sentences, path: Path, gold: bool = True, drop: tuple[str, ...] = ()) -> Path:
    """Sentences as a framework ``*.data.xml`` and, with ``gold``, its ``*.gold.key.txt``
    (without the instances in ``drop``)."""
    lines = ['<?xml version="1.0" encoding="UTF-8" ?>', '<corpus lang="en" source="test">']
    keys = []
    lines.append('<text id="t.d000">')
    for s in sentences:
        lines.append(f"<sentence id={quoteattr(s.id)}>")
        at = {i.index: i for i in s.instances}
        for k, (word, lemma, pos) in enumerate(zip(s.words, s.lemmas, s.pos, strict=True)):
            inst = at.get(k)
            if inst is None:
                lines.append(
                    f"<wf lemma={quoteattr(lemma)} pos={quoteattr(pos)}>{escape(word)}</wf>"
                )
                continue
            lines.append(
                f"<instance id={quoteattr(inst.id)} lemma={quoteattr(inst.lemma)} "
                f"pos={quoteattr(inst.pos)}>{escape(word)}</instance>"
            )
            if inst.id not in drop:
                keys.append(f"{inst.id} {' '.join(inst.keys)}")
        lines.append("</sentence>")
    lines += ["</text>", "</corpus>"]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    if gold:
        key_file = path.with_name(path.name.replace(".data.xml", ".gold.key.txt"))
        key_file.write_text("\n".join(keys) + "\n", encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def semcor(wsd_data):
    """The first 40 SemCor sentences with instances, and the next 12 (dev)."""
    sentences = [s for s in load_dataset("semcor", wsd_data).sentences[:80] if s.instances]
    return sentences[:40], sentences[40:52]


@pytest.fixture(scope="module")
def task(tiny_model_dir, semcor):
    source = models.resolve_model(str(tiny_model_dir))
    train = DataFile(tuple(semcor[0]), "semcor[:40]", "x")
    return make_task("wsd", CFG, models.load_tokenizer(source), train)


@pytest.fixture(scope="module")
def trained(tiny_model_dir, semcor, tmp_path_factory):
    """A bi-encoder trained on 40 SemCor sentences, dev and test the next 12."""
    out = tmp_path_factory.mktemp("wsd") / "model"
    train = DataFile(tuple(semcor[0]), "semcor[:40]", "a")
    dev = DataFile(tuple(semcor[1]), "semcor[40:52]", "b")
    result = finetune(
        "wsd", train, dev, CFG, out, model=str(tiny_model_dir), progress=False, test=dev
    )
    return out, result


def test_candidates_are_exactly_wordnets_and_gold_marks_the_gold_keys(task, semcor):
    wordnet = load_wordnet()
    train = DataFile(tuple(semcor[0]), "semcor[:40]", "x")
    insts = {i.id: i for s in semcor[0] for i in s.instances}
    for split in (True, False):
        feats = task.features(train, train=split)
        seen = set()
        for row in feats.rows:
            for inst_id, cands, gold in zip(row["ids"], row["cands"], row["gold"], strict=True):
                inst = insts[inst_id]
                keys = wordnet.candidates(inst.lemma, inst.pos)
                assert [task.glosses.synsets[r] for r in cands] == [wordnet.synset(k) for k in keys]
                assert sorted(keys[j] for j in gold) == sorted(inst.keys)
                seen.add(inst_id)
        single = {
            i for i, inst in insts.items() if len(wordnet.candidates(inst.lemma, inst.pos)) < 2
        }
        # training leaves out the instances with one candidate; evaluation scores all of them
        assert seen == (set(insts) - single if split else set(insts))
        assert single and len(seen) > 100


def test_z_weights_follow_the_reference_codes_groups_fit_and_rounding():
    # 12 pairs, groups of 2 by frequency: polysemy falling with rank as a log
    pairs = [(f"w{i:02d}", "NOUN") for i in range(12) for _ in range(12 - i)]
    group_polysemy = [20, 14, 11, 9, 7, 6]
    poly = [group_polysemy[int(p[0][1:]) // 2] for p in pairs]
    weights = z_weights(pairs, poly, 1.0, group=2)
    by_pair = dict(zip(pairs, weights.tolist()))
    x = np.arange(6.0)
    means = np.array(group_polysemy, float)
    a, b, c = curve_fit(lambda x, a, b, c: a * np.log(x + c) + b, x, means, p0=(-1.0, 20.0, 1.0),
                        bounds=((-np.inf, -np.inf, 1e-6), np.inf), maxfev=10_000)[0]  # fmt: skip
    fit = a * np.log(x + c) + b
    expected = np.maximum(np.round(np.round(fit / fit.max(), 1) + 1e-4, 1), 0.1)
    for i in range(12):
        assert by_pair[(f"w{i:02d}", "NOUN")] == pytest.approx(expected[i // 2], abs=1e-6)
    assert by_pair[("w00", "NOUN")] == 1.0 and by_pair[("w11", "NOUN")] < 0.6  # rare: less
    squared = dict(zip(pairs, z_weights(pairs, poly, 2.0, group=2).tolist()))
    assert squared[("w11", "NOUN")] == pytest.approx(
        max(round(round(float(fit[5] / fit.max()), 1) ** 2 + 1e-4, 1), 0.1), abs=1e-6
    )
    assert (z_weights(pairs, poly, 0.0) == 1).all()
    one_rich = [100 if p == ("w00", "NOUN") else 1 for p in pairs]
    assert min(z_weights(pairs, one_rich, 3.0, group=1)) == pytest.approx(0.1)  # the floor


def test_lemma_reweighting_weighs_each_training_instance_and_the_loss(tiny_model_dir, semcor):
    cfg = CFG.with_task(lemma_reweight=2.0)
    source = models.resolve_model(str(tiny_model_dir))
    train = DataFile(tuple(semcor[0]), "semcor[:40]", "x")
    task = make_task("wsd", cfg, models.load_tokenizer(source), train)
    feats = task.features(train, train=True)
    insts = {i.id: i for s in semcor[0] for i in s.instances}
    pairs = [(insts[i].lemma.lower(), insts[i].pos) for r in feats.rows for i in r["ids"]]
    poly = [len(c) for r in feats.rows for c in r["cands"]]
    weights = np.array([w for r in feats.rows for w in r["weights"]])
    assert weights == pytest.approx(z_weights(pairs, poly, 2.0), rel=1e-6)
    assert any("Z-reweighted" in n for n in feats.notes)
    assert all("weights" not in r for r in task.features(train, train=False).rows)
    # the loss is the mean of each instance's loss times its weight
    batch = task.collate(feats.rows[:6], torch.Generator())
    assert torch.equal(batch["weights"], torch.tensor(weights[: len(batch["weights"])]))
    batch["weights"] = torch.linspace(0.1, 1.0, len(batch["weights"]))  # weights that differ
    w = batch["weights"].clone()
    model, _ = task.build_model(source)
    model.eval()
    with torch.no_grad():
        weighted, scores = model(**batch)
        batch.pop("weights")
        plain, _ = model(**batch)
    pad = batch["gold"] <= 0
    each = scores.logsumexp(1) - scores.masked_fill(pad, float("-inf")).logsumexp(1)
    assert float(weighted) == pytest.approx(float((each * w).mean()), rel=1e-5)
    assert float(plain) == pytest.approx(float(each.mean()), rel=1e-5)
    assert float(weighted) != pytest.approx(float(plain), rel=1e-3)
    with pytest.raises(InputError, match="lemma_reweight"):
        WsdOptions(lemma_reweight=-1.0)


def _multi_gold_sentence() -> Sentence:
    words = ("He", "sat", "on", "the", "bank", "of", "the", "river", ".")
    wordnet = load_wordnet()
    bank = wordnet.candidates("bank", "NOUN")
    sit = wordnet.candidates("sit", "VERB")
    return Sentence(
        "m.s0",
        words,
        ("he", "sit", "on", "the", "bank", "of", "the", "river", "."),
        ("PRON", "VERB", "ADP", "DET", "NOUN", "ADP", "DET", "NOUN", "."),
        (
            Instance("m.s0.t0", 1, "sit", "VERB", (sit[0],)),
            Instance("m.s0.t1", 4, "bank", "NOUN", (bank[0], bank[2])),  # two gold keys
            Instance("m.s0.t2", 7, "river", "NOUN", (wordnet.candidates("river", "NOUN")[0],)),
        ),
    )


def test_multi_gold_target_is_the_gold_set_and_one_context_pass_serves_a_sentence(
    task, tiny_model_dir
):
    sentence = _multi_gold_sentence()
    data = DataFile((sentence,), "multi", "m")
    feats = task.features(data, train=True)
    assert len(feats.rows) == 1  # one sentence, one row, all its polysemous instances
    batch = task.collate(feats.rows, torch.Generator().manual_seed(0))
    bank = feats.rows[0]["ids"].index("m.s0.t1")
    assert batch["gold"][bank].tolist()[:3] == [1, 0, 1]
    assert batch["gold"].sum(1).tolist() == [len(i) for i in feats.rows[0]["gold"]]
    model, _ = task.build_model(models.resolve_model(str(tiny_model_dir)))
    calls = {"context": 0, "gloss": 0}
    model.encoder.register_forward_hook(
        lambda *a: calls.__setitem__("context", calls["context"] + 1)
    )
    model.gloss_encoder.register_forward_hook(
        lambda *a: calls.__setitem__("gloss", calls["gloss"] + 1)
    )
    loss, scores = model(**{k: v for k, v in batch.items()})
    assert calls["context"] == 1  # three instances, one pass of the context encoder
    n_glosses = batch["gloss_input_ids"].shape[0]
    assert n_glosses == len({g for c in feats.rows[0]["cands"] for g in c})  # the union, once
    assert 1 <= calls["gloss"] <= n_glosses
    # the loss is the mean over instances of -log P(gold set): both gold senses of bank count
    log_p = torch.log_softmax(scores.detach(), dim=1)
    gold = batch["gold"].bool()
    expected = -torch.stack([log_p[i][gold[i]].logsumexp(0) for i in range(len(gold))]).mean()
    torch.testing.assert_close(loss.detach(), expected, rtol=1e-5, atol=1e-5)
    # scoring: either gold sense of bank is right
    grid, rows = task.predict(model, dict(batch))
    chosen = grid.clone()
    chosen[0, bank] = 2  # bank's third sense, the second gold key
    assert task.score((chosen.numpy(), rows.numpy()), feats)["f1"] >= 1 / 3


def test_loss_falls_and_the_model_directory_answers_as_a_bi_encoder(trained, semcor):
    out, result = trained
    losses = [e.train_loss for e in result.history]
    assert losses[-1] < losses[0] * 0.8, losses
    card = result.card
    assert card["task"] == "wsd" and card["metric"] == "f1"
    speed = card["throughput"]
    assert speed["steps_per_s"] > 0 and speed["tokens_per_s"] > speed["gloss_tokens_per_s"] > 0
    assert all(e["stats"]["instances"] > 0 and e["eval_seconds"] > 0 for e in card["epochs"])
    # the saved directory answers as a bi-encoder: an index of exactly the candidates asked for
    bi = BiEncoder(out, device="cpu")
    wordnet = load_wordnet()
    pairs = sorted({(i.lemma, i.pos) for s in semcor[1] for i in s.instances})
    index = bi.index(pairs, wordnet)
    assert isinstance(index, SenseIndex) and index.config.layers == "-1"
    for lemma, pos in pairs:
        start, stop = index.candidate_rows(lemma, pos)
        assert set(index.keys_[start:stop]) == set(wordnet.candidates(lemma, pos))
    # its rows are what the trained gloss encoder gives (the training-time tokenizing and
    # pooling), and how often each sense was seen in training
    model, tokenizer, head = load_finetuned(out)
    assert isinstance(model, BiEncoderModel) and head["task"] == "wsd"
    table = GlossTable(tokenizer, wordnet, head["gloss_text"], head["gloss_max_length"])
    synsets = sorted({wordnet.synset(k) for k in index.keys_})[:40]
    rows = table.by_length(table.rows_of(synsets))
    ids, mask = table.batch(rows, tokenizer.pad_token_id)
    with torch.no_grad():
        trained_vectors = model.encode_glosses(torch.from_numpy(ids), torch.from_numpy(mask))
    answered = bi.gloss_vectors([table.synsets[r] for r in rows], wordnet)
    np.testing.assert_allclose(answered, trained_vectors.numpy(), atol=1e-5)
    counts = Counter(k for s in semcor[0] for i in s.instances for k in i.keys)
    assert read_sense_counts(out) == dict(counts)
    assert all(index.count_of(k) == counts.get(k, 0) for k in index.keys_)
    # every row is a gloss vector, the system itself: no "weaker than a centroid" warning
    sentence = next(s for s in semcor[1] if s.instances)
    answer = disambiguate(
        OpenedSystem.of_biencoder(bi).with_pos_probe(None), list(sentence.words),
        sentence.instances[0].index, wordnet=wordnet,
    )  # fmt: skip
    assert not index.has_centroids and answer.best is not None and answer.warning == ""
    assert answer.system == "biencoder" and "in training" in answer.best.evidence
    # the glosses are encoded once: a second load finds them in the gloss cache
    again = BiEncoder(out, device="cpu")
    np.testing.assert_array_equal(again.index(pairs, wordnet).vectors_, index.vectors_)
    assert "gloss_encoder" not in vars(again)  # never loaded: no gloss was encoded
    # the answers through the saved directory are the training-time scorer's
    assert card["test"]["f1"] == pytest.approx(card["best_metric"], abs=1e-9)
    evaluation = card["wsd_eval"]
    assert evaluation["datasets"]["semcor[40:52]"]["f1"] == card["test"]["f1"]
    assert 0 < evaluation["zero_shot"]["n"] < evaluation["datasets"]["semcor[40:52]"]["n"]
    texts = {wordnet.gloss(wordnet.synset(k)) for k in index.keys_}  # some synsets share a gloss
    assert card["glosses"]["cached"] >= len(texts)


def test_frozen_glosses_train_the_context_encoder_alone_and_encode_each_gloss_once(
    tiny_model_dir, semcor, tmp_path
):
    cfg = CFG.with_task(freeze_glosses=True)
    source = models.resolve_model(str(tiny_model_dir))
    train = DataFile(tuple(semcor[0]), "semcor[:40]", "a")
    dev = DataFile(tuple(semcor[1]), "semcor[40:52]", "b")
    # the cached vectors are what the gloss encoder gives: one batch, twice
    task = make_task("wsd", cfg, models.load_tokenizer(source), train)
    feats = task.features(train, train=True)
    batch = task.collate(feats.rows[:4], torch.Generator().manual_seed(0))
    model, notes = task.build_model(source)
    assert "gloss encoder is frozen" in notes[0]
    model.train()
    assert model.encoder.training and not model.gloss_encoder.training  # no gloss dropout
    ids, mask = batch["gloss_input_ids"], batch["gloss_attention_mask"]
    calls = []
    model.gloss_encoder.register_forward_hook(lambda *a: calls.append(1))
    first = model.frozen_glosses(batch["gloss_rows"], ids, mask)
    n_calls = len(calls)
    again = model.frozen_glosses(batch["gloss_rows"], ids, mask)
    assert len(calls) == n_calls > 0  # the second time nothing is encoded
    with torch.no_grad():
        torch.testing.assert_close(first, model.encode_glosses(ids, mask), atol=1e-5, rtol=1e-5)
    torch.testing.assert_close(first, again, atol=0, rtol=0)
    loss, _ = model(
        **{k: v for k, v in batch.items() if k not in ("inst_row", "inst_col", "row_ids")}
    )
    loss.backward()
    assert all(p.grad is None for p in model.gloss_encoder.parameters())
    assert any(p.grad is not None for p in model.encoder.parameters())
    # a whole run: the loss falls, only the context encoder trains, glosses encoded once
    out = tmp_path / "frozen"
    result = finetune("wsd", train, dev, cfg, out, model=str(tiny_model_dir), progress=False,
                      test=dev)  # fmt: skip
    losses = [e.train_loss for e in result.history]
    assert losses[-1] < losses[0] * 0.8, losses
    card = result.card
    assert card["options"]["freeze_glosses"] is True
    base, _, _ = load_finetuned(out)
    assert card["parameters"]["trainable"] <= sum(p.numel() for p in base.encoder.parameters())
    stats = [e["stats"] for e in card["epochs"]]
    assert stats[0]["gloss_tokens"] > 0 and all(s["gloss_tokens"] == 0 for s in stats[1:])
    saved = base.gloss_encoder.state_dict()
    start = models.load_model(source).state_dict()
    for name, weight in start.items():  # the saved gloss encoder is the base model
        if name in saved:
            torch.testing.assert_close(saved[name], weight, atol=0, rtol=0)
    assert card["test"]["f1"] == pytest.approx(card["best_metric"], abs=1e-9)


def test_gloss_chunks_by_device_give_the_same_vectors_in_fewer_passes(tiny_model_dir, semcor):
    source = models.resolve_model(str(tiny_model_dir))
    train = DataFile(tuple(semcor[0]), "semcor[:40]", "a")
    task = make_task("wsd", CFG, models.load_tokenizer(source), train)
    batch = task.collate(task.features(train, train=True).rows[:8])
    ids, mask = batch["gloss_input_ids"], batch["gloss_attention_mask"]
    model, _ = task.build_model(source)
    model.eval()
    assert model.gloss_batch_tokens == 0  # auto: by the device the glosses are on
    assert model.gloss_chunk_tokens(torch.device("cpu")) == CPU_GLOSS_BATCH_TOKENS == 1024
    assert model.gloss_chunk_tokens(torch.device("cuda")) == GPU_GLOSS_BATCH_TOKENS
    calls: list[int] = []
    model.gloss_encoder.register_forward_hook(lambda *a: calls.append(1))
    with torch.no_grad():
        small = model.encode_glosses(ids, mask)  # the CPU's 1,024-token chunks
        n_small = len(calls)
        model.gloss_batch_tokens = GPU_GLOSS_BATCH_TOKENS  # what a GPU runs
        large = model.encode_glosses(ids, mask)
    assert int(mask.numel()) > 2 * CPU_GLOSS_BATCH_TOKENS and n_small > 2
    assert len(calls) - n_small == 1  # the whole union in one pass
    torch.testing.assert_close(small, large, atol=1e-5, rtol=1e-5)
    with pytest.raises(InputError, match="gloss_batch_tokens must be an integer >= 0"):
        CFG.with_task(gloss_batch_tokens=-1)


def test_a_trained_bi_encoder_as_the_model_continues_both_of_its_encoders(
    trained, semcor, tmp_path, capsys
):
    out, _ = trained
    saved, _, _ = load_finetuned(out)
    source = models.resolve_model(str(out))
    train = DataFile(tuple(semcor[0]), "semcor[:40]", "a")
    task = make_task("wsd", CFG, models.load_tokenizer(source), train)
    model, notes = task.build_model(source)
    assert "training continues from the WSD bi-encoder" in notes[0]
    for built, kept in ((model.encoder, saved.encoder), (model.gloss_encoder, saved.gloss_encoder)):
        for name, weight in kept.state_dict().items():
            torch.testing.assert_close(built.state_dict()[name], weight, atol=0, rtol=0)
    # the two trained encoders differ, so the gloss encoder really is the saved one
    assert any(
        not torch.equal(w, saved.encoder.state_dict()[n])
        for n, w in saved.gloss_encoder.state_dict().items()
    )
    # another head pooling would change what the trained gloss vectors mean: refused
    cls = CFG.with_task(head_pooling="cls")
    with pytest.raises(InputError, match="trained with head pooling 'mean'"):
        make_task("wsd", cls, models.load_tokenizer(source), train).build_model(source)
    # ... on the command line before the data is read (this --train does not exist), exit 2
    refused = tmp_path / "refused"
    args = ["finetune", "wsd", "--train", str(tmp_path / "absent.data.xml"), "--model", str(out),
            "--head-pooling", "cls", "--out", str(refused)]  # fmt: skip
    assert main(args) == 2
    assert "trained with head pooling 'mean'" in capsys.readouterr().err
    assert not refused.exists()
    # a damaged head.json is one line naming it, not a traceback
    broken = tmp_path / "broken"
    shutil.copytree(out, broken)
    (broken / "head.json").write_text('{"task": "wsd", ')
    args[args.index(str(out))] = str(broken)
    assert main(args) == 2
    assert "head.json cannot be read as JSON" in capsys.readouterr().err
    # one more epoch with frozen glosses on 10 of the sentences: the saved gloss encoder is the
    # one it started from, and the new index and zero-shot view count both trainings
    dev = DataFile(tuple(semcor[1]), "semcor[40:52]", "b")
    part = DataFile(tuple(semcor[0][:10]), "semcor[:10]", "c")
    more = tmp_path / "more"
    result = finetune("wsd", part, dev, CFG.replace(epochs=1).with_task(freeze_glosses=True), more,
                      model=str(out), progress=False, test=dev)  # fmt: skip
    assert result.card["base_location"] == str(out.resolve())
    again, _, _ = load_finetuned(more)
    for name, weight in saved.gloss_encoder.state_dict().items():
        torch.testing.assert_close(again.gloss_encoder.state_dict()[name], weight, atol=0, rtol=0)
    before, after = read_sense_counts(out), read_sense_counts(more)
    assert (
        BiEncoder(more, device="cpu").training.corpus
        == "semcor[:40] then semcor[:10], as a bi-encoder with definition glosses"
    )
    in_part = Counter(k for s in semcor[0][:10] for i in s.instances for k in i.keys)
    assert in_part and all(after[k] == before.get(k, 0) + in_part[k] for k in after)
    assert set(after) == set(before) | set(in_part)
    seen_40 = {k for s in semcor[0] for i in s.instances for k in i.keys}
    unseen = [i for s in semcor[1] for i in s.instances if not set(i.keys) & seen_40]
    unseen_10 = [i for s in semcor[1] for i in s.instances if not set(i.keys) & set(in_part)]
    assert len(unseen_10) > len(unseen)  # so counting only this run's data would show
    assert result.card["wsd_eval"]["zero_shot"]["n"] == len(unseen)
    assert result.card["wsd_eval"]["earlier_training"] == "semcor[:40]"


def test_wsd_eval_and_disambiguate_run_on_the_trained_model(trained, semcor, tmp_path, capsys):
    out, result = trained
    data = write_xml(semcor[1], tmp_path / "dev.data.xml")
    report = tmp_path / "report.json"
    code = main(
        ["wsd", "eval", "--model", str(out), "--data", str(data), "--no-baselines",
         "--device", "cpu", "--json", str(report)]
    )  # fmt: skip
    printed = capsys.readouterr().out
    assert code == 0, printed
    assert TRAINED_ON in printed  # the model's own index answered
    f1 = json.loads(report.read_text())["data"]["datasets"]["dev"]["system"]["F1"]
    assert f1 == pytest.approx(100 * result.card["test"]["f1"], abs=0.05)
    code = main(["wsd", "disambiguate", "The bank raised its rates .", "--word", "bank",
                 "--model", str(out), "--device", "cpu"])  # fmt: skip
    assert code == 0 and TRAINED_ON in capsys.readouterr().out


def test_the_trained_gloss_vectors_join_centroids_built_here(trained, semcor, tmp_path, capsys):
    """``--gloss-pooling trained``: the tuned context encoder's centroids beside the vectors its
    own gloss encoder gives the senses (the bench's "centroids tuned + glosses" system)."""
    out, _ = trained
    enc = Encoder(model=str(out), device="cpu")
    bi = BiEncoder(out, device="cpu")
    wordnet = load_wordnet()
    present = wordnet.candidates("bank", "NOUN")[1]
    keys, vectors = gloss_vectors(enc, wordnet, "-1", [present], pooling="trained")
    assert keys == (present,)
    np.testing.assert_array_equal(vectors[0], bi.gloss_vectors([wordnet.synset(present)])[0])
    config = SenseIndexConfig(layers="-1", gloss="concat", gloss_weight=0.5,
                              gloss_pooling="trained")  # fmt: skip
    train = write_xml(semcor[0], tmp_path / "train.data.xml")
    training = encode_instances(enc, load_corpus(str(train)), cache=False)
    index = build_index(enc, training, config)
    dim = enc.dim
    seen = sorted({k for keys in training.keys for k in keys})
    assert seen
    for key in seen[:10]:  # the right half of a row is the trained gloss vector at weight 0.5
        row = index.vectors_[index.keys_.index(key)]
        gloss = bi.gloss_vectors([wordnet.synset(key)])[0]
        np.testing.assert_allclose(row[dim:], np.sqrt(0.5) * gloss / np.linalg.norm(gloss),
                                   atol=1e-5)  # fmt: skip
    # the command line: index options with a centroid system build the index from the model
    data = write_xml(semcor[1], tmp_path / "dev.data.xml")
    report = tmp_path / "report.json"
    code = main(
        ["wsd", "eval", "--model", str(out), "--data", str(data), "--train", str(train),
         "--system", "plain", "--gloss", "concat", "--gloss-pooling", "trained",
         "--gloss-weight", "0.5", "--no-baselines", "--device", "cpu", "--json", str(report)]
    )  # fmt: skip
    captured = capsys.readouterr()
    assert code == 0, captured.err
    assert TRAINED_ON not in captured.out  # not the bi-encoder's own answers
    facts = json.loads(report.read_text())
    assert "+gloss(trained,0.5)" in json.dumps(facts)  # the settings, in the configuration
    assert "--system plain" in facts["command"]
    # ... and for the bi-encoder (the default system), which has no such settings, refused
    code = main(["wsd", "eval", "--model", str(out), "--data", str(data), "--gloss-weight",
                 "0.5", "--device", "cpu"])  # fmt: skip
    err = capsys.readouterr().err
    assert code == 2 and "add --system best" in err
    # `wsd train` keeps such an index in the cache dir under a name that names the gloss encoder
    train_args = [
        "wsd",
        "train",
        "--model",
        str(out),
        "--corpus",
        str(train),
        "--system",
        "plain",
        "--gloss",
        "concat",
        "--gloss-pooling",
        "trained",
        "--device",
        "cpu",
    ]
    assert main(train_args) == 0
    printed = capsys.readouterr().out
    path = next(line for line in printed.splitlines() if line.startswith("index: "))
    assert bi.gloss_fingerprint in path


def test_trained_gloss_vectors_need_a_trained_bi_encoder(tiny_model_dir, semcor, tmp_path, capsys):
    enc = Encoder(model=str(tiny_model_dir), device="cpu")
    with pytest.raises(InputError, match="is not one: pick another gloss pooling"):
        gloss_vectors(enc, load_wordnet(), "-1", ["bank%1:17:01::"], pooling="trained")
    data = write_xml(semcor[1], tmp_path / "dev.data.xml")
    code = main(
        ["wsd", "eval", "--model", str(tiny_model_dir), "--data", str(data), "--train",
         str(data), "--system", "best", "--gloss", "concat", "--gloss-pooling", "trained",
         "--no-baselines", "--device", "cpu"]
    )  # fmt: skip
    err = capsys.readouterr().err
    assert code == 2 and "is not one: pick another gloss pooling" in err
    assert "Traceback" not in err


def _cli(args: list[str], env: dict) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-m", "workbench", "finetune", "wsd", *args],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )


def test_resume_after_sigkill_matches_uninterrupted_run(tiny_model_dir, semcor, tmp_path):
    from safetensors.torch import load_file

    train = write_xml(semcor[0][:24], tmp_path / "train.data.xml")
    dev = write_xml(semcor[1][:6], tmp_path / "dev.data.xml")
    opts = ["--epochs", "3", "--lr", "1e-3", "--batch-size", "4", "--max-length", "64",
            "--gloss-max-length", "24", "--head-pooling", "mean", "--wsd-index", "data",
            "--seed", "3", "--model", str(tiny_model_dir), "--no-progress",
            "--device", "cpu"]  # fmt: skip
    env = {**os.environ, "PYTHONUNBUFFERED": "1", "OMP_NUM_THREADS": "1"}
    killed = tmp_path / "killed"
    data = ["--train", str(train), "--dev", str(dev), "--out", str(killed)]
    # the uninterrupted run in the same conditions (one thread: the same float reductions; Adam
    # turns a float-noise gradient of a near-zero weight into a full step, so a run with
    # another thread count differs by a few learning rates in such weights), beside the runs
    # below on the other core
    uninterrupted = _cli(["--train", str(train), "--dev", str(dev), "--out",
                          str(tmp_path / "ref"), *opts], env)  # fmt: skip
    # SIGKILL while epoch 2's checkpoint is written: its temporary is complete, not renamed
    proc = _cli([*data, *opts], {**env, "WORKBENCH_KILL_AT": f"atomic:{ckpt.LAST}#2"})
    proc.communicate(timeout=300)
    assert proc.returncode == -signal.SIGKILL, "the run ended before it could be killed"
    epochs_done = ckpt.load_tree(killed / "checkpoint" / ckpt.LAST)["state"]["epoch"]
    assert epochs_done == 1 and not (killed / "training_card.json").exists()
    resumed = _cli([*data, "--resume", *opts], env)
    log, _ = resumed.communicate(timeout=300)
    assert resumed.returncode == 0, log
    assert f"after epoch {epochs_done}" in log
    log, _ = uninterrupted.communicate(timeout=300)
    assert uninterrupted.returncode == 0, log
    ref_card = json.loads((tmp_path / "ref" / "training_card.json").read_text())
    card = json.loads((killed / "training_card.json").read_text())
    assert [e["epoch"] for e in card["epochs"]] == [1, 2, 3]
    for ours, theirs in zip(card["epochs"], ref_card["epochs"], strict=True):
        assert ours["train_loss"] == pytest.approx(theirs["train_loss"], abs=1e-4)
        assert ours["dev"]["f1"] == pytest.approx(theirs["dev"]["f1"], abs=1e-6)
        assert ours["stats"] == theirs["stats"]
    for name in ("model.safetensors", "gloss_encoder/model.safetensors"):
        a, b = load_file(str(killed / name)), load_file(str(tmp_path / "ref" / name))
        for key in a:
            torch.testing.assert_close(a[key], b[key], atol=1e-4, rtol=1e-4)
    assert read_sense_counts(killed) == read_sense_counts(tmp_path / "ref")


def _sentence(sid: str, lemma: str, keys: tuple[str, ...], word: str = "bank") -> Sentence:
    return Sentence(
        sid, ("The", word, "."), ("the", lemma, "."), ("DET", "NOUN", "."),
        (Instance(f"{sid}.t0", 1, lemma, "NOUN", keys),),
    )  # fmt: skip


@pytest.mark.parametrize(
    ("sentence", "message"),
    [
        (_sentence("bad.s0", "bank", ("bank%1:99:99::",)), "'bank%1:99:99::' is not a WordNet"),
        (_sentence("bad.s1", "bank", ("river%1:17:00::",)), "is not one of the 10 WordNet senses"),
        (_sentence("bad.s2", "xyzzyq", ("xyzzyq%1:00:00::",), "xyzzyq"), "no sense of this lemma"),
        (_sentence("bad.s3", "bank", ()), "missing from the gold key file"),
    ],
)
def test_bad_instances_are_refused_naming_the_instance(task, sentence, message):
    data = DataFile((sentence,), "bad.data.xml", "z")
    with pytest.raises(DataError, match=message) as err:
        task.features(data, train=True)
    assert f"instance {sentence.instances[0].id}" in str(err.value)
    with pytest.raises(DataError, match=message):
        task.check(data, data)  # dev and test data are checked before training starts


def test_bad_data_on_the_command_line_exits_2_with_one_line(
    tiny_model_dir, semcor, tmp_path, capsys
):
    train = write_xml(semcor[0][:4], tmp_path / "train.data.xml")
    missing = semcor[1][0].instances[0].id
    dev = write_xml(semcor[1][:2], tmp_path / "dev.data.xml", drop=(missing,))
    out = tmp_path / "out"
    args = ["finetune", "wsd", "--train", str(train), "--dev", str(dev), "--out", str(out),
            "--model", str(tiny_model_dir), "--device", "cpu", "--no-progress"]  # fmt: skip
    assert main(args) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and f"instance {missing}" in err[0] and "gold key file" in err[0]
    assert not out.exists() or not any(out.iterdir())  # refused before any training
    empty = Sentence("e.s0", ("No", "senses", "."), ("no", "sense", "."), ("DET", "NOUN", "."))
    write_xml([empty], tmp_path / "empty.data.xml")
    args[3] = str(tmp_path / "empty.data.xml")
    args[5] = str(train)
    assert main(args) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "no sense-annotated instance" in err[0]
