from __future__ import annotations

import json
import threading

import pytest

from workbench.corpora.datasets import load_dataset
from workbench.errors import DataError, InputError
from workbench.fileio import sha256_file
from workbench.lexicon import wordnet as wnmod
from workbench.lexicon.wordnet import (
    N_SYNSETS_30,
    key_lemma_pos,
    load_wordnet,
    normalised_copy,
)


def copy_is_intact(path) -> bool:
    """Every file of a normalised copy is listed in its marker with the SHA-256 it has."""
    marker = json.loads((path / "workbench-normalised.json").read_text())
    return set(marker["sha256"]) == set(wnmod.WORDNET_FILES) and all(
        sha256_file(path / name) == digest for name, digest in marker["sha256"].items()
    )


@pytest.fixture(scope="module")
def wn():
    return load_wordnet()


def test_is_wordnet_30(wn):
    assert wn.version == "3.0"
    assert len(wn.senses) == wnmod.N_SENSE_KEYS_30


def test_key_lemma_pos_parses_and_lowercases():
    assert key_lemma_pos("bank%1:17:01::") == ("bank", "NOUN")
    assert key_lemma_pos("run%2:38:00::") == ("run", "VERB")
    assert key_lemma_pos("galore%5:00:00:abundant:00") == ("galore", "ADJ")
    assert key_lemma_pos("Take_Place%2:30:00::") == ("take_place", "VERB")
    with pytest.raises(InputError):
        key_lemma_pos("bank.n.01")


def test_sense_keys_are_lowercase_so_lowercasing_changes_no_real_key(wn):
    assert all(key == key.lower() for key in wn.senses)


def test_bank_sense_key_lookups(wn):
    key = "bank%1:17:01::"
    assert key in wn.candidates("bank", "NOUN")
    assert key_lemma_pos(key) == ("bank", "NOUN")
    assert wn.synset(key) == "bank.n.01"
    assert wn.lexname("bank.n.01") == "noun.object"
    assert "sloping land" in wn.gloss("bank.n.01")
    assert wn.hypernyms("bank.n.01") == ("slope.n.01",)
    assert key in [lemma.key() for lemma in wn.reader.synset("bank.n.01").lemmas()]
    assert wn.first_sense("bank", "NOUN") == key  # sense 1, most frequent
    assert wn.sense_number(key) == 1
    assert wn.senses[key].tag_count >= wn.senses[wn.candidates("bank", "NOUN")[-1]].tag_count
    assert all(key_lemma_pos(k) == ("bank", "VERB") for k in wn.candidates("bank", "VERB"))


def test_adjective_candidates_include_satellites(wn):
    keys = wn.candidates("good", "ADJ")
    types = {k.split("%")[1][0] for k in keys}
    assert types == {"3", "5"}  # head adjectives and satellites
    assert [wn.sense_number(k) for k in keys] == list(range(1, len(keys) + 1))
    assert wn.synset(keys[1]).split(".")[1] == "s"


def test_lemma_lookup_is_exact(wn):
    assert wn.candidates("goose", "NOUN")
    assert wn.candidates("geese", "NOUN") == ()  # no morphology: exact lemmas only
    assert wn.candidates("Goose", "NOUN") == ()
    assert wn.first_sense("take_place", "VERB") == "take_place%2:30:00::"
    assert wn.lemmas(wn.synset("take_place%2:30:00::"))[0] == "happen"
    with pytest.raises(InputError, match="DET"):
        wn.candidates("the", "DET")
    with pytest.raises(InputError, match="not in WordNet"):
        wn.synset("bank%1:99:99::")


def test_every_gold_key_of_all_resolves(wn, wsd_data):
    corpus = load_dataset("ALL", wsd_data)
    keys = {k for _, inst in corpus.instances() for k in inst.keys}
    assert len(keys) == 3669
    assert all(wn.has_key(k) for k in keys)
    # every gold key is a candidate of its instance's lemma and POS
    assert all(
        set(inst.keys) <= set(wn.candidates(inst.lemma, inst.pos)) for _, inst in corpus.instances()
    )


def test_normalised_copy_is_made_once(tmp_path, monkeypatch):
    first = normalised_copy(cache_dir=tmp_path)
    assert first == tmp_path / "wordnet-3.0"
    assert b"\r" not in (first / "data.noun").read_bytes()[:100_000]
    marker = json.loads((first / "workbench-normalised.json").read_text())
    assert marker["n_synsets"] == N_SYNSETS_30
    assert copy_is_intact(first)
    stamp = (first / "data.noun").stat().st_mtime_ns

    def fail(*args, **kwargs):
        raise AssertionError("copy made twice")

    monkeypatch.setattr(wnmod, "_normalise_into", fail)
    assert normalised_copy(cache_dir=tmp_path) == first
    assert (first / "data.noun").stat().st_mtime_ns == stamp
    assert [p.name for p in tmp_path.iterdir()] == ["wordnet-3.0"]  # no temp dir left


def test_broken_copy_is_replaced_and_tampering_detected(tmp_path):
    copy = normalised_copy(cache_dir=tmp_path)
    (copy / "index.sense").write_text("tampered\n")
    assert not copy_is_intact(copy)
    (copy / "workbench-normalised.json").unlink()  # an interrupted copy has no marker
    again = normalised_copy(cache_dir=tmp_path)
    assert copy_is_intact(again)


def test_wrong_source_is_refused(tmp_path):
    source = tmp_path / "src"
    source.mkdir()
    for name in wnmod.WORDNET_FILES:
        (source / name).write_text("  1 header\r\n")
    with pytest.raises(DataError, match="expected 117659"):
        normalised_copy(source=source, cache_dir=tmp_path / "cache")
    assert not (tmp_path / "cache" / "wordnet-3.0").exists()


def test_reader_over_the_copy_gives_the_same_answers(tmp_path, wn):
    other = load_wordnet(cache_dir=tmp_path)
    key = "bank%1:17:01::"
    assert other.synset(key) == wn.synset(key)
    assert other.gloss("dog.n.01") == wn.gloss("dog.n.01")


def test_threads_sharing_wordnet_read_the_same_synsets_as_one_thread():
    """NLTK reads a synset by seeking a file handle shared per POS; the app's sessions, its
    preload and background builds share one WordNet, so the reads must not interleave (they
    answered None or a garbled line before). Satellite adjectives, which read their head
    synset while being read, are among the keys."""
    shared = wnmod.read_wordnet()  # a new reader: nothing cached yet
    keys = list(shared.senses)[::40]
    assert any("%5:" in k for k in keys)
    parts = [keys[i::6] for i in range(6)]
    found: dict[str, str] = {}
    errors: list[BaseException] = []

    def read(part: list[str]) -> None:
        try:
            found.update((k, shared.synset(k)) for k in part)
        except Exception as exc:  # noqa: BLE001 - collected for the assertion
            errors.append(exc)

    threads = [threading.Thread(target=read, args=(part,)) for part in parts]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors[:3]
    serial = wnmod.read_wordnet()
    assert found == {k: serial.synset(k) for k in keys}
