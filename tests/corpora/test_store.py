"""A corpus saved to disk reads back equal; a file that is not one written by save_corpus is
refused with a CacheError naming what is wrong, never half-read."""

from __future__ import annotations

import gzip
import json

import pytest

from workbench.corpora.readers import Corpus, Instance, Sentence
from workbench.corpora.store import CORPUS_FORMAT, read_corpus, save_corpus
from workbench.errors import CacheError


def corpus() -> Corpus:
    sentences = (
        Sentence("s0", ("He", "took place", "é"), ("he", "take_place", "é"), ("X", "VERB", "X"),
                 (Instance("s0.t0", 1, "take_place", "VERB", ("take_place%2:30:00::",)),)),
        Sentence("s1", ("Two", "banks"), ("two", "bank"), ("NUM", "NOUN"),
                 (Instance("s1.t0", 1, "bank", "NOUN", ("bank%1:14:00::", "bank%1:17:01::")),)),
        Sentence("s2", ("nothing",), ("nothing",), ("X",)),
    )  # fmt: skip
    return Corpus("tiny", sentences, (), "abc", n_unknown_gold=2, n_skipped=3)


def write(path, payload) -> None:
    with gzip.open(path, "wt", encoding="utf-8") as fh:
        json.dump(payload, fh)


def test_round_trip(tmp_path):
    original = corpus()
    path = save_corpus(original, tmp_path / "sub" / "c.json.gz")
    assert read_corpus(path) == original
    assert [p.name for p in path.parent.iterdir()] == ["c.json.gz"]  # no temporary left


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda p: p.update(format="other/1"), "not a saved corpus"),
        (lambda p: p.pop("sha256"), "missing or malformed"),
        (lambda p: p["sentences"][0][2].pop(), "differ in length"),
        (lambda p: p["sentences"][0][4][0].__setitem__(1, 7), "outside its sentence"),
        (lambda p: p["sentences"][1][4][0].__setitem__(4, "bank%1:14:00::"), "keys of instance"),
        (lambda p: p["sentences"].append("s3"), r"is not \[id, words"),
    ],
)
def test_a_file_not_as_written_is_refused(tmp_path, change, message):
    path = save_corpus(corpus(), tmp_path / "c.json.gz")
    with gzip.open(path, "rt", encoding="utf-8") as fh:
        payload = json.load(fh)
    assert payload["format"] == CORPUS_FORMAT
    change(payload)
    write(path, payload)
    with pytest.raises(CacheError, match=message):
        read_corpus(path)


def test_a_truncated_or_foreign_file_is_refused(tmp_path):
    path = save_corpus(corpus(), tmp_path / "c.json.gz")
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 2])
    with pytest.raises(CacheError, match="cannot read the saved corpus"):
        read_corpus(path)
    path.write_bytes(b"not gzip")
    with pytest.raises(CacheError, match="cannot read"):
        read_corpus(path)
    write(path, [1, 2])
    with pytest.raises(CacheError, match="not a saved corpus"):
        read_corpus(path)
