"""The offline built-in tasks made from WordNet's usage examples (no WSD data): located targets,
known pairs and tags of known synsets, determinism, lemma-disjoint splits, and a short run of
the tiny BERT through each task, from the library and from the command line."""

from __future__ import annotations

import json
from collections import Counter, defaultdict

import pytest

from workbench.cli.main import main
from workbench.finetune.data.bio import entities, is_valid_tag, orphan_inside
from workbench.finetune.data.readers import read_conll, read_table
from workbench.finetune.data.splits import BUILTINS, OFFLINE_BUILTINS, builtin_data
from workbench.finetune.data.wic import read_jsonl
from workbench.finetune.data.wordnet_tasks import (
    CORPUS,
    WordNetExamples,
    build_wordnet_supersense,
    build_wordnet_wic,
    example_uses,
    locate_lemma,
    split_of_lemmas,
    synset_uses,
    tag_use,
)
from workbench.finetune.runs import train_with_baselines
from workbench.finetune.training.config import TrainConfig
from workbench.lexicon.morphology import base_forms
from workbench.lexicon.wordnet import load_wordnet

LEXNAMES = 45  # WordNet 3.0 lexicographer files
#: The synsets of "bank" (and one of "take place") whose examples name the lemma.
BANK = ("bank.n.01", "bank.n.09", "depository_financial_institution.n.01", "bank.n.03",
        "bank.v.01", "take_place.v.01")  # fmt: skip


def _examples(names: tuple[str, ...]) -> WordNetExamples:
    reader = load_wordnet().reader
    uses = tuple(u for n in names for u in synset_uses(reader.synset(n)))
    return WordNetExamples(uses, "test")


@pytest.fixture(scope="module")
def everything() -> WordNetExamples:
    return example_uses()


def test_a_lemma_is_found_by_its_inflected_forms_only():
    assert locate_lemma("he sat on the bank".split(), "bank", "n") == 4
    assert locate_lemma("two banks".split(), "bank", "n") == 1
    assert locate_lemma("the banker".split(), "bank", "n") is None  # not a form of "bank"
    assert locate_lemma("the geese flew".split(), "goose", "n") == 1
    assert locate_lemma("The meeting took place off".split(), "take_place", "v") == 2
    assert locate_lemma("the larger one".split(), "large", "s") == 1  # satellites: adjectives


def test_the_uses_of_known_synsets():
    uses = _examples(("bank.n.01", "take_place.v.01")).uses
    bank = [u for u in uses if u.synset == "bank.n.01"]
    assert [(u.example, u.words[u.index], u.keys, u.lexname, u.pos) for u in bank] == [
        (0, "bank", ("bank%1:17:01::",), "noun.object", "NOUN"),
        (1, "bank", ("bank%1:17:01::",), "noun.object", "NOUN"),
    ]
    took = [u for u in uses if u.lemma == "take_place"]
    assert len(took) == 1 and took[0].words[took[0].index : took[0].index + 2] == ("took", "place")
    assert tag_use(took[0]).tags == ("O", "O", "B-verb.change", "I-verb.change", *["O"] * 4)
    assert tag_use(bank[1]).tags == ("O",) * 4 + ("B-noun.object",) + ("O",) * 7


def test_known_synsets_give_their_known_pairs():
    """bank.n.01 and the depository have two examples each (two same-sense pairs); four noun
    synsets of "bank" give many different-sense pairs: two of each are drawn, every one right."""
    splits = build_wordnet_wic(_examples(BANK), seed=0, fractions=(1.0, 0.0))
    bank = [p for p in splits.train if (p.lemma, p.pos) == ("bank", "NOUN")]
    same = {frozenset((p.words_a, p.words_b)) for p in bank if p.label == "same"}
    texts = {n: [u.words for u in _examples((n,)).uses] for n in BANK}
    assert same == {
        frozenset(texts["bank.n.01"]),
        frozenset(texts["depository_financial_institution.n.01"]),
    }
    assert Counter(p.label for p in bank) == {"same": 2, "different": 2}
    for p in bank:
        assert (p.keys_a == p.keys_b) == (p.label == "same")  # one key per use here
        assert p.words_a[p.index_a].lower() == p.words_b[p.index_b].lower() == "bank"
    # "bank" as a verb has one example here: no same-sense pair, so no pairs at all
    assert not any(p.pos == "VERB" and p.lemma == "bank" for p in splits.train)
    example = bank[0].to_example()
    assert '" bank "' in example.text_a and '" bank "' in example.text_b
    assert splits.data("train").source.startswith("builtin:wordnet-wic/train(seed=0")


def _target_found(word: str, lemma: str) -> bool:
    """Every part of ``lemma`` is its word of ``word`` or a base form of it."""
    parts, words = lemma.split("_"), word.split(" ")
    return len(parts) == len(words) and all(
        p == w.lower() or p in base_forms(w) for p, w in zip(parts, words, strict=True)
    )


@pytest.mark.slow
def test_wordnet_wic_is_balanced_split_by_lemma_and_located(everything):
    splits = build_wordnet_wic(everything, seed=0)
    lemmas = {s: {p.lemma for p in splits.pairs(s)} for s in ("train", "dev", "test")}
    assert not lemmas["train"] & lemmas["dev"] and not lemmas["train"] & lemmas["test"]
    assert not lemmas["dev"] & lemmas["test"]
    assert len(splits.train) > 5000 and len(splits.dev) > 500 and len(splits.test) > 500
    for split in ("train", "dev", "test"):
        pairs = splits.pairs(split)
        assert Counter(p.label for p in pairs)["same"] * 2 == len(pairs)  # balanced split
        per_lemma: dict = defaultdict(Counter)
        for p in pairs:
            per_lemma[(p.lemma, p.pos)][p.label] += 1
        assert all(c["same"] == c["different"] <= 5 for c in per_lemma.values())
        for p in pairs:
            assert bool(set(p.keys_a) & set(p.keys_b)) == (p.label == "same")
            assert p.words_a != p.words_b
            assert _target_found(p.words_a[p.index_a], p.lemma), p
            assert _target_found(p.words_b[p.index_b], p.lemma), p
    assert splits.params["corpus"] == CORPUS and splits.params["seed"] == 0


@pytest.mark.slow
def test_wordnet_tasks_are_deterministic_and_seeded(everything):
    a, b = build_wordnet_wic(everything, seed=3), build_wordnet_wic(everything, seed=3)
    assert a == b and a.data("train").sha256 == b.data("train").sha256
    assert build_wordnet_wic(everything, seed=4).train != a.train
    s, t = build_wordnet_supersense(everything, seed=3), build_wordnet_supersense(everything, 3)
    assert s == t
    assert build_wordnet_supersense(everything, seed=4).train != s.train


@pytest.mark.slow
def test_wordnet_supersense_tags_each_examples_word_and_splits_by_lemma(everything):
    splits = build_wordnet_supersense(everything, seed=0)
    sentences = splits.train + splits.dev + splits.test
    assert len(sentences) == len({(u.synset, u.example) for u in everything.uses}) > 40_000
    kinds: Counter = Counter()
    for sentence in sentences:
        assert all(is_valid_tag(t) for t in sentence.tags) and not orphan_inside(sentence.tags)
        spans = entities(sentence.tags)
        assert len(spans) == 1  # the one word the example illustrates
        kinds[spans[0][0]] += 1
    assert len(kinds) == LEXNAMES
    assert {k.split(".")[0] for k in kinds} == {"noun", "verb", "adj", "adv"}
    # split by lemma: each example is in its first located lemma's split (every example of a
    # lemma in one split), as the seeded lemma split says
    first: dict = {}
    for u in everything.uses:
        first.setdefault((u.synset, u.example), u)
    split_of = split_of_lemmas((u.lemma for u in first.values()), seed=0)
    members = {s: set(getattr(splits, s)) for s in ("train", "dev", "test")}
    assert all(tag_use(u) in members[split_of[u.lemma]] for u in first.values())
    assert Counter(split_of.values())["dev"] > 1000
    # shuffled: the first sentences of a split are of every POS (WordNet's order is by POS)
    assert {t[2:6] for s in splits.train[:400] for t in s.tags if t != "O"} == {
        "noun",
        "verb",
        "adj.",
        "adv.",
    }


@pytest.mark.slow
@pytest.mark.parametrize("name", OFFLINE_BUILTINS)
def test_the_tiny_bert_trains_on_each_offline_task(name, tiny_model_dir, tmp_path, monkeypatch):
    """Each offline task through its registered task kind, with an empty WORKBENCH_DATA: the
    card names the task and its WordNet corpus, and the model directory is complete."""
    empty = tmp_path / "no-wsd-data"
    empty.mkdir()
    monkeypatch.setenv("WORKBENCH_DATA", str(empty))
    data = builtin_data(name, seed=0, limits=(32, 16, 16))
    card = train_with_baselines(
        BUILTINS[name],
        data,
        TrainConfig(epochs=1, batch_size=16, max_length=48, device="cpu"),
        tmp_path / "run",
        model=str(tiny_model_dir),
        baselines=True,
        progress=False,
    )
    assert card["builtin"]["name"] == name and card["builtin"]["corpus"] == CORPUS
    assert card["data"]["train"]["n"] == 32 and card["data"]["test"]["n"] == 16
    assert card["data"]["train"]["source"].startswith(f"builtin:{name}/train(seed=0")
    assert card["baselines"]  # the majority class and the probes, beside the tuned model
    assert (tmp_path / "run" / "training_card.json").is_file()
    assert (tmp_path / "run" / "config.json").is_file()


@pytest.mark.slow
def test_the_command_line_trains_and_exports_the_offline_tasks(
    tiny_model_dir, tmp_path, monkeypatch
):
    empty = tmp_path / "no-wsd-data"
    empty.mkdir()
    monkeypatch.setenv("WORKBENCH_DATA", str(empty))
    out = tmp_path / "wn-wic"
    code = main(
        [
            "finetune",
            "pair",
            "--builtin",
            "wordnet-wic",
            "--model",
            str(tiny_model_dir),
            "--max-train",
            "32",
            "--max-dev",
            "16",
            "--max-test",
            "16",
            "--epochs",
            "1",
            "--max-length",
            "48",
            "--device",
            "cpu",
            "--no-progress",
            "--out",
            str(out),
        ]
    )
    assert code == 0
    card = json.loads((out / "training_card.json").read_text())
    assert card["task"] == "pair" and card["builtin"]["name"] == "wordnet-wic"
    assert main(["finetune", "builtin", "wordnet-wic", "--out", str(tmp_path / "wic")]) == 0
    pairs = read_jsonl(tmp_path / "wic" / "dev.jsonl")
    assert pairs == build_wordnet_wic(seed=0).dev
    assert len(read_table(tmp_path / "wic" / "train.jsonl", pair=True).examples) > 5000
    assert main(["finetune", "builtin", "wordnet-supersense", "--out", str(tmp_path / "sst")]) == 0
    assert read_conll(tmp_path / "sst" / "dev.conll").examples == build_wordnet_supersense().dev
