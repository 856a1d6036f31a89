"""Occurrences: the demo texts parse, forms are found, encoding keeps one row per occurrence."""

from __future__ import annotations

import codecs

import numpy as np
import pytest

from workbench.corpora import occurrences as occ
from workbench.corpora.readers import Instance, Sentence
from workbench.errors import InputError
from workbench.lexicon.wordnet import load_wordnet


def test_every_demo_text_parses_with_wordnet_sense_keys():
    wn = load_wordnet()
    words = occ.demo_words()
    assert {"bank", "bass", "cell", "die", "play"} <= set(words)
    for word in words:
        found = occ.from_lines(occ.read_demo(word), word, source=word)
        assert len(found) >= 30
        labels = {o.label for o in found}
        assert len(labels) >= 3 and all(wn.has_key(k) for k in labels)
        assert all(occ.lemma_matcher(word)(o.word) for o in found), word


def test_marked_labelled_and_plain_lines():
    lines = [
        "# a comment",
        "s1\tWe sat on the [bank] of the river.",
        "",
        "The banks closed; the bank reopened.",
        "Nothing to see here.",
    ]
    found = occ.from_lines(lines, "bank", source="f")
    assert [(o.word, o.label, o.source) for o in found] == [
        ("bank", "s1", "f:2"),
        ("banks", "", "f:4"),
        ("bank", "", "f:4"),
    ]
    assert found[0].marked() == "We sat on the [bank] of the river ."
    with pytest.raises(InputError, match="exactly one word"):
        occ.from_lines(["x\tthe [river bank] flooded"], "bank")


def test_irregular_forms_match():
    match = occ.lemma_matcher("die")
    assert match("died") and match("Dying") and match("dies") and not match("diet")
    with pytest.raises(InputError):
        occ.lemma_matcher("  ")


def test_decode_text_refuses_binary_and_bad_utf8():
    assert occ.decode_text(b"a\nb\n") == ["a", "b"]
    with pytest.raises(InputError, match="not a text file"):
        occ.decode_text(b"\x89PNG\r\n\x1a\n\x00\x00", "img.png")
    with pytest.raises(InputError, match="not UTF-8"):
        occ.decode_text("café".encode("latin-1"), "old.txt")


def test_from_corpus_filters_by_lemma_and_pos_and_samples():
    def sent(i, lemma, pos, key):
        inst = Instance(f"s{i}.t0", 1, lemma, pos, (key,))
        return Sentence(
            f"s{i}", ("the", lemma, "."), ("the", lemma, "."), ("DET", pos, "."), (inst,)
        )

    corpus = [sent(i, "bank", "NOUN" if i % 2 else "VERB", f"k{i % 3}") for i in range(20)]
    assert len(occ.from_corpus(corpus, "bank", limit=None)) == 20
    nouns = occ.from_corpus(corpus, "Bank", pos="NOUN", limit=None)
    assert len(nouns) == 10 and all(o.source.startswith("s") for o in nouns)
    sample = occ.from_corpus(corpus, "bank", limit=5, random_state=1)
    assert len(sample) == 5 and sample == sorted(sample, key=lambda o: int(o.source[1:-3]))
    with pytest.raises(InputError, match="no annotated occurrence"):
        occ.from_corpus(corpus, "river")


def test_from_wordnet_examples_contain_the_word():
    found = occ.from_wordnet(load_wordnet(), "bank", "NOUN")
    assert found and all(occ.lemma_matcher("bank")(o.word) for o in found)
    assert all(o.label.startswith("bank%1") for o in found)
    with pytest.raises(InputError):
        occ.from_wordnet(load_wordnet(), "xyzzyq")


def test_encode_occurrences_one_row_each(tiny_encoder, tmp_cache):
    found = occ.from_lines(occ.read_demo("bass"), "bass")[:6]
    ov = occ.encode_occurrences(tiny_encoder, found)
    assert ov.vectors.shape == (6, tiny_encoder.n_layers + 1, tiny_encoder.dim)
    direct = tiny_encoder.encode([list(o.words) for o in found])
    for i, o in enumerate(found):
        row = np.flatnonzero((direct.sentence_index == i) & (direct.word_index == o.index))[0]
        np.testing.assert_allclose(ov.vectors[i], direct.vectors[row], atol=1e-5)
    with pytest.raises(InputError):
        occ.encode_occurrences(tiny_encoder, [])


def test_occurrence_table_columns():
    found = occ.from_lines(["k\tthe [bank] rose", "k2\tthe [bank] eroded"], "bank")
    table = occ.occurrence_table(found, {"k": "gloss k"}, np.zeros((2, 3)), predicted=["k", "k"])
    assert list(table.columns) == [
        "sentence", "word", "label", "gloss", "source", "predicted", "x", "y", "z",
    ]  # fmt: skip
    assert table["gloss"].tolist() == ["gloss k", ""]
    with pytest.raises(InputError):
        occ.occurrence_table(found, coords=np.zeros((3, 2)))


@pytest.mark.parametrize("encoding", ["utf-16", "utf-16-le", "utf-16-be", "utf-32", "utf-8-sig"])
def test_decode_text_reads_unicode_files_with_their_byte_order_mark(encoding):
    text = "The bank lent us money.\nWe swam to the far bank.\n"
    data = text.encode(encoding)
    if encoding in ("utf-16-le", "utf-16-be"):  # these codecs write no mark: add it
        data = (codecs.BOM_UTF16_LE if encoding.endswith("le") else codecs.BOM_UTF16_BE) + data
    assert occ.decode_text(data, "banks.txt") == text.splitlines()
    with pytest.raises(InputError, match="not a text file"):
        occ.decode_text("bank".encode("utf-16-le"), "nomark.txt")  # NULs and no mark: binary


def test_lemma_occurrences_one_rule_for_every_source(tmp_path):
    """The one function the app, ``workbench senses`` and the comparison call: an upload and a
    text file (any BOM encoding) read alike, the tagger's POS applies to both, and every source
    is sampled by the same seeded rule, in order."""
    text = "I bank at the bank .\nThe bank of the river .\nThey bank on it .\n"
    upload = occ.lemma_occurrences("bank", "upload", upload=text.encode(), upload_name="u.txt")
    path = tmp_path / "t.txt"
    path.write_bytes(codecs.BOM_UTF16_LE + text.encode("utf-16-le"))
    from_file = occ.lemma_occurrences("bank", str(path))
    assert [(o.words, o.index) for o in upload] == [(o.words, o.index) for o in from_file]
    assert len(upload) == 4
    nouns = occ.lemma_occurrences("bank", "upload", pos="NOUN", upload=text.encode())
    assert {(o.words[o.index - 1], o.index) for o in nouns} == {("the", 4), ("The", 1)}
    assert len(occ.lemma_occurrences("bank", str(path), pos="NOUN")) == len(nouns)
    with pytest.raises(InputError, match="tagged ADV"):
        occ.lemma_occurrences("bank", "upload", pos="ADV", upload=text.encode())
    demo = occ.lemma_occurrences("bass", "demo", limit=None)
    some = occ.lemma_occurrences("bass", "demo", limit=10, random_state=1)
    assert len(some) == 10 and some == occ.lemma_occurrences(
        "bass", "demo", limit=10, random_state=1
    )
    assert [demo.index(o) for o in some] == sorted(demo.index(o) for o in some)
    with pytest.raises(InputError, match="unknown occurrence source"):
        occ.lemma_occurrences("bank", str(tmp_path / "missing.txt"))


def test_a_text_file_past_the_size_limit_is_refused_before_it_is_read(tmp_path, monkeypatch):
    path = tmp_path / "big.txt"
    path.write_text("The bank of the river .\n" * 100, encoding="utf-8")
    assert len(occ.lemma_occurrences("bank", str(path), limit=None)) == 100
    monkeypatch.setenv("WORKBENCH_LIMIT_TEXT_BYTES", "1000")
    with pytest.raises(InputError, match="over the limit"):
        occ.lemma_occurrences("bank", str(path))
