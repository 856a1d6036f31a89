"""Fine-tuning data readers and bad input: empty files, missing/unseen labels, I- without B-,
over-long texts."""

from __future__ import annotations

import json

import pytest

from workbench.errors import DataError, InputError
from workbench.finetune.data.readers import (
    LabelSet,
    PairExample,
    TaggedSentence,
    in_memory,
    read_conll,
    read_table,
    read_text,
)
from workbench.finetune.tasks.registry import make_task
from workbench.finetune.training.config import TrainConfig


def test_read_csv_tsv_jsonl(tmp_path):
    (tmp_path / "a.csv").write_text('text,label,extra\n"Hello, world",pos,x\nbad day,neg,y\n')
    (tmp_path / "b.tsv").write_text("text_a\ttext_b\tlabel\none\ttwo\tsame\n")
    rows = [{"text_a": "x y", "text_b": "z", "label": "different", "lemma": "x"}]
    (tmp_path / "c.jsonl").write_text("\n".join(json.dumps(r) for r in rows) + "\n\n")
    a = read_table(tmp_path / "a.csv", pair=False)
    assert [(e.text, e.label) for e in a.examples] == [("Hello, world", "pos"), ("bad day", "neg")]
    assert len(a.sha256) == 64 and a.card()["n"] == 2
    pair = PairExample("one", "two", "same")
    assert read_table(tmp_path / "b.tsv", pair=True).examples == (pair,)
    assert read_table(tmp_path / "c.jsonl", pair=True).examples[0].label == "different"


@pytest.mark.parametrize(
    ("content", "name", "pattern"),
    [
        ("", "empty.csv", "is empty"),
        ("text,label\n", "header.csv", "no examples"),
        ("text,label\nhello,\n", "nolabel.csv", "line 2: column 'label'"),
        ("text\nhello\n", "nocol.csv", "column 'label' is missing"),
        ('{"text": "a"\n', "broken.jsonl", "line 1: not valid JSON"),
        ("text,label\n", "table.xlsx", "must be .csv, .tsv or .jsonl"),
    ],
)
def test_bad_tables(tmp_path, content, name, pattern):
    path = tmp_path / name
    path.write_text(content)
    with pytest.raises(DataError, match=pattern):
        read_table(path, pair=False)


def test_missing_file(tmp_path):
    with pytest.raises(DataError, match="does not exist"):
        read_table(tmp_path / "nope.csv", pair=False)


def test_read_conll_and_orphan_inside(tmp_path):
    good = "-DOCSTART- O\n\nJohn\tB-PER\nSmith\tI-PER\nran\tO\n\nParis B-LOC\n"
    (tmp_path / "good.conll").write_text(good)
    data = read_conll(tmp_path / "good.conll")
    assert data.examples == (
        TaggedSentence(("John", "Smith", "ran"), ("B-PER", "I-PER", "O")),
        TaggedSentence(("Paris",), ("B-LOC",)),
    )
    (tmp_path / "orphan.conll").write_text("the\tO\ncity\tI-LOC\n")
    with pytest.raises(DataError, match=r"line 2: 'I-LOC' does not continue.*I- without B-"):
        read_conll(tmp_path / "orphan.conll")
    fixed = read_conll(tmp_path / "orphan.conll", repair_bio=True)
    assert fixed.examples[0].tags == ("O", "B-LOC")
    (tmp_path / "badtag.conll").write_text("the\tO\ncity\tLOC\n")
    with pytest.raises(DataError, match="'LOC' is not an IOB2 tag"):
        read_conll(tmp_path / "badtag.conll")
    (tmp_path / "blank.conll").write_text("\n\n\n")
    with pytest.raises(DataError, match="no tagged sentences"):
        read_conll(tmp_path / "blank.conll")


def test_read_text(tmp_path):
    (tmp_path / "t.txt").write_text("first line\n\n  \nsecond\n")
    assert read_text(tmp_path / "t.txt").examples == ("first line", "second")
    (tmp_path / "blank.txt").write_text("\n \n")
    with pytest.raises(DataError, match="only blank lines"):
        read_text(tmp_path / "blank.txt")


def test_label_sets_and_unseen_dev_labels():
    train = [TaggedSentence(("a", "b"), ("B-X", "O"))]
    labels = LabelSet.from_examples(train)
    assert labels.names == ("O", "B-X", "I-X")  # I-X known though only B-X was seen
    labels.check([TaggedSentence(("a", "b"), ("B-X", "I-X"))], "dev")
    with pytest.raises(DataError, match="dev.conll has labels never seen.*B-Y"):
        labels.check([TaggedSentence(("a",), ("B-Y",))], "dev.conll")
    pairs = [PairExample("a", "b", "same"), PairExample("c", "d", "different")]
    assert LabelSet.from_examples(pairs).names == ("different", "same")
    with pytest.raises(DataError, match="only one label"):
        LabelSet.from_examples(pairs[:1])


def test_task_kind_must_match_data(tiny_encoder):
    pairs = in_memory([PairExample("a", "b", "x"), PairExample("c", "d", "y")], "pairs")
    with pytest.raises(InputError, match="Task 'token' needs TaggedSentence"):
        make_task("token", TrainConfig(), tiny_encoder.tokenizer, pairs)
    with pytest.raises(InputError, match="Unknown task"):
        make_task("ner", TrainConfig(), tiny_encoder.tokenizer, pairs)


def test_bad_options():
    with pytest.raises(InputError, match="layer_lr_decay"):
        TrainConfig(layer_lr_decay=1.5)
    with pytest.raises(InputError, match="epochs"):
        TrainConfig(epochs=0)


def test_long_inputs_truncated_or_chunked(tiny_encoder):
    tok = tiny_encoder.tokenizer
    cfg = TrainConfig(max_length=16)
    long_text = " ".join(["word"] * 40)
    seq = in_memory([PairExample(long_text, "short", "a"), PairExample("b", "c", "b")], "p")
    task = make_task("pair", cfg, tok, seq)
    feats = task.features(seq, train=True)
    assert all(len(r["input_ids"]) <= 16 for r in feats.rows)
    assert any("1 of 2 inputs were longer than max_length=16" in n for n in feats.notes)
    # a tagged sentence longer than max_length is cut into chunks of whole words, and every
    # word is still labelled once (first subword) across the chunks
    words = tuple(f"w{i}" for i in range(30))
    tags = tuple("B-X" if i % 3 == 0 else "O" for i in range(30))
    data = in_memory([TaggedSentence(words, tags)], "t")
    ttask = make_task("token", cfg, tok, data)
    tfeats = ttask.features(data, train=True)
    assert len(tfeats.rows) > 1 and all(len(r["input_ids"]) <= 16 for r in tfeats.rows)
    assert sum(sum(v != -100 for v in r["eval_labels"]) for r in tfeats.rows) == 30
    assert any("cut into chunks" in n for n in tfeats.notes)


def test_given_label_set_covers_classes_missing_from_a_subset(tiny_encoder):
    train = in_memory([TaggedSentence(("a", "b"), ("B-X", "O"))], "train")
    dev = in_memory([TaggedSentence(("a", "b"), ("B-Y", "O"))], "dev")
    with pytest.raises(DataError, match="never seen"):
        make_task("token", TrainConfig(), tiny_encoder.tokenizer, train).check(train, dev)
    full = ("O", "B-X", "B-Y", "I-X", "I-Y")
    task = make_task("token", TrainConfig(), tiny_encoder.tokenizer, train, labels=full)
    task.check(train, dev)
    assert task.labels.names == full
    with pytest.raises(DataError, match="never seen"):  # the given set must cover train
        make_task("token", TrainConfig(), tiny_encoder.tokenizer, train, labels=("O", "B-Y"))
