"""Built-in tasks made from the real SemCor and WordNet, and one short run of the real model."""

from __future__ import annotations

import json
from collections import Counter, defaultdict

import pytest

from workbench import Encoder
from workbench.corpora.datasets import load_dataset
from workbench.encoding.models import load_tokenizer, resolve_model
from workbench.finetune.data.bio import is_valid_tag, orphan_inside
from workbench.finetune.data.readers import TextExample, in_memory, read_table
from workbench.finetune.data.supersense import build_supersense
from workbench.finetune.data.wic import build_wic, read_jsonl, write_jsonl
from workbench.finetune.evaluation.compare import CompareConfig, compare_measure, compare_report
from workbench.finetune.evaluation.compare_senses import SenseConfig, separation_figure
from workbench.finetune.tasks.registry import finetune
from workbench.finetune.training.config import TrainConfig
from workbench.lexicon.wordnet import load_wordnet
from workbench.reports.writers import write_report

pytestmark = pytest.mark.slow

LEXNAMES = 45  # WordNet 3.0 lexicographer files


@pytest.fixture(scope="module")
def semcor(wsd_data):
    return load_dataset("semcor", wsd_data)


@pytest.fixture(scope="module")
def wic(semcor):
    return build_wic(semcor, seed=0)


def test_wic_split_by_lemma_and_balanced(wic):
    lemmas = {s: {p.lemma for p in wic.pairs(s)} for s in ("train", "dev", "test")}
    assert not lemmas["train"] & lemmas["dev"]
    assert not lemmas["train"] & lemmas["test"]
    assert not lemmas["dev"] & lemmas["test"]
    for split in ("train", "dev", "test"):
        pairs = wic.pairs(split)
        assert len(pairs) > (2000 if split == "train" else 500)
        labels = Counter(p.label for p in pairs)
        assert labels["same"] == labels["different"]  # balanced split
        per_lemma = defaultdict(Counter)
        for p in pairs:
            per_lemma[(p.lemma, p.pos)][p.label] += 1
        assert all(c["same"] == c["different"] for c in per_lemma.values())  # balanced lemma
    for p in wic.train[:500]:
        same = bool(set(p.keys_a) & set(p.keys_b))
        assert same == (p.label == "same")
        assert p.words_a[p.index_a] and p.words_b[p.index_b]
        assert max(len(p.words_a), len(p.words_b)) <= 41
        ex = p.to_example()
        assert f'" {p.words_a[p.index_a]} "' in ex.text_a
    again = wic.data("dev", 100)
    assert len(again.examples) == 100 and again.sha256 == wic.data("dev", 100).sha256


def test_wic_is_deterministic_and_seeded(semcor, wic):
    small = semcor.head(4000)
    a, b = build_wic(small, seed=1), build_wic(small, seed=1)
    assert a.train == b.train
    assert build_wic(small, seed=2).train != a.train


def test_wic_jsonl_round_trip(wic, tmp_path):
    path = write_jsonl(wic.dev[:50], tmp_path / "dev.jsonl")
    assert read_jsonl(path) == wic.dev[:50]
    table = read_table(path, pair=True)
    assert table.examples == tuple(p.to_example() for p in wic.dev[:50])


def test_supersense_tags(semcor):
    splits = build_supersense(semcor.head(3000), load_wordnet(), seed=0)
    assert splits.params["documents"]["train"] > splits.params["documents"]["dev"] > 0
    kinds = set()
    n_inside = 0
    for sent in splits.train + splits.dev + splits.test:
        assert len(sent.words) == len(sent.tags)
        assert all(is_valid_tag(t) for t in sent.tags) and not orphan_inside(sent.tags)
        assert all(" " not in w for w in sent.words)  # multiword tokens are split
        kinds.update(t[2:] for t in sent.tags if t != "O")
        n_inside += sum(t.startswith("I-") for t in sent.tags)
    assert n_inside > 100  # multiword expressions give real B- I- spans
    assert 20 < len(kinds) <= LEXNAMES
    assert all(k.split(".")[0] in {"noun", "verb", "adj", "adv"} for k in kinds)
    # "took place" (take_place, verb.change in SemCor's first sentence) is split and tagged
    first = next(
        s
        for s in splits.train + splits.dev + splits.test
        if "took" in s.words and "place" in s.words
    )
    i = first.words.index("took")
    assert first.tags[i].startswith("B-verb.") and first.tags[i + 1] == "I-" + first.tags[i][2:]


def test_real_model_short_run_loads_in_encoder(tmp_path, default_encoder, wic):
    """The packaged model: a few steps on built-in WiC pairs; the saved directory loads in the
    Encoder and gives the trained encoder's hidden states."""
    import torch

    train, dev = wic.data("train", 48), wic.data("dev", 16)
    cfg = TrainConfig(
        epochs=1, batch_size=16, max_length=96, lr=5e-5, freeze_layers=3, freeze_embeddings=True
    )
    result = finetune("pair", train, dev, cfg, tmp_path / "wic", progress=False)
    assert result.card["base_model"] == default_encoder.name
    assert result.card["parameters"]["trainable"] < result.card["parameters"]["total"]
    enc = Encoder(model=str(tmp_path / "wic"), device="cpu")
    assert enc.fingerprint != default_encoder.fingerprint
    words = list(wic.dev[0].words_a)
    tokenizer = load_tokenizer(resolve_model(str(tmp_path / "wic")))  # transformers' own
    batch = tokenizer([words], is_split_into_words=True, return_tensors="pt")
    with torch.no_grad():
        ours = enc.model(**batch, output_hidden_states=True).hidden_states
        trained = result.model.encoder(**batch, output_hidden_states=True).hidden_states
        base = default_encoder.model(**batch, output_hidden_states=True).hidden_states
    for a, b in zip(ours, trained, strict=True):
        torch.testing.assert_close(a, b, atol=1e-5, rtol=1e-5)
    torch.testing.assert_close(ours[3], base[3])  # embeddings + 3 frozen layers did not move
    assert not torch.allclose(ours[-1], base[-1], atol=1e-4)


def test_compare_report_base_vs_tuned(tiny_model_dir, tmp_path, wsd_data, monkeypatch):
    """The before/after report on small corpora with the tiny model and a tuned copy of it."""
    monkeypatch.setenv("WORKBENCH_DATA", str(wsd_data))
    train = in_memory([TextExample(f"the {w} film", w) for w in ("good", "bad") * 16], "t")
    finetune(
        "seqcls",
        train,
        None,
        TrainConfig(epochs=1, lr=1e-2, max_length=32),
        tmp_path / "tuned",
        model=str(tiny_model_dir),
        progress=False,
    )
    cfg = CompareConfig(
        geometry_sample=60,
        n_pairs=500,
        wsd_train_sentences=150,
        wsd_test="semeval2007",
        device="cpu",
        senses=SenseConfig(lemmas=("bank", "bass"), per_lemma=40),
    )
    c = compare_measure(str(tiny_model_dir), str(tmp_path / "tuned"), cfg)
    assert c.card["task"] == "seqcls"
    assert c.base.geometry.layers == c.tuned.geometry.layers == (0, 1, 2)
    # training changed the top layer, and the sweep covers every layer raw and z-scored
    assert (
        c.base.geometry.get("none", 2).anisotropy.value
        != c.tuned.geometry.get("none", 2).anisotropy.value
    )
    assert [p.layers for p in c.base.sweep] == ["0", "0", "1", "1", "2", "2"]
    paths = write_report(compare_report(c, "test"), tmp_path / "report", stem="compare")
    data = json.loads(paths["json"].read_text())
    assert len(data["data"]["wsd"]) == 6 and len(data["data"]["geometry"]) == 3
    assert "Before / after" in paths["md"].read_text()
    # the same occurrences of each pictured word under both models, per layer
    senses = data["data"]["senses"]
    assert [(r["lemma"], r["layer"]) for r in senses] == [
        (w, str(layer)) for w in ("bank", "bass") for layer in range(3)
    ]
    for base, tuned in zip(c.base.senses, c.tuned.senses, strict=True):
        assert base.occurrences == tuned.occurrences and len(base.occurrences) > 20
        assert base.coords.shape == tuned.coords.shape == (len(base.occurrences), 2)
        assert base.separation.get("2").n_senses >= 2
    html = paths["html"].read_text()
    assert "Senses of ambiguous words" in html and html.count("layer -1") >= 4
    # the separation curves: one colour per word, solid before and dashed after training
    curve = separation_figure({"base": c.base.senses, "tuned": c.tuned.senses}, "silhouette")
    styles = {t.name: (t.line.color, t.line.dash) for t in curve.data}
    assert styles["bank base"][0] == styles["bank tuned"][0] != styles["bass base"][0]
    assert {d for _, d in styles.values()} == {"solid", "dash"}
    assert styles["bass base"][1] == "solid" and styles["bass tuned"][1] == "dash"
