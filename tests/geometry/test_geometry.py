"""Tests of the geometry measures, the per-layer analysis, its report and the command."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from workbench.cli.main import main
from workbench.corpora.readers import corpus_from_texts
from workbench.corpora.reference import WORDNET_CORPUS_NAME, load_reference_corpus, sample_corpus
from workbench.encoding.cache import encode_cached
from workbench.errors import InputError
from workbench.geometry import measures as g
from workbench.geometry.analysis import GeometryConfig, analyze_layers, split_contexts
from workbench.geometry.corrections import Standardizer, load_correction
from workbench.geometry.pairs import sample_pairs
from workbench.geometry.report import geometry_report, geometry_table
from workbench.reports.tables import UNDEFINED
from workbench.reports.writers import write_report

ROGUE = 7


def _planted(n: int = 3000, dim: int = 48, seed: int = 0) -> np.ndarray:
    """Isotropic noise plus one rogue dimension with a large mean and variance."""
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(n, dim))
    x[:, ROGUE] = rng.normal(loc=25.0, scale=8.0, size=n)
    return x.astype(np.float32)


def _corpus(n_sent: int = 150, per: int = 12, vocab: int = 60, seed: int = 0):
    rng = np.random.default_rng(seed)
    contexts = np.repeat(np.arange(n_sent), per)
    words = [f"w{k}" for k in rng.integers(0, vocab, n_sent * per)]
    return words, contexts


# --------------------------------------------------------------------------- direct numpy


def _cos(a, b):
    return float(a @ b / (np.linalg.norm(a) * np.linalg.norm(b)))


def test_measures_agree_with_direct_computation():
    rng = np.random.default_rng(1)
    x = rng.normal(size=(40, 6)) + 0.5
    types = np.array(list("abcde" * 7 + "fghij"))  # f..j occur once: skipped
    contexts = np.repeat(np.arange(8), 5)
    pairs = sample_pairs(40, 500, contexts=contexts, random_state=3)

    measures = g.measure_all(x, types, contexts, pairs, min_count=5, top_k=2)

    # anisotropy: plain mean of the pair cosines, with its standard error
    cos = np.array([_cos(x[i], x[j]) for i, j in zip(*pairs, strict=True)])
    m = measures.anisotropy
    assert m.value == pytest.approx(cos.mean(), abs=1e-12)
    assert m.sem == pytest.approx(cos.std(ddof=1) / math.sqrt(500), abs=1e-12)
    assert all(contexts[i] != contexts[j] for i, j in zip(*pairs, strict=True))

    # self-similarity: mean over types of the mean off-diagonal cosine
    per_type = []
    for t in np.unique(types):
        rows = x[types == t]
        if len(rows) >= 5:
            sims = [
                _cos(a, b) for ai, a in enumerate(rows) for bi, b in enumerate(rows) if ai != bi
            ]
            per_type.append(np.mean(sims))
    s = measures.self_similarity
    assert s.n == len(per_type) and s.value == pytest.approx(np.mean(per_type), abs=1e-12)

    # intra-sentence similarity: each word against its sentence's mean vector
    per_sent = [
        np.mean([_cos(v, x[contexts == c].mean(axis=0)) for v in x[contexts == c]])
        for c in range(8)
    ]
    assert measures.intra_similarity.value == pytest.approx(np.mean(per_sent))

    # MEV: first singular value's share of the uncentered occurrence matrix
    mev = []
    for t in np.unique(types):
        rows = x[types == t]
        if len(rows) >= 5:
            sv = np.linalg.svd(rows, compute_uv=False)
            mev.append(sv[0] ** 2 / (sv**2).sum())
    assert measures.mev.value == pytest.approx(np.mean(mev))

    # rogue contributions: mean over pairs of u_k v_k / (|u||v|), summing to the anisotropy
    u = x[pairs[0]] / np.linalg.norm(x[pairs[0]], axis=1, keepdims=True)
    v = x[pairs[1]] / np.linalg.norm(x[pairs[1]], axis=1, keepdims=True)
    r = measures.rogue
    np.testing.assert_allclose(r.contributions, (u * v).mean(axis=0), atol=1e-12)
    assert r.expected_cosine == pytest.approx(m.value, abs=1e-12)
    top = np.argsort(-np.abs(r.contributions))[:2]
    np.testing.assert_array_equal(r.top, top)
    keep = np.setdiff1d(np.arange(6), top)
    reduced = [_cos(x[i][keep], x[j][keep]) for i, j in zip(*pairs, strict=True)]
    assert r.informativity == pytest.approx(np.corrcoef(cos, reduced)[0, 1] ** 2, abs=1e-9)


def test_mev_batched_equals_per_group():
    rng = np.random.default_rng(2)
    x = rng.normal(size=(300, 5)) + 1.0  # groups bigger than dim take the other path
    types = rng.integers(0, 4, 300)
    expected = []
    for t in range(4):
        sv = np.linalg.svd(x[types == t], compute_uv=False)
        expected.append(sv[0] ** 2 / (sv**2).sum())
    contexts = np.arange(300)
    pairs = sample_pairs(300, 100, contexts=contexts, random_state=0)
    mev = g.measure_all(x, types, contexts, pairs).mev
    assert mev.value == pytest.approx(np.mean(expected))


# --------------------------------------------------------------------------- planted structure


def test_planted_rogue_dimension_found_and_removed_by_standardization():
    x = _planted()
    contexts = np.repeat(np.arange(300), 10)
    pairs = sample_pairs(len(x), 20_000, contexts=contexts, random_state=0)
    types = np.arange(len(x))
    before = g.measure_all(x, types, contexts, pairs, top_k=3)
    raw = before.rogue
    assert raw.top[0] == ROGUE
    assert raw.share[0] > 0.9
    assert before.anisotropy.value > 0.7
    after = g.measure_all(Standardizer().fit_transform(x), types, contexts, pairs, top_k=3)
    fixed = after.rogue
    share = np.abs(fixed.contributions[ROGUE]) / np.abs(fixed.contributions).sum()
    assert share < 0.05
    assert abs(after.anisotropy.value) < 0.02
    # without the rogue dimension the raw cosine says little about the full one
    assert raw.informativity < 0.2 < 0.8 < fixed.informativity


def test_self_similarity_tracks_planted_word_identity():
    rng = np.random.default_rng(0)
    centers = rng.normal(size=(30, 32))
    types = rng.integers(0, 30, 1500)
    tight = centers[types] + 0.1 * rng.normal(size=(1500, 32))
    loose = centers[types] + 3.0 * rng.normal(size=(1500, 32))
    contexts = np.arange(1500) // 10
    pairs = sample_pairs(1500, 1000, contexts=contexts, random_state=0)
    tight_measures = g.measure_all(tight, types, contexts, pairs)
    assert tight_measures.self_similarity.value > 0.95
    assert g.measure_all(loose, types, contexts, pairs).self_similarity.value < 0.3
    assert tight_measures.mev.value > 0.95


# --------------------------------------------------------------------------- bad input


@pytest.mark.parametrize(
    "bad, message",
    [
        (np.ones((1, 4)), "at least two"),
        (np.ones(4), "shape"),
        (np.array([[1.0, 2.0], [np.nan, 1.0], [1.0, 1.0]]), "row 1 contains NaN"),
        (np.array([[1.0, 2.0], [1.0, np.inf]]), "row 1 contains NaN or inf"),
        (np.array([[1.0, 2.0], [0.0, 0.0]]), "row 1 is all zeros"),
    ],
)
def test_bad_vectors_raise_clear_errors(bad, message):
    rows = np.arange(len(bad))
    with pytest.raises(InputError, match=message):
        g.measure_all(bad, rows, rows, (rows, rows[::-1]))


def test_words_seen_once_make_self_similarity_undefined():
    x = np.random.default_rng(0).normal(size=(20, 4))
    once = [f"w{i}" for i in range(20)]
    contexts = np.arange(20)  # one-word sentences
    m = g.measure_all(x, once, contexts, sample_pairs(20, 50, contexts=contexts))
    s = m.self_similarity
    assert math.isnan(s.value) and s.n == 0 and "undefined" in s.note
    assert math.isnan(m.mev.value)
    assert math.isnan(m.self_similarity_adjusted.value) and not math.isnan(m.anisotropy.value)
    assert math.isnan(m.intra_similarity.value)


def test_pairs_need_two_contexts():
    with pytest.raises(InputError, match="one context"):
        sample_pairs(10, 5, contexts=np.zeros(10))
    with pytest.raises(InputError, match="types must have one entry per vector"):
        g.measure_all(np.ones((3, 2)) + np.eye(3, 2), ["a", "b"], [0, 1, 2], sample_pairs(3, 5))


def test_sample_pairs_is_seeded():
    a = sample_pairs(100, 50, random_state=4)
    b = sample_pairs(100, 50, random_state=4)
    c = sample_pairs(100, 50, random_state=5)
    assert all(np.array_equal(p, q) for p, q in zip(a, b, strict=True))
    assert not np.array_equal(a[0], c[0])
    assert np.all(a[0] != a[1])


# --------------------------------------------------------------------------- per-layer analysis


def test_analyze_layers_with_corrections_and_report(tmp_path):
    words, contexts = _corpus()
    n = len(words)
    x = np.stack([_planted(n, seed=s) for s in range(3)], axis=1)  # (n, 3, 48)
    x[:, 0, :] = np.random.default_rng(9).normal(size=(n, 48))  # an isotropic layer
    cfg = GeometryConfig(n_pairs=5000, min_count=5)
    result = analyze_layers(x, words, contexts, layers=(0, 3, 6), config=cfg)
    assert result.n_fit_words + result.n_measure_words == n
    for layer in (0, 3, 6):
        for c in cfg.corrections:
            assert abs(result.get(c, layer).anisotropy.value) < 0.02 or c == "none"
    assert result.get("none", 6).anisotropy.value > 0.7
    assert result.get("none", 6).rogue.top[0] == ROGUE
    assert result.get("none", 0).anisotropy.value < 0.05

    table = geometry_table(result)
    assert [row[0] for row in table.rows] == [0, 3, 6]
    assert f"d{ROGUE} (" in table.rows[2][-2]
    report = geometry_report(result, {"model": "synthetic"}, rogue_layer=6, command="cmd")
    paths = write_report(report, tmp_path, stem="geo")
    data = json.loads(paths["json"].read_text())
    assert data["config"]["geometry"]["n_pairs"] == 5000
    assert len(data["data"]["layers"]) == 3 * len(cfg.corrections)
    assert data["data"]["layers"][0]["rogue"]["contributions"].__len__() == 48
    html = paths["html"].read_text()
    assert html.count('class="plotly-graph-div"') == 3


def test_analysis_with_words_seen_once_reports_undefined():
    n = 200
    x = np.random.default_rng(0).normal(size=(n, 2, 8)).astype(np.float32) + 1
    words = [f"w{i}" for i in range(n)]
    contexts = np.repeat(np.arange(20), 10)
    result = analyze_layers(x, words, contexts, config=GeometryConfig(n_pairs=500))
    md = geometry_table(result).to_markdown()
    assert UNDEFINED in md
    assert math.isnan(result.get("zscore", 1).self_similarity.value)


def test_split_contexts_is_disjoint_and_seeded():
    contexts = np.repeat(np.arange(50), 3)
    fit, meas = split_contexts(contexts, GeometryConfig())
    assert not set(contexts[fit]) & set(contexts[meas])
    assert abs(fit.sum() - meas.sum()) <= 3
    fit2, _ = split_contexts(contexts, GeometryConfig())
    assert np.array_equal(fit, fit2)
    same_fit, same_meas = split_contexts(contexts, GeometryConfig(fit_on="same"))
    assert same_fit.all() and same_meas.all()
    with pytest.raises(InputError, match="unknown corrections"):
        analyze_layers(np.ones((4, 1, 2)), list("abcd"), [0, 1, 2, 3],
                       config=GeometryConfig(corrections=("zcore",)))  # fmt: skip


# --------------------------------------------------------------------------- command


def test_geometry_command_on_text_file(tmp_path, tiny_model_dir, capsys):
    text = tmp_path / "corpus.txt"
    lines = [f"the cat number {i % 7} sat on the mat near the bank ." for i in range(40)]
    text.write_text("\n".join(lines) + "\n")
    out = tmp_path / "out"
    argv = ["geometry", "--model", str(tiny_model_dir), "--device", "cpu", "--corpus", str(text),
            "--sample", "30", "--n-pairs", "2000", "--out", str(out),
            "--save-standardizer", str(tmp_path / "z")]  # fmt: skip
    assert main(argv) == 0
    printed = capsys.readouterr().out
    assert "| layer | anisotropy raw |" in printed
    data = json.loads((out / "geometry.json").read_text())
    assert data["config"]["sample"]["n_sentences"] == 30
    assert data["config"]["layers"] == [0, 1, 2]
    assert "--sample 30" in data["command"]
    z = load_correction(tmp_path / "z")
    assert z.provenance_.layers == (0, 1, 2) and z.provenance_.corpus_hash
    for row in data["sections"][0]["tables"][0]["rows"]:
        assert abs(row["anisotropy standardized"]) < 0.05


def test_geometry_command_bad_corpus(capsys):
    assert main(["geometry", "--corpus", "/no/such/file.txt"]) == 2
    assert "unknown corpus" in capsys.readouterr().err


@pytest.mark.slow
def test_default_model_on_semcor_sample(default_encoder, wsd_data, tmp_cache):
    """Acceptance on real data: standardized anisotropy near 0 on every layer of the model."""
    sample = sample_corpus(load_reference_corpus("semcor", wsd_data), 120, random_state=0)
    emb = encode_cached(default_encoder, sample.words)
    cfg = GeometryConfig(n_pairs=5000, corrections=("none", "zscore"))
    result = analyze_layers(emb.vectors, emb.words, emb.sentence_index, emb.layers, cfg)
    assert result.layers == tuple(range(default_encoder.n_layers + 1))
    for layer in result.layers:
        assert abs(result.get("zscore", layer).anisotropy.value) < 0.03
    raw = [result.get("none", layer).anisotropy.value for layer in result.layers]
    assert max(raw) > 0.1  # the raw model is anisotropic somewhere


# --------------------------------------------------------------------------- reference corpora


def test_sample_corpus_units_and_seed(tmp_path):
    corpus = corpus_from_texts([" ".join(["w"] * (1 + i % 5)) for i in range(100)], "toy")
    a = sample_corpus(corpus, 10, random_state=1)
    assert a.n_sentences == 10 and list(a.indices) == sorted(a.indices)
    assert a.sha256 == sample_corpus(corpus, 10, random_state=1).sha256
    assert a.sha256 != sample_corpus(corpus, 10, random_state=2).sha256
    w = sample_corpus(corpus, 50, unit="words", random_state=1)
    assert 50 <= w.n_words < 55  # whole sentences until at least 50 words
    assert sample_corpus(corpus).n_sentences == 100
    with pytest.raises(InputError, match="at least 1"):
        sample_corpus(corpus, 0)
    text = tmp_path / "c.txt"
    text.write_text("one two\n\nthree four five\n")
    assert load_reference_corpus(str(text)).n_sentences == 2


@pytest.mark.slow
def test_wordnet_reference_corpus():
    corpus = load_reference_corpus("wordnet")
    assert corpus.name == WORDNET_CORPUS_NAME
    assert corpus.n_sentences > 160_000  # 117,659 glosses + their example sentences
    assert corpus.sentences[1].words == ("able", "to", "swim")
