"""Encoder: shapes and alignment on a tiny random BERT; behaviour on the real packaged model."""

from __future__ import annotations

import numpy as np
import pytest

from workbench import Encoder, LayerwiseEmbeddings
from workbench.errors import InputError, MismatchError, ModelLoadError

SENTS = [
    ["The", "bank", "raised", "interest", "rates", "."],
    ["Unbelievably", ",", "they", "sat", "on", "the", "riverbank", "."],
    ["Hi"],
]


def test_shapes_order_and_alignment(tiny_encoder):
    emb = tiny_encoder.encode(SENTS)
    n = sum(len(s) for s in SENTS)
    assert emb.vectors.shape == (n, tiny_encoder.n_layers + 1, tiny_encoder.dim) == (n, 3, 32)
    assert emb.vectors.dtype == np.float32
    assert emb.words == [w for s in SENTS for w in s]
    assert emb.sentence_index.tolist() == [i for i, s in enumerate(SENTS) for _ in s]
    assert emb.word_index.tolist() == [j for s in SENTS for j in range(len(s))]
    # spans are contiguous per sentence and a word that splits has several subwords
    rows = np.flatnonzero(emb.sentence_index == 1)
    assert emb.spans[rows[0], 0] == 0
    assert (emb.spans[rows[1:], 0] == emb.spans[rows[:-1], 1]).all()
    word = tiny_encoder.tokenizer.tokenize("Unbelievably")
    assert emb.spans[rows[0], 1] == len(word) > 1


def test_pooling_first_mean_last_relation(tiny_encoder):
    """With a word of several subwords, first/last/mean differ, and mean lies between them."""
    sent = [["Unbelievably", "good"]]
    first = tiny_encoder.encode(sent, pooling="first").vectors[0]
    last = tiny_encoder.encode(sent, pooling="last").vectors[0]
    mean = tiny_encoder.encode(sent, pooling="mean").vectors[0]
    assert not np.allclose(first, last)
    out = tiny_encoder.model(
        **tiny_encoder.tokenizer(sent, is_split_into_words=True, return_tensors="pt"),
        output_hidden_states=True,
    )
    hs = np.stack([h[0].detach().numpy() for h in out.hidden_states], axis=0)  # (L, T, D)
    n = len(tiny_encoder.tokenizer.tokenize("Unbelievably"))
    np.testing.assert_allclose(first, hs[:, 1], atol=1e-5)
    np.testing.assert_allclose(last, hs[:, n], atol=1e-5)
    np.testing.assert_allclose(mean, hs[:, 1 : n + 1].mean(1), atol=1e-5)


def test_keep_layers_and_select(tiny_encoder):
    full = tiny_encoder.encode(SENTS)
    part = tiny_encoder.encode(SENTS, layers=[-1, 0], keep=[[1], [], [0]])
    assert part.layers == (0, 2)
    assert part.words == ["bank", "Hi"]
    np.testing.assert_allclose(part.vectors[0], full.vectors[1][[0, 2]], atol=1e-6)
    np.testing.assert_allclose(part.select("-1"), full.vectors[[1, 14], 2], atol=1e-6)
    with pytest.raises(InputError, match="not kept"):
        part.select("1")


def test_windows_on_tiny_model(tiny_encoder):
    """max_length 64: a 300-word sentence is encoded in windows, every word gets a vector."""
    words = [f"w{i % 37}" for i in range(300)]
    emb = tiny_encoder.encode([words], layers=[-1])
    assert emb.vectors.shape == (300, 1, 32)
    assert np.isfinite(emb.vectors).all()


def test_store_float16_and_memmap(tiny_encoder, tmp_path):
    emb = tiny_encoder.encode(SENTS, out=tmp_path / "v.npy", store_dtype="float16")
    assert emb.vectors.dtype == np.float16 and isinstance(emb.vectors, np.memmap)
    ref = tiny_encoder.encode(SENTS)
    np.testing.assert_allclose(emb.vectors, ref.vectors, atol=2e-2, rtol=1e-2)


def test_encoding_is_in_eval_mode_even_after_the_model_was_set_to_train(tiny_encoder):
    # a wrapper sharing the model (e.g. an untrained bi-encoder around it) may leave it in
    # training mode; dropout must not reach the vectors
    words = [["the", "bank", "of", "the", "river"], ["a", "cell", "divided"]]
    before = tiny_encoder.encode(words).select("-1")
    tiny_encoder.model.train()
    after = tiny_encoder.encode(words).select("-1")
    np.testing.assert_array_equal(before, after)
    assert not tiny_encoder.model.training


def test_progress_callback(tiny_encoder):
    seen = []
    tiny_encoder.encode(SENTS * 20, progress=seen.append)
    assert seen and seen[-1] == pytest.approx(1.0) and seen == sorted(seen)


def test_save_load_roundtrip(tiny_encoder, tmp_path):
    emb = tiny_encoder.encode(SENTS)
    path = emb.save(tmp_path / "e.npz")
    assert path.with_suffix(".tsv").read_text().splitlines()[2].split("\t")[3] == "bank"
    back = LayerwiseEmbeddings.load(path, expect_fingerprint=tiny_encoder.fingerprint)
    np.testing.assert_array_equal(back.vectors, emb.vectors)
    assert back.words == emb.words and back.layers == emb.layers
    with pytest.raises(MismatchError, match="not by the model in use"):
        LayerwiseEmbeddings.load(path, expect_fingerprint="another")


@pytest.mark.parametrize(
    ("bad", "needle"),
    [([], "empty"), ([["ok"], ["", "x"]], "Word 0 of sentence 1"), ([["a", 1.5]], "float")],
)
def test_bad_input_is_named(tiny_encoder, bad, needle):
    with pytest.raises(InputError, match=needle):
        tiny_encoder.encode(bad)


def test_unmappable_words_are_encoded_and_reported(tiny_encoder):
    with pytest.warns(UserWarning, match="unknown token"):
        emb = tiny_encoder.encode([["a", "\u200b", "b"]])  # zero-width space: no subword
    assert emb.vectors.shape[0] == 3 and "unknown token" in emb.notes[0]


def test_unknown_model_error_names_it():
    with pytest.raises(ModelLoadError, match="no-such-org/no-such-model-xyz"):
        Encoder(model="no-such-org/no-such-model-xyz", device="cpu")
    with pytest.raises(ModelLoadError, match="looks like a local path"):
        Encoder(model="./not/a/dir", device="cpu")


# ---------------------------------------------------------------- the real packaged model
def test_default_model_facts(default_encoder):
    facts = default_encoder.describe()
    assert facts["layers"] == 6 and facts["dim"] == 384 and facts["architecture"] == "BertModel"


def test_same_word_two_contexts_differ(default_encoder):
    emb = default_encoder.encode(["He sat on the bank of the river.", "She robbed the bank."])
    banks = [i for i, w in enumerate(emb.words) if w == "bank"]
    top = emb.layer(6)
    cos = (
        top[banks[0]]
        @ top[banks[1]]
        / np.linalg.norm(top[banks[0]])
        / np.linalg.norm(top[banks[1]])
    )
    assert cos < 0.95
    # the embedding layer (0) is nearly context-free: position embeddings only differ
    bottom = emb.layer(0)
    cos0 = bottom[banks[0]] @ bottom[banks[1]]
    cos0 /= np.linalg.norm(bottom[banks[0]]) * np.linalg.norm(bottom[banks[1]])
    assert cos0 > cos


def test_batch_invariance(default_encoder):
    """A sentence alone and inside a batch of different lengths gives the same vectors."""
    target = "The committee postponed the decision until further notice."
    others = [
        "Short one.",
        " ".join(["A much longer sentence that goes on"] * 8),
        "Mid length text here.",
    ]
    alone = default_encoder.encode([target]).vectors
    emb = default_encoder.encode([*others[:2], target, others[2]])
    together = emb.vectors[emb.sentence_index == 2]
    np.testing.assert_allclose(alone, together, atol=1e-4)


def test_long_text_windows_match_direct_encoding(default_encoder):
    """2,000 words: words far from window edges equal a direct encoding of their window."""
    rng = np.random.default_rng(0)
    vocab = "the of river bank money sat water deposit loan fish boat walked quickly".split()
    words = [vocab[i] for i in rng.integers(0, len(vocab), 2000)]
    emb = default_encoder.encode([words], layers=[0, 3, 6])
    assert emb.vectors.shape == (2000, 3, 384)
    # every word here is one subword, so windows hold 510 words and start every 255 words
    window = words[255 : 255 + 510]
    direct = default_encoder.encode([window], layers=[0, 3, 6]).vectors
    mid = slice(255 + 128, 255 + 383)  # owned by this window, far from its edges
    np.testing.assert_allclose(emb.vectors[mid], direct[128:383], atol=1e-4)


def test_bad_items_do_not_lose_work(default_encoder):
    """Validation happens before any encoding: a bad last item fails fast, nothing is half-done."""
    with pytest.raises(InputError, match="Sentence 2"):
        default_encoder.encode(["fine", "also fine", "   "])
    ok = default_encoder.encode(["fine", "also fine"])
    assert ok.vectors.shape[0] == 3


def test_emoji_control_and_scripts(default_encoder):
    emb = default_encoder.encode(["Привет мир 🙂 naïve 東京 \x07 café"])
    assert np.isfinite(emb.vectors).all() and len(emb.words) == 7
