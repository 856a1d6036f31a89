"""WordNet's usage examples and glosses as sense-tagged sentences: each example locates the
lemma of its synset, a gloss gives one sentence per lemma; the examples join another training
corpus as ``<name>+examples``."""

from __future__ import annotations

import pytest

from workbench.corpora import wordnet_examples
from workbench.corpora.readers import Corpus
from workbench.corpora.store import read_corpus
from workbench.corpora.wordnet_examples import (
    ExampleConfig,
    ExampleStats,
    example_corpus,
    iter_examples,
    locate,
    saved_examples_path,
    split_examples,
    with_examples,
)
from workbench.errors import InputError
from workbench.lexicon.wordnet import key_lemma_pos, load_wordnet


@pytest.fixture(scope="module")
def wn():
    return load_wordnet()


def test_locate_lemma_in_example(wn):
    assert locate(["He", "took", "place", "early"], "take_place", "v", wn) == 1
    assert locate(["she", "ran", "home"], "run", "v", wn) == 1
    assert locate(["two", "geese"], "goose", "n", wn) == 1
    assert locate(["nothing", "here"], "bank", "n", wn) is None


def test_examples_corpus_locates_its_targets(wn):
    stats = ExampleStats()
    config = ExampleConfig(pos=("VERB", "ADJ"), limit=400)
    sentences = list(iter_examples(config, wn, stats))
    assert len(sentences) == 400
    assert stats.matched >= 400  # counted per synset: the last one may go past the limit
    for sentence in sentences:
        (inst,) = sentence.instances
        (key,) = inst.keys
        assert (inst.lemma, inst.pos) == key_lemma_pos(key)
        word = sentence.words[inst.index].lower()
        parts = inst.lemma.split("_")
        assert len(word.split(" ")) == len(parts)
        assert wn.synset(key) in sentence.id  # the sentence is an example of the key's synset
    assert stats.examples == stats.matched + stats.skipped


def test_glosses_give_one_sentence_per_lemma(wn):
    config = ExampleConfig(pos=("NOUN",), examples=False, glosses="all", limit=50)
    sentences = list(iter_examples(config, wn))
    first = sentences[0]
    assert first.instances[0].index == 0 and first.words[1] == ":"
    keys = [s.instances[0].keys[0] for s in sentences]
    assert len(set(keys)) == len(keys)


def test_a_name_ending_in_examples_asks_for_wordnets_examples(tmp_path):
    assert split_examples("semcor+examples") == ("semcor", True)
    odd = tmp_path / "mine.data.xml+examples"
    odd.write_text("<corpus/>")
    assert split_examples(str(odd)) == (str(odd), False)  # a file called so is that file
    assert split_examples("my/train.data.xml+examples") == ("my/train.data.xml", True)
    assert split_examples("semcor") == ("semcor", False)
    assert split_examples("+examples") == ("+examples", False)  # no corpus before it


def test_with_examples_appends_them_under_a_name_and_hash_of_its_own(wn):
    examples = example_corpus(ExampleConfig(pos=("NOUN",), limit=30), wn)
    base = Corpus("mine", (), sha256="another corpus")
    other = example_corpus(ExampleConfig(pos=("VERB",), limit=5), wn)
    corpus = Corpus("mine", other.sentences, sha256="abc", n_skipped=2)
    joined = with_examples(corpus, examples)
    assert joined.name == "mine+examples"
    assert joined.sentences == corpus.sentences + examples.sentences
    assert joined.n_instances == corpus.n_instances + examples.n_instances
    assert joined.n_skipped == 2 + examples.n_skipped
    assert len({joined.sha256, corpus.sha256, with_examples(base, examples).sha256}) == 3
    with pytest.raises(InputError, match="already has a sentence with id 'wn\\."):
        with_examples(examples, examples)


def test_the_example_corpus_is_built_once_and_read_back(wn, tmp_cache, monkeypatch):
    config = ExampleConfig(pos=("ADV",), limit=30)
    built = example_corpus(config, wn)
    path = saved_examples_path(config, wn)
    assert path.is_file() and path.is_relative_to(tmp_cache)

    def not_again(*args, **kwargs):
        raise AssertionError("built again")

    monkeypatch.setattr(wordnet_examples, "iter_examples", not_again)
    assert example_corpus(config, wn) == built
    assert saved_examples_path(ExampleConfig(pos=("ADV",), limit=31), wn) != path
    monkeypatch.undo()
    monkeypatch.setenv("WORKBENCH_CACHE", str(tmp_cache))
    path.write_bytes(path.read_bytes()[:100])  # a damaged copy is reported and rebuilt
    with pytest.warns(UserWarning, match="rebuilding"):
        assert example_corpus(config, wn) == built
    assert example_corpus(config, wn, cache=False) == built
    assert read_corpus(path) == built


def test_an_unwritable_cache_dir_leaves_the_corpus_built_not_saved(wn, tmp_path, monkeypatch):
    blocker = tmp_path / "cache-is-a-file"
    blocker.write_text("")
    monkeypatch.setenv("WORKBENCH_CACHE", str(blocker))
    config = ExampleConfig(pos=("ADV",), limit=5)
    with pytest.warns(UserWarning, match="not kept for next time"):
        corpus = example_corpus(config, wn)
    assert corpus == example_corpus(config, wn, cache=False) and len(corpus) == 5


def test_a_copy_made_by_other_code_is_replaced_not_kept(wn, tmp_cache):
    config = ExampleConfig(pos=("ADV",), limit=3)
    path = saved_examples_path(config, wn)
    stem = path.name.rsplit("-", 1)[0]
    older = path.with_name(f"{stem}-000000000000.json.gz")
    other_config = saved_examples_path(ExampleConfig(pos=("ADV",), limit=4), wn)
    for p in (older, other_config):
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_bytes(b"made by another version")
    example_corpus(config, wn)
    assert path.is_file() and not older.exists() and other_config.exists()
