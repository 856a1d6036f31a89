"""The bi-encoder at work on LoRA adapters: trained on a tiny random BERT and 40 SemCor sentences,
saved in PEFT's format, loaded back with the same scores, checkpoints of adapters only that
resume, adapters continued, and every damaged or foreign file refused or rebuilt, never a wrong
answer (the gloss cache included)."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import warnings
import zipfile
from pathlib import Path

import numpy as np
import pytest
import torch

from tests.finetune.tasks.tiny_wsd import TINY_WSD
from workbench.cli.main import main
from workbench.corpora.datasets import load_dataset
from workbench.encoding import models
from workbench.encoding.encoder import Encoder
from workbench.errors import DataError, InputError, ModelLoadError
from workbench.fileio import sha256_file
from workbench.finetune.data.readers import DataFile
from workbench.finetune.tasks.registry import finetune
from workbench.finetune.training import checkpoint as ckpt
from workbench.lexicon.glosses import gloss_text
from workbench.lexicon.wordnet import load_wordnet
from workbench.wsd.biencoder import BiEncoder, bi_encoder_head, load_biencoder, training_of
from workbench.wsd.disambiguate import disambiguate
from workbench.wsd.gloss_cache import GlossCache
from workbench.wsd.opened import OpenedSystem
from workbench.wsd.pos_probe import PosProbe, load_probe
from workbench.wsd.systems import open_system

CFG = TINY_WSD.replace(epochs=2, lr=5e-3, lora_r=4, lora_alpha=8, lora_targets="query,value,dense")


@pytest.fixture(scope="module")
def semcor(wsd_data):
    sentences = [s for s in load_dataset("semcor", wsd_data).sentences[:80] if s.instances]
    return DataFile(tuple(sentences[:40]), "semcor[:40]", "a"), DataFile(
        tuple(sentences[40:52]), "semcor[40:52]", "b"
    )


@pytest.fixture(scope="module")
def lora_run(tiny_model_dir, semcor, tmp_path_factory):
    """A LoRA bi-encoder on the tiny BERT, dev = test = the next 12 sentences."""
    train, dev = semcor
    out = tmp_path_factory.mktemp("lora") / "model"
    result = finetune("wsd", train, dev, CFG, out, model=str(tiny_model_dir), progress=False,
                      test=dev, keep_checkpoint=True)  # fmt: skip
    return out, result


def _pairs(data: DataFile) -> list[tuple[str, str]]:
    return sorted({(i.lemma, i.pos) for s in data.examples for i in s.instances})


def test_adapters_are_saved_unmerged_and_answer_as_the_trained_model(
    lora_run, semcor, tiny_model_dir
):
    out, result = lora_run
    # PEFT's format for both encoders, no copy of the base weights
    for part in (out, out / "gloss_encoder"):
        assert (part / "adapter_config.json").is_file()
        assert (part / "adapter_model.safetensors").is_file()
        assert not (part / "model.safetensors").exists()
    record = json.loads((out / "base_model.json").read_text())
    assert record["fingerprint"] == Encoder(model=str(tiny_model_dir), device="cpu").fingerprint
    # the trained (unmerged) model in memory and the saved directory give the same vectors
    model = result.model.eval()
    bi = BiEncoder(out, device="cpu")
    wordnet = load_wordnet()
    synsets = sorted({wordnet.synset(k) for p in _pairs(semcor[1]) for k in wordnet.candidates(*p)})
    texts = [gloss_text(wordnet, s, "definition") for s in synsets]
    tokenizer = models.load_tokenizer(models.resolve_model(str(out / "gloss_encoder")))
    tok = tokenizer(texts, truncation=True, max_length=CFG.task.gloss_max_length,
                    padding=True, return_tensors="pt")  # fmt: skip
    with torch.no_grad():
        hidden = model.gloss_encoder(
            input_ids=tok["input_ids"], attention_mask=tok["attention_mask"]
        ).last_hidden_state
        m = tok["attention_mask"].unsqueeze(-1).float()
        in_memory = ((hidden * m).sum(1) / m.sum(1)).numpy()  # fmt: skip
    np.testing.assert_allclose(bi.gloss_vectors(synsets, wordnet), in_memory, atol=1e-5)
    words = ["The", "bank", "raised", "its", "rates", "."]
    ids = tokenizer(words, is_split_into_words=True, return_tensors="pt")
    with torch.no_grad():
        ctx = model.encoder(**ids).last_hidden_state[0, 2]  # "bank" is one subword
    got = bi.encoder.encode([words], keep=[[1]]).select("-1")[0]
    np.testing.assert_allclose(got, ctx.numpy(), atol=1e-5)
    # so the scores through the saved directory are the training-time scorer's (dev = test)
    card = result.card
    assert card["test"]["f1"] == pytest.approx(card["best_metric"], abs=1e-9)
    # and the adapters are a small part of a full copy
    full = sum(p.numel() for p in models.load_model(models.resolve_model(str(tiny_model_dir)))
               .parameters())  # fmt: skip
    assert card["parameters"]["trainable"] < full / 3


def test_checkpoints_hold_the_adapters_only_and_resume(lora_run, semcor, tiny_model_dir, tmp_path):
    out, result = lora_run
    last = ckpt.load_tree(out / "checkpoint" / ckpt.LAST)
    assert last["model"] and all("lora_" in k for k in last["model"])
    assert set(last["model"]) == {n for n, p in result.model.named_parameters() if p.requires_grad}
    # a run cut after its first steps (a time limit on a lent GPU) goes on with --resume from
    # its adapters and optimizer state: the rest of the cut epoch, then the next, to the end
    train, dev = semcor
    cut = tmp_path / "cut"
    finetune("wsd", train, dev, CFG.replace(max_steps=3), cut, model=str(tiny_model_dir),
             progress=False, keep_checkpoint=True)  # fmt: skip
    size = (cut / "checkpoint" / ckpt.LAST).stat().st_size
    base = models.load_model(models.resolve_model(str(tiny_model_dir)))
    assert size < 0.1 * sum(p.numel() * 4 for p in base.parameters())  # not a model copy
    resumed = finetune("wsd", train, dev, CFG, cut, model=str(tiny_model_dir), progress=False,
                       resume=True)  # fmt: skip
    per_epoch = result.card["epochs"][0]["steps"]
    assert [e.steps for e in resumed.history] == [3, per_epoch, 2 * per_epoch]
    BiEncoder(cut, device="cpu")


def test_a_frozen_gloss_encoder_is_the_base_model_not_a_copy(semcor, tiny_model_dir, tmp_path):
    train, dev = semcor
    out = tmp_path / "frozen"
    finetune("wsd", train, dev, CFG.replace(epochs=1).with_task(freeze_glosses=True), out,
             model=str(tiny_model_dir), progress=False)  # fmt: skip
    head = bi_encoder_head(out)
    assert head is not None and head["gloss_encoder"] == "base"
    assert not (out / "gloss_encoder").exists()
    bi = BiEncoder(out, device="cpu")
    base = Encoder(model=str(tiny_model_dir), device="cpu")
    assert bi.gloss_fingerprint == base.fingerprint != bi.encoder.fingerprint


def test_training_goes_on_from_the_adapters_against_the_first_base(
    lora_run, semcor, tiny_model_dir, tmp_path, capsys
):
    out, _ = lora_run
    train, dev = semcor
    more = tmp_path / "more"
    result = finetune("wsd", train, dev, CFG.replace(epochs=1), more, model=str(out),
                      progress=False)  # fmt: skip
    assert "training continues from the WSD bi-encoder" in result.notes[0]
    first = json.loads((out / "base_model.json").read_text())
    second = json.loads((more / "base_model.json").read_text())
    assert second["name"] == first["name"] and second["fingerprint"] == first["fingerprint"]
    assert second["adapter_sha256"] != first["adapter_sha256"]
    BiEncoder(more, device="cpu")  # loads onto the first base
    with pytest.raises(InputError, match="pass --lora-r 4 --lora-alpha 8"):
        finetune("wsd", train, dev, CFG.replace(lora_r=8), tmp_path / "other", model=str(out),
                 progress=False)  # fmt: skip


def _copy(src: Path, dst: Path) -> Path:
    shutil.copytree(src, dst)
    return dst


def _damage_truncated(d: Path) -> str:
    f = d / "adapter_model.safetensors"
    f.write_bytes(f.read_bytes()[:100])
    return "adapter_model.safetensors"


def _damage_replaced(d: Path) -> str:
    from safetensors.torch import load_file, save_file

    f = d / "adapter_model.safetensors"
    state = {k: v + 1 for k, v in load_file(str(f)).items()}
    save_file(state, str(f))
    return "damaged or was replaced"


def _damage_infinite(d: Path) -> str:
    from safetensors.torch import load_file, save_file

    f = d / "adapter_model.safetensors"
    state = load_file(str(f))
    key = sorted(state)[-1]
    state[key].view(-1)[-1] = float("inf")
    save_file(state, str(f))
    record = json.loads((d / "base_model.json").read_text())  # as a hand-made directory
    record["adapter_sha256"] = sha256_file(f)
    (d / "base_model.json").write_text(json.dumps(record))
    return f"non-finite: tensor '{key}' holds 1 NaN or infinite value"


def _damage_foreign_base(d: Path) -> str:
    record = json.loads((d / "base_model.json").read_text())
    record["fingerprint"] = "0123456789abcdef"
    (d / "base_model.json").write_text(json.dumps(record))
    return "fingerprint 0123456789abcdef"


def _damage_missing(d: Path) -> str:
    (d / "adapter_model.safetensors").unlink()
    return "adapter_model.safetensors listed in its training_card.json is missing"


def _damage_pickled(d: Path) -> str:
    (d / "adapter_model.safetensors").rename(d / "adapter_model.bin")
    card = json.loads((d / "training_card.json").read_text())  # as a hand-made directory
    card["files"] = [f for f in card["files"] if f != "adapter_model.safetensors"]
    (d / "training_card.json").write_text(json.dumps(card))
    return "pickled adapter"


def _damage_record(d: Path) -> str:
    (d / "base_model.json").write_text("{not json")
    return "base_model.json cannot be read"


def _damage_config(d: Path) -> str:
    (d / "adapter_config.json").write_text(json.dumps({"peft_type": "PREFIX_TUNING"}))
    return "not the config of a LoRA adapter"


def _damage_head_cut(d: Path) -> str:
    head = json.loads((d / "head.json").read_text())
    head["gloss_max_length"] = -5
    (d / "head.json").write_text(json.dumps(head))
    return "without a valid gloss_max_length"


@pytest.mark.parametrize(
    "damage",
    [_damage_truncated, _damage_replaced, _damage_infinite, _damage_foreign_base, _damage_missing,
     _damage_pickled, _damage_record, _damage_config, _damage_head_cut],
)  # fmt: skip
def test_a_damaged_or_foreign_adapter_is_refused_naming_the_file(
    lora_run, tmp_path, damage, capsys
):
    out, _ = lora_run
    broken = _copy(out, tmp_path / "broken")
    message = damage(broken)
    with pytest.raises(ModelLoadError, match=message.replace("(", r"\(")):
        BiEncoder(broken, device="cpu")
    code = main(["wsd", "disambiguate", "The bank raised its rates.", "--word", "bank",
                 "--model", str(broken), "--device", "cpu"])  # fmt: skip
    err = capsys.readouterr().err
    assert code == 2 and err.startswith("workbench: error:") and len(err.strip().splitlines()) == 1
    assert "Traceback" not in err


def test_an_unfinished_bi_encoder_directory_is_refused(lora_run, tmp_path):
    out, _ = lora_run
    unfinished = _copy(out, tmp_path / "unfinished")
    (unfinished / "training_card.json").unlink()
    with pytest.raises(ModelLoadError, match="not a finished WSD bi-encoder"):
        BiEncoder(unfinished, device="cpu")


def test_an_incomplete_bi_encoder_never_answers_as_another_system(lora_run, tmp_path, capsys):
    out, _ = lora_run
    for gone in ("gloss_encoder", "adapter_model.safetensors", "sense_counts.json.gz"):
        broken = _copy(out, tmp_path / gone.replace(".", "-"))
        target = broken / gone
        shutil.rmtree(target) if target.is_dir() else target.unlink()
        with pytest.raises(ModelLoadError, match="incomplete|missing"):
            BiEncoder(broken, device="cpu")
        code = main(["wsd", "disambiguate", "The bank raised its rates.", "--word", "bank",
                     "--model", str(broken), "--device", "cpu"])  # fmt: skip
        err = capsys.readouterr().err
        assert code == 2 and ("incomplete" in err or "missing" in err), err


def test_the_gloss_cache_never_answers_for_another_model(lora_run, tmp_path, monkeypatch):
    out, _ = lora_run
    monkeypatch.setenv("WORKBENCH_CACHE", str(tmp_path / "cache"))
    bi = BiEncoder(out, device="cpu")
    pairs = [("bank", "NOUN"), ("bass", "NOUN")]
    reference = bi.index(pairs).vectors_.copy()
    shards = sorted(bi.cache.folder.glob("*.npz"))
    assert shards
    # another gloss encoder's shard planted in this folder, with the same gloss texts
    foreign = GlossCache({"gloss_encoder": "another"}, bi.encoder.dim, tmp_path / "other")
    texts = [gloss_text(load_wordnet(), s, "definition") for s in ("bank.n.01", "bass.n.01")]
    foreign.store(texts, np.ones((2, bi.encoder.dim), np.float32))
    for shard in shards:
        shard.unlink()
    planted = next(foreign.folder.glob("*.npz"))
    shutil.copy(planted, bi.cache.folder / planted.name)
    fresh = BiEncoder(out, device="cpu")
    with pytest.warns(UserWarning, match="written for another gloss encoder"):
        again = fresh.index(pairs).vectors_
    np.testing.assert_allclose(again, reference, atol=1e-6)
    # a damaged shard is reported, removed and its glosses encoded again
    shard = next(bi.cache.folder.glob("*.npz"))
    shard.write_bytes(b"PK\x03\x04 cut off")
    with pytest.warns(UserWarning, match="cannot be used"):
        np.testing.assert_allclose(BiEncoder(out, device="cpu").index(pairs).vectors_,
                                   reference, atol=1e-6)  # fmt: skip
    assert not shard.exists()


def test_a_gloss_cache_that_cannot_be_written_still_answers(lora_run, tmp_path, monkeypatch):
    out, _ = lora_run
    cache = tmp_path / "blocked"
    cache.mkdir()
    (cache / "glosses").write_text("a file where the cache's folder would go")  # even for root
    monkeypatch.setenv("WORKBENCH_CACHE", str(cache))
    with pytest.warns(UserWarning, match="cannot be written"):
        index = BiEncoder(out, device="cpu").index([("bank", "NOUN")])
    assert len(index) == 10


def test_a_model_without_a_bi_encoder_hands_over_to_best_and_says_so(tiny_model_dir, monkeypatch):
    monkeypatch.setattr("workbench.wsd.systems.centroids.semcor_available", lambda: False)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        opened = open_system("biencoder", str(tiny_model_dir), device="cpu")
    assert opened.name == "best" and opened.biencoder is None
    assert "no trained WSD bi-encoder" in opened.note and "'best' system answers" in opened.note
    with pytest.raises(InputError, match="Layer -4 does not exist"):
        opened.describe()  # the best system's layers, checked once the tiny model loads
    with pytest.raises(ModelLoadError, match="no WSD bi-encoder"):
        load_biencoder(str(tiny_model_dir))
    with pytest.raises(InputError, match="pools a word's subwords as it was trained"):
        open_system("biencoder", None, device="cpu", pooling="first")


def test_the_pos_probe_round_trip_and_a_damaged_one(tmp_path):
    rng = np.random.default_rng(0)
    x = rng.normal(size=(300, 8)).astype(np.float32)
    y = np.where(x[:, 0] > 0, "NOUN", np.where(x[:, 1] > 0, "VERB", "ADJ"))
    probe = PosProbe("2").fit(x, y)
    assert np.mean(np.asarray(probe.predict(x)) == y) > 0.9
    back = load_probe(probe.save(tmp_path / "probe.npz"))
    assert back is not None and back.layers == "2" and back.classes_ == probe.classes_
    np.testing.assert_allclose(back.predict_proba(x), probe.predict_proba(x), atol=1e-6)
    assert load_probe(tmp_path / "absent.npz") is None
    (tmp_path / "bad.npz").write_bytes(b"PK\x03\x04 cut off")
    with pytest.raises(DataError, match="not a readable POS probe"):
        load_probe(tmp_path / "bad.npz")
    with pytest.raises(InputError, match="outside WordNet's POS"):
        PosProbe().fit(x[:3], ["NOUN", "VERB", "PRON"])


def test_with_no_pos_given_the_probe_decides_the_pos_of_the_answer(lora_run):
    out, _ = lora_run
    bi = BiEncoder(out, device="cpu")
    verbs = PosProbe("-1")  # a probe that always reads VERB
    verbs.classes_ = ("NOUN", "VERB")
    verbs.coef_ = np.zeros((2, bi.encoder.dim), np.float32)
    verbs.intercept_ = np.array([0.0, 5.0], np.float32)
    words = "The bank raised its rates .".split()
    system = OpenedSystem.of_biencoder(bi).with_pos_probe(None)
    free = disambiguate(system, words, 1)
    assert free.predicted_pos == ("", 0.0) and {c.pos for c in free.candidates} == {"NOUN", "VERB"}
    told = disambiguate(system.with_pos_probe(verbs), words, 1)
    assert told.predicted_pos[0] == "VERB" and told.predicted_pos[1] > 0.99
    assert told.best.pos == "VERB" and "POS: VERB (read off" in told.to_text()
    n_verb = sum(c.pos == "VERB" for c in told.candidates)
    assert all(c.pos == "VERB" for c in told.candidates[:n_verb])  # its senses ranked first
    assert len(told.candidates) == len(free.candidates)  # every candidate still listed
    # a POS given by the user is never overruled
    nouns = disambiguate(system.with_pos_probe(verbs), words, 1, pos="NOUN")
    assert nouns.best.pos == "NOUN" and nouns.predicted_pos == ("", 0.0)


@pytest.mark.slow
def test_the_built_package_carries_the_shipped_bi_encoder(tmp_path):
    """``pip install .`` (not only an editable install) gets the adapters, card and probe."""
    repo = Path(__file__).resolve().parents[2]
    done = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "--no-build-isolation",
         "-w", str(tmp_path), str(repo)],
        capture_output=True, text=True, cwd=tmp_path,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    (wheel,) = tmp_path.glob("*.whl")
    names = set(zipfile.ZipFile(wheel).namelist())
    shipped = repo / "workbench" / "wsd" / "shipped"
    expected = {p.relative_to(repo).as_posix() for p in shipped.rglob("*") if p.is_file()}
    assert expected and expected <= names
    weights = ("adapter_model.safetensors", "trained_layers.safetensors")
    assert any(n.endswith(weights) for n in expected)


@pytest.mark.parametrize(
    ("extra", "how"),
    [
        ({}, "a bi-encoder"),
        ({"average": {"weight_a": 0.3}}, "the average of two bi-encoders"),
        ({"continued_from": {"average": {"weight_a": 0.3}}},
         "a bi-encoder continued from the average of two"),
        ({"continued_from": {"command": "x"}}, "a bi-encoder"),  # continued from one run
    ],
)  # fmt: skip
def test_the_training_an_index_states_names_how_the_weights_came_about(extra, how):
    card = {"data": {"train": {"source": "semcor[:10]", "sha256": "ab", "n": 10}},
            "earlier_training": "semcor[:40]", **extra}  # fmt: skip
    info = training_of(card, "esr")
    assert info.corpus == f"semcor[:40] then semcor[:10], as {how} with esr glosses"
    assert (info.sha256, info.n_sentences) == ("ab", 10)
