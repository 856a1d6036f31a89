"""The answers WordNet gives from its own files (index.sense, one data.* line) are NLTK's.

The reference is the previous implementation: NLTK's reader for synsets and definitions, and
index.sense parsed whole and grouped per lemma for candidates, sense numbers and tag counts.
"""

from __future__ import annotations

import os
import random
import shutil
import subprocess
import sys
import zipfile

import pytest

from workbench.lexicon import wordnet as wnmod
from workbench.lexicon.wordnet import key_lemma_pos, key_lemma_wn_pos


@pytest.fixture(scope="module")
def fresh():
    """A WordNet with nothing cached and its NLTK reader not yet made."""
    return wnmod.read_wordnet()


@pytest.fixture(scope="module")
def reference(fresh):
    """index.sense parsed whole the old way: key -> (offset, sense number, tag count) and
    (lemma, POS) -> keys by sense number."""
    by_key, by_lemma = {}, {}
    with fresh.reader.open("index.sense") as fh:
        for line in fh.read().splitlines():
            key, offset, number, count = line.split()
            by_key[key] = (int(offset), int(number), int(count))
            by_lemma.setdefault(key_lemma_pos(key), []).append(key)
    order = {lp: tuple(sorted(keys, key=lambda k: by_key[k][1])) for lp, keys in by_lemma.items()}
    return by_key, order


def sample_lemmas(order, n: int = 300) -> list[tuple[str, str]]:
    fixed = [("bank", "NOUN"), ("bank", "VERB"), ("good", "ADJ"), ("first", "ADJ"), ("more", "ADJ"),
             ("spartan", "ADJ"), ("take_place", "VERB"), ("well", "ADV")]  # fmt: skip
    return fixed + random.Random(0).sample(sorted(order), n)


def test_candidates_numbers_and_counts_are_index_sense(fresh, reference):
    by_key, order = reference
    assert len(fresh.senses) == len(by_key)
    assert list(fresh.senses) == sorted(by_key)
    assert set(fresh.by_lemma) == set(order) and len(fresh.by_lemma) == len(order)
    for lemma, pos in sample_lemmas(order, 2000):
        keys = fresh.candidates(lemma, pos)
        assert keys == order[lemma, pos]
        assert fresh.first_sense(lemma, pos) == keys[0]
        for key in keys:
            entry = fresh.senses[key]
            assert (entry.offset, entry.sense_number, entry.tag_count) == by_key[key]
            assert fresh.sense_number(key) == by_key[key][1]
    assert fresh.candidates("bank%1", "NOUN") == () and fresh.candidates("zzzz", "NOUN") == ()
    assert "bank%1:17:01::" in fresh.senses and "bank%1:17:01:" not in fresh.senses


def test_synset_names_and_glosses_are_nltks(fresh, reference):
    by_key, order = reference
    keys = {k for lemma_pos in sample_lemmas(order) for k in order[lemma_pos]}
    keys |= set(random.Random(1).sample(sorted(by_key), 3000))
    reader = fresh.reader
    for key in sorted(keys):
        nltk_synset = reader.synset_from_pos_and_offset(key_lemma_wn_pos(key)[1], by_key[key][0])
        name = fresh.synset(key)
        assert name == nltk_synset.name(), key
        assert fresh.gloss(name) == nltk_synset.definition() == reader.synset(name).definition()


def test_lemmas_examples_hypernyms_and_frames_are_nltks(fresh, reference):
    """What ESR glosses read of a synset, from the data files: NLTK's lemma names, examples,
    first lemma's verb frames, and hypernyms then instance hypernyms, each sorted by name
    (NLTK keeps a synset's pointers in a set, so its own order changes from one process to
    the next)."""
    from nltk.corpus.reader.wordnet import VERB_FRAME_STRINGS

    assert wnmod.VERB_FRAME_STRINGS[1:] == VERB_FRAME_STRINGS[1:]
    by_key, order = reference
    keys = {k for lemma_pos in sample_lemmas(order) for k in order[lemma_pos]}
    keys |= set(random.Random(2).sample(sorted(by_key), 3000))
    seen = {"frames": 0, "two hypernyms": 0}
    for key in sorted(keys):
        name = fresh.synset(key)
        nltk_synset = fresh.reader.synset(name)
        assert fresh.lemmas(name) == tuple(nltk_synset.lemma_names()), name
        assert fresh.examples(name) == tuple(nltk_synset.examples()), name
        first = nltk_synset.lemmas()[0]
        assert fresh.frames(name) == tuple(first.frame_strings()), name
        hypernyms = sorted(s.name() for s in nltk_synset.hypernyms())
        instances = sorted(s.name() for s in nltk_synset.instance_hypernyms())
        assert fresh.hypernyms(name) == tuple(hypernyms + instances), name
        assert fresh.hypernyms(name, instances=False) == tuple(hypernyms), name
        seen["frames"] += bool(first.frame_strings())
        seen["two hypernyms"] += len(hypernyms + instances) > 1
    assert min(seen.values()) > 10, seen  # the sample has verbs and several hypernyms


def test_an_esr_gloss_needs_no_nltk():
    """The ESR gloss text of a word's candidates (what the shipped bi-encoder reads) comes
    from WordNet's files: no NLTK imported, the same text in every process."""
    code = (
        "import sys\n"
        "from workbench.lexicon.glosses import gloss_text\n"
        "from workbench.lexicon.wordnet import load_wordnet\n"
        "wn = load_wordnet()\n"
        "texts = [gloss_text(wn, wn.synset(k), 'esr') for pos in ('NOUN', 'VERB')\n"
        "         for k in wn.candidates('strike', pos) + wn.candidates('szilard', pos)]\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] == 'nltk'))\n"
        "print(texts)\n"
    )
    runs = [
        subprocess.run(
            [sys.executable, "-c", code],
            capture_output=True,
            text=True,
            check=True,
            env={**os.environ, "PYTHONHASHSEED": seed},
        )  # fmt: skip
        for seed in ("1", "2")
    ]
    assert runs[0].stdout.splitlines()[0] == "[]"
    assert runs[0].stdout == runs[1].stdout  # Szilard's two instance hypernyms: one order
    assert "Somebody strike something" in runs[0].stdout


def test_a_sentence_needs_no_nltk():
    """Opening WordNet and answering one word's candidates, synsets and glosses (what
    ``wsd disambiguate`` asks) imports no NLTK."""
    code = (
        "import sys\n"
        "from workbench.lexicon.wordnet import load_wordnet\n"
        "wn = load_wordnet()\n"
        "for pos in ('NOUN', 'VERB', 'ADJ'):\n"
        "    for key in wn.candidates('good', pos) + wn.candidates('bank', pos):\n"
        "        wn.gloss(wn.synset(key)), wn.senses[key].tag_count\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] == 'nltk'))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]"


@pytest.mark.slow
def test_every_synset_read_from_the_files_is_nltks(fresh, reference):
    """One pass over NLTK's synsets: every synset record read from the data files (name,
    lexicographer file, hypernyms, instance hypernyms, sense keys), every synset's definition
    and examples in NLTK's order, and every sense key's synset and gloss answered from the files
    are NLTK's."""
    by_key, _ = reference
    records = {r.name: r for r in fresh.synset_records()}
    texts = fresh.synset_texts()
    seen_keys: set[str] = set()
    for synset in fresh.reader.all_synsets():
        assert next(texts) == (synset.definition(), tuple(synset.examples())), synset
        record = records.pop(synset.name())
        assert record.lexname == synset.lexname(), synset
        assert set(record.hypernyms) == {s.name() for s in synset.hypernyms()}, synset
        assert set(record.instance_hypernyms) == {s.name() for s in synset.instance_hypernyms()}
        # NLTK derives 8 keys of capitalised lemmas ("Earth") that index.sense does not hold
        assert record.keys == tuple(k for k in (x.key() for x in synset.lemmas()) if k in by_key)
        for key in record.keys:
            assert fresh.synset(key) == synset.name(), key
        assert fresh.gloss(synset.name()) == synset.definition(), synset
        seen_keys |= set(record.keys)  # a synset may hold one key twice ("A" and "a")
    assert next(texts, None) is None
    assert not records and seen_keys == set(by_key) and len(by_key) == wnmod.N_SENSE_KEYS_30


@pytest.mark.parametrize("zipped", [False, True])
def test_nltks_installed_wordnet_is_read_through_nltk(tmp_path, zipped):
    """With a ``wordnet`` corpus in NLTK's data directories (here one named by NLTK_DATA, as a
    directory or as NLTK's zip), the files are read through NLTK's reader, as before."""
    copy = wnmod.normalised_copy()
    corpora = tmp_path / "corpora"
    corpora.mkdir()
    if zipped:
        with zipfile.ZipFile(corpora / "wordnet.zip", "w") as archive:
            for name in wnmod.WORDNET_FILES:
                archive.write(copy / name, f"wordnet/{name}")
    else:
        shutil.copytree(copy, corpora / "wordnet")
    code = (
        "from workbench.lexicon.wordnet import load_wordnet\n"
        "wn = load_wordnet()\n"
        "keys = wn.candidates('good', 'ADJ')[:3] + wn.candidates('bank', 'NOUN')[:2]\n"
        "print(type(wn._files).__name__, wn.reader.root)\n"
        "print([(wn.synset(k), wn.gloss(wn.synset(k))) for k in keys])\n"
    )
    env = {**os.environ, "NLTK_DATA": str(tmp_path)}
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, env=env
    )
    kind, answers = done.stdout.strip().splitlines()
    assert kind.startswith("_ReaderFiles") and str(tmp_path) in kind
    wn = wnmod.load_wordnet()
    keys = wn.candidates("good", "ADJ")[:3] + wn.candidates("bank", "NOUN")[:2]
    assert answers == str([(wn.synset(k), wn.gloss(wn.synset(k))) for k in keys])
