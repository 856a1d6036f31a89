"""Tokenizing by distinct word gives exactly what tokenizing whole sentences gives, in one go
or chunk by chunk."""

from __future__ import annotations

import warnings
from types import SimpleNamespace

import numpy as np
import pytest
from tokenizers import Tokenizer, decoders, models, normalizers, pre_tokenizers, trainers
from transformers import AutoTokenizer, PreTrainedTokenizerFast

from workbench.corpora.wordnet_examples import example_corpus
from workbench.encoding.models import default_model_path
from workbench.encoding.pipeline.stream import chunk_bounds
from workbench.encoding.prepare import (
    CHECK_SENTENCES,
    MAX_WORD_CHARS,
    Prepared,
    Preparer,
    WordPieceTable,
    capped_words,
    prepare,
)
from workbench.errors import InputError

#: Words that stress a tokenizer: accents, other scripts, emoji, a special token's text, clitics,
#: numbers, a word the tokenizer maps to nothing (a combining mark alone), a very long word.
ODD = [
    ["Café", "naïve", "Ångström", "über", "façade", "—", "don't", "U.S.A.", "3.14", "1,000"],
    ["東京", "Москва", "αβγ", "🙂", "[MASK]", "\u0301", "a" * 60, "", "x"],
    ["the", "bank", "\u0301", "the", "bank", "supercalifragilisticexpialidocious"],
]


def _sentences(n: int) -> list[list[str]]:
    corpus = [list(s.words) for s in example_corpus().sentences[:n]]
    return corpus + [[w for w in s if w] for s in ODD]


def _same(a: Prepared, b: Prepared) -> None:
    assert len(a.ids) == len(b.ids)
    for x, y in zip(a.ids, b.ids):
        np.testing.assert_array_equal(x, y)
        assert x.dtype == y.dtype == np.int64
    for x, y in zip(a.offsets, b.offsets):
        np.testing.assert_array_equal(x, y)
    assert a.windows == b.windows
    assert a.notes == b.notes


def _both(tok, sentences, window_tokens=510, stride=None) -> tuple[Prepared, Prepared]:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fast = prepare(tok, sentences, window_tokens, stride)
        ref = prepare(tok, sentences, window_tokens, stride, by_word=False)
    return fast, ref


def _trained(model, trainer, pre, normalizer=None, decoder=None) -> PreTrainedTokenizerFast:
    """A real tokenizer of another family, trained here on WordNet's examples."""
    tk = Tokenizer(model)
    tk.pre_tokenizer = pre
    if normalizer is not None:
        tk.normalizer = normalizer
    if decoder is not None:
        tk.decoder = decoder
    text = [" ".join(s.words) for s in example_corpus().sentences[:3000]]
    tk.train_from_iterator(text, trainer)
    return PreTrainedTokenizerFast(tokenizer_object=tk, unk_token="[UNK]")


@pytest.fixture(scope="module")
def minilm_tokenizer():
    return AutoTokenizer.from_pretrained(default_model_path())


def test_by_word_equals_whole_sentences_for_the_packaged_tokenizer(minilm_tokenizer):
    sentences = _sentences(3000)
    fast, ref = _both(minilm_tokenizer, sentences)
    _same(fast, ref)
    assert any("unknown token" in n for n in fast.notes)  # the combining mark alone
    # small windows: long sentences cut into windows, a long word cut, notes in the same order
    fast, ref = _both(minilm_tokenizer, sentences, window_tokens=12, stride=6)
    _same(fast, ref)
    assert any("more subwords than fit" in n for n in fast.notes)
    assert sum(len(w.owned) for w in fast.windows) == sum(map(len, sentences))


@pytest.mark.parametrize(
    "family",
    ["byte-level BPE (RoBERTa, GPT-2)", "Unigram with Metaspace (SentencePiece)", "WordPiece"],
)
def test_by_word_equals_whole_sentences_for_other_tokenizer_families(family):
    if family.startswith("byte"):
        tok = _trained(
            models.BPE(unk_token="[UNK]"),
            trainers.BpeTrainer(vocab_size=2000, special_tokens=["[UNK]"]),
            pre_tokenizers.ByteLevel(add_prefix_space=True),
            decoder=decoders.ByteLevel(),
        )
    elif family.startswith("Unigram"):
        tok = _trained(
            models.Unigram(),
            trainers.UnigramTrainer(vocab_size=2000, special_tokens=["[UNK]"], unk_token="[UNK]"),
            pre_tokenizers.Metaspace(prepend_scheme="first"),
            normalizer=normalizers.NFKC(),
        )
    else:
        tok = _trained(
            models.WordPiece(unk_token="[UNK]"),
            trainers.WordPieceTrainer(vocab_size=2000, special_tokens=["[UNK]"]),
            pre_tokenizers.BertPreTokenizer(),
            normalizer=normalizers.BertNormalizer(lowercase=True),
        )
    sentences = _sentences(2000)
    assert WordPieceTable(tok, tok.unk_token_id, 510).lay_out(sentences) is not None
    _same(*_both(tok, sentences))
    _same(*_both(tok, sentences, window_tokens=10, stride=5))


class _ContextTokenizer:
    """A tokenizer whose words depend on their neighbours (a word's id is shifted by its
    position), which the by-word path must notice on the corpus's first sentences."""

    unk_token_id = 0

    def __init__(self) -> None:
        self.backend_tokenizer = SimpleNamespace(
            truncation=None, padding=None, encode_batch=self._encode
        )

    @staticmethod
    def _encode(batch, is_pretokenized, add_special_tokens):
        assert is_pretokenized and not add_special_tokens
        return [
            SimpleNamespace(
                ids=[10 + len(w) + j for j, w in enumerate(s)], word_ids=list(range(len(s)))
            )
            for s in batch
        ]


def test_a_tokenizer_whose_words_depend_on_context_is_tokenized_by_sentence():
    tok = _ContextTokenizer()
    sentences = [["a", "bb", "ccc"], ["ccc", "a"]] * CHECK_SENTENCES
    assert WordPieceTable(tok, 0, 510).lay_out(sentences) is None
    fast, ref = _both(tok, sentences)
    _same(fast, ref)
    assert fast.ids[1].tolist() == [13, 12]  # "ccc" first, "a" second: in context


def test_a_word_with_no_subword_and_no_unknown_token_is_named(minilm_tokenizer):
    tok = _ContextTokenizer()
    tok.unk_token_id = None
    tok.backend_tokenizer.encode_batch = lambda batch, **_: [
        SimpleNamespace(
            ids=[len(w) for w in s if w != "-"], word_ids=[j for j, w in enumerate(s) if w != "-"]
        )
        for s in batch
    ]
    assert WordPieceTable(tok, None, 510).lay_out([["a", "b"]]) is not None  # context-free
    for by_word in (True, False):
        with pytest.raises(InputError, match=r"Word 1 of sentence 2 \('-'\) maps to no token"):
            prepare(tok, [["a"], ["b", "c"], ["d", "-", "e"]], 510, by_word=by_word)


def test_a_tokenizer_left_truncating_and_padding_by_another_call_still_tokenizes_whole_words(
    minilm_tokenizer, tiny_encoder
):
    sentences = _sentences(200)
    clean = _both(minilm_tokenizer, sentences)[0]
    tok = AutoTokenizer.from_pretrained(default_model_path())
    tok(["a b c"], truncation=True, max_length=8, padding="max_length")  # the state it leaves
    backend = tok.backend_tokenizer
    assert backend.truncation["max_length"] == 8 and backend.padding is not None
    for prep in _both(tok, sentences):
        _same(prep, clean)
    assert backend.truncation["max_length"] == 8 and backend.padding["length"] == 8  # restored
    # the encoder too: a shared tokenizer cut at 8 subwords by someone else changes nothing
    words = ["the", "canoe", "was", "pulled", "up", "on", "the", "bank", "of", "the", "river"]
    before = tiny_encoder.encode([words], progress=False).vectors
    tiny_encoder.tokenizer.backend_tokenizer.enable_truncation(4)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # no word may come out as the unknown token
            after = tiny_encoder.encode([words], progress=False).vectors
    finally:
        tiny_encoder.tokenizer.backend_tokenizer.no_truncation()
    np.testing.assert_array_equal(before, after)


def test_chunk_by_chunk_equals_one_go_and_tokenizes_each_word_once(minilm_tokenizer):
    sentences = _sentences(1500)
    starts = np.cumsum([0] + [len(s) for s in sentences])
    bounds = chunk_bounds(starts, 500)
    assert len(bounds) > 3 and bounds[0][0] == 0 and bounds[-1][1] == len(sentences)
    assert all(a < b for a, b in bounds) and all(x[1] == y[0] for x, y in zip(bounds, bounds[1:]))
    for window_tokens, stride in ((510, None), (12, 6)):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            whole = prepare(minilm_tokenizer, sentences, window_tokens, stride)
        preparer = Preparer(minilm_tokenizer, window_tokens, stride)
        seen: list[str] = []
        real = preparer.table._add

        def counting(words, real=real, seen=seen):
            seen.extend(words)
            return real(words)

        preparer.table._add = counting
        parts = [preparer(sentences[a:b], a) for a, b in bounds]
        assert len(seen) == len(set(seen)) == len({w for s in sentences for w in s})
        ids = [x for p in parts for x in p.ids]
        assert len(ids) == len(whole.ids)
        for x, y in zip(ids, whole.ids):
            np.testing.assert_array_equal(x, y)
        for x, y in zip([x for p in parts for x in p.offsets], whole.offsets):
            np.testing.assert_array_equal(x, y)
        shifted = [
            type(w)(w.sentence + a, w.word_start, w.word_end, w.owned)
            for p, (a, _) in zip(parts, bounds)
            for w in p.windows
        ]
        assert shifted == whole.windows
        # notes name sentences of the whole input
        assert [n for p in parts for n in p.cut] == whole.cut
        assert [w for p in parts for w in p.unknown] == whole.unknown
        np.testing.assert_array_equal(
            np.concatenate([p.word_spans() for p in parts]), whole.word_spans()
        )
    assert chunk_bounds(starts, 0) == [(0, len(sentences))]


def test_word_spans_are_each_words_subword_range_in_its_sentence(minilm_tokenizer):
    prep = prepare(minilm_tokenizer, [["The", "embedding", "works"], ["unbelievably", "so"]], 510)
    spans = prep.word_spans().tolist()
    expected = [[int(o[j]), int(o[j + 1])] for o in prep.offsets for j in range(len(o) - 1)]
    assert spans == expected and spans[1] == [1, 4] and spans[3][0] == 0


def test_a_word_past_the_character_cap_is_read_as_its_first_characters(default_encoder):
    """A word of 20,000 characters is tokenized as its first MAX_WORD_CHARS (its vectors those
    of the cut word, the others unchanged); sentences of ordinary words pass as they are."""
    plain = [["He", "sat", "on", "the", "bank"]]
    assert capped_words(plain) is plain
    huge = "ab" * 10_000
    whole = default_encoder.encode([["a", huge, "bank"]]).vectors
    cut = default_encoder.encode([["a", huge[:MAX_WORD_CHARS], "bank"]]).vectors
    assert np.array_equal(whole, cut)
    assert [len(w) for w in capped_words([["a", huge]])[0]] == [1, MAX_WORD_CHARS]
