"""Tests of the Standardizer and the other corrections (center, abtt, whiten, none)."""

from __future__ import annotations

import json
from types import SimpleNamespace
from typing import get_args

import numpy as np
import pytest
from sklearn.base import clone

from workbench.errors import DataError, InputError, MismatchError
from workbench.geometry.correction import Provenance
from workbench.geometry.corrections import (
    CORRECTION_LABELS,
    CORRECTIONS,
    AllButTheTop,
    CorrectionName,
    MeanCenterer,
    Standardizer,
    Whitener,
    load_correction,
    make_correction,
)


def _data(n: int = 2000, layers: int = 3, dim: int = 24, seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(n, layers, dim)) @ rng.normal(size=(dim, dim))  # correlated dims
    x += rng.normal(scale=5.0, size=(layers, dim))  # a different mean per layer
    x[:, :, 3] = x[:, :, 3] * 20 + 100  # one huge dimension
    return x.astype(np.float32)


def _emb(x: np.ndarray, fingerprint: str = "fp-a", pooling: str = "mean", layers=None):
    return SimpleNamespace(
        vectors=x, layers=tuple(layers or range(x.shape[1])), model_name="m",
        fingerprint=fingerprint, pooling=pooling, n_sentences=10,
    )  # fmt: skip


def test_fit_transform_gives_mean_0_std_1_per_layer_and_dimension():
    x = _data()
    z = Standardizer()
    out = z.fit_transform(x)
    assert z.fit(x) is z  # fit returns self
    assert out.shape == x.shape and out.dtype == np.float32
    assert z.mean_.shape == (3, 24) and z.scale_.shape == (3, 24)
    np.testing.assert_allclose(out.mean(axis=0, dtype=np.float64), 0, atol=1e-5)
    np.testing.assert_allclose(out.std(axis=0, dtype=np.float64), 1, atol=1e-5)


def test_textbook_formula_population_std():
    x = _data(layers=1)[:, 0, :].astype(np.float64)
    z = Standardizer().fit(x)
    mu = x.sum(axis=0) / len(x)
    sigma = np.sqrt(((x - mu) ** 2).sum(axis=0) / len(x))  # ddof = 0
    np.testing.assert_allclose(z.mean_, mu, rtol=1e-12)
    np.testing.assert_allclose(z.scale_, sigma, rtol=1e-10)
    np.testing.assert_allclose(z.transform(x[:5]), (x[:5] - mu) / sigma, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("policy, expected", [("center", 1.5), ("zero", 0.0)])
def test_zero_variance_dimension(policy, expected):
    x = np.random.default_rng(0).normal(size=(50, 4))
    x[:, 2] = 3.25  # constant on the reference corpus
    z = Standardizer(zero_variance=policy).fit(x)
    assert z.zero_variance_.tolist() == [False, False, True, False]
    assert z.scale_[2] == 1.0
    out = z.transform(np.full((2, 4), 4.75))
    assert np.all(out[:, 2] == expected)  # center: x - mu = 1.5; zero: 0
    assert np.isfinite(z.transform(x)).all()
    with pytest.raises(InputError, match="sigma = 0"):
        Standardizer(zero_variance="error").fit(x)


def test_center_abtt_whiten_contracts():
    x = _data(layers=1)[:, 0, :].astype(np.float64)
    c = MeanCenterer().fit(x)
    np.testing.assert_allclose(c.transform(x).mean(axis=0), 0, atol=1e-3)

    abtt = AllButTheTop(n_components=2).fit(x)
    assert abtt.components_.shape == (2, 24)
    out = abtt.transform(x).astype(np.float64)
    # the removed directions are the top principal components: nothing left along them
    xc = x - x.mean(axis=0)
    top = np.linalg.svd(xc, full_matrices=False)[2][:2]
    np.testing.assert_allclose(np.abs(abtt.components_ @ top.T), np.eye(2), atol=1e-6)
    assert np.abs(out @ top.T).max() < 1e-2
    assert AllButTheTop().fit(x).components_.shape == (1, 24)  # round(24 / 100) -> at least 1

    w = Whitener().fit(x)
    cov = np.cov(w.transform(x).astype(np.float64).T, ddof=0)
    np.testing.assert_allclose(cov, np.eye(24), atol=1e-3)
    w8 = Whitener(n_components=8).fit(x)
    assert w8.transform(x).shape == (len(x), 8)
    np.testing.assert_allclose(np.cov(w8.transform(x).T, ddof=0), np.eye(8), atol=1e-3)


def test_whiten_degenerate_directions_become_zero():
    rng = np.random.default_rng(0)
    x = rng.normal(size=(100, 3)) @ rng.normal(size=(3, 6))  # rank 3 in 6 dims
    w = Whitener().fit(x)
    degenerate = w.eigenvalues_ <= w.rtol * w.eigenvalues_[0]  # descending eigenvalues
    assert int(degenerate.sum()) == 3
    out = w.transform(x)
    assert np.isfinite(out).all() and np.abs(out[:, 3:]).max() == 0


def test_make_correction_by_name():
    assert CORRECTIONS == ("zscore", "center", "abtt", "whiten", "none")  # the default first
    assert list(CORRECTION_LABELS) == ["none", "center", "zscore", "abtt", "whiten"]  # raw first
    assert set(CORRECTION_LABELS) == set(CORRECTIONS)  # one label per correction
    assert set(get_args(CorrectionName)) == set(CORRECTIONS)  # the type names them all
    x = _data()
    for name in CORRECTIONS:
        pp = make_correction(name)
        assert pp.name == name and clone(pp).get_params() == pp.get_params()
        assert pp.fit_transform(x).shape == x.shape
    np.testing.assert_array_equal(make_correction("none").fit(x).transform(x), x)
    assert make_correction("abtt", n_components=5).n_components == 5
    with pytest.raises(InputError, match="unknown correction"):
        make_correction("zcore")
    with pytest.raises(InputError, match="bad parameters"):
        make_correction("zscore", n_components=3)


@pytest.mark.parametrize("name", CORRECTIONS)
def test_save_load_round_trip(tmp_path, name):
    x = _data()
    prov = Provenance("m", "fp-a", (0, 1, 2), "", "mean", "semcor sample", "abc123", 10)
    pp = make_correction(name).fit(x, provenance=prov)
    npz, meta = pp.save(tmp_path / "ref" / name)
    assert npz.name == f"{name}.npz" and meta.name == f"{name}.json"
    info = json.loads(meta.read_text())
    assert info["kind"] == name and info["provenance"]["corpus_hash"] == "abc123"
    back = load_correction(meta)  # with or without suffix
    assert type(back) is type(pp) and back.provenance_ == prov
    assert back.get_params() == pp.get_params()
    np.testing.assert_array_equal(back.transform(x[:50]), pp.transform(x[:50]))


def test_load_refuses_tampered_or_missing(tmp_path):
    z = Standardizer().fit(_data())
    npz, _ = z.save(tmp_path / "z")
    with pytest.raises(DataError, match="no saved correction"):
        load_correction(tmp_path / "other")
    np.savez(npz, mean=np.zeros(3))
    with pytest.raises(DataError, match="does not match"):
        load_correction(tmp_path / "z")


@pytest.mark.parametrize(
    "damage",
    ["truncated", "not-json", "binary", "list", "null", "no-params", "bad-params",
     "unknown-param", "no-provenance", "bad-provenance", "n_layers-text", "no-n_features"],
)  # fmt: skip
def test_a_damaged_json_is_a_data_error(tmp_path, damage):
    z = Standardizer().fit(_data())
    _, meta = z.save(tmp_path / "z")
    info = json.loads(meta.read_text())
    text = {
        "truncated": meta.read_text()[:40],
        "not-json": "{kind: zscore}",
        "list": "[]",
        "null": "null",
    }.get(damage)
    if damage == "binary":
        meta.write_bytes(b"\xff\xfe\x00\x01")
    elif text is not None:
        meta.write_text(text)
    else:
        if damage == "no-params":
            info.pop("params")
        elif damage == "bad-params":
            info["params"] = "center"
        elif damage == "unknown-param":
            info["params"] = {"n_components": 3}
        elif damage == "no-provenance":
            info.pop("provenance")
        elif damage == "bad-provenance":
            info["provenance"] = {"layers": ["a"]}
        elif damage == "n_layers-text":
            info["n_layers"] = "three"
        elif damage == "no-n_features":
            info.pop("n_features_in")
        meta.write_text(json.dumps(info))
    with pytest.raises(DataError, match="z.json"):
        load_correction(tmp_path / "z")


def test_mismatched_width_layers_or_model_refused():
    x = _data()
    z = Standardizer().fit(x, provenance=Provenance("m", "fp-a", (0, 1, 2), pooling="mean"))
    with pytest.raises(MismatchError, match="24-dimensional"):
        z.transform(np.ones((4, 3, 32)))
    with pytest.raises(MismatchError, match="fitted on arrays"):
        z.transform(x[:, 0, :])
    with pytest.raises(MismatchError, match="fitted on arrays"):
        z.transform(x[:, :2, :])
    with pytest.raises(MismatchError, match="fingerprint"):
        z.transform(x, provenance=Provenance(fingerprint="fp-b"))
    with pytest.raises(MismatchError, match="fingerprint"):
        z.transform_embeddings(_emb(x, fingerprint="fp-b"))
    with pytest.raises(MismatchError, match="pooling"):
        z.transform_embeddings(_emb(x, pooling="first"))
    with pytest.raises(MismatchError, match="lack"):
        z.transform_embeddings(_emb(x, layers=(0, 1, 5)))
    with pytest.raises(InputError, match="not fitted"):
        Standardizer().transform(x)


def test_fit_and_transform_embeddings_picks_layers():
    x = _data(layers=4)
    full = _emb(x, layers=(0, 2, 4, 6))
    z = Standardizer().fit_embeddings(_emb(x[:, 1:3], layers=(2, 4)), "c", "h")
    assert z.provenance_.layers == (2, 4) and z.provenance_.corpus_hash == "h"
    out = z.transform_embeddings(full)
    np.testing.assert_allclose(out, z.transform(x[:, 1:3]))


@pytest.mark.parametrize(
    "bad, message",
    [
        (np.ones((1, 4)), "at least two"),
        (np.ones(4), "must be"),
        (np.array([[1.0, np.nan], [1.0, 2.0]]), "row 0 contains NaN"),
        (np.array([["a", "b"], ["c", "d"]]), "numeric"),
    ],
)
def test_bad_input(bad, message):
    with pytest.raises(InputError, match=message):
        Standardizer().fit(bad)
    z = Standardizer().fit(np.random.default_rng(0).normal(size=(10, 2)))
    if np.ndim(bad) == 2 and bad.shape[1] == 2 and bad.dtype.kind == "f":
        with pytest.raises(InputError, match=message):
            z.transform(bad)


@pytest.mark.parametrize("name", CORRECTIONS)
@pytest.mark.parametrize("layers", [None, 3])
def test_every_correction_transforms_one_row_as_it_does_in_a_batch(name, layers):
    x = _data(n=300, layers=layers or 1, dim=12)
    x = x[:, 0, :] if layers is None else x
    fitted = make_correction(name).fit(x)
    batch = fitted.transform(x[:5])
    for i in range(5):
        one = fitted.transform(x[i : i + 1])
        assert one.shape == (1, *x.shape[1:]) and one.dtype == np.float32
        np.testing.assert_allclose(one[0], batch[i], rtol=1e-5, atol=1e-5)
    with pytest.raises(InputError, match="need at least one vector, got 0"):
        fitted.transform(x[:0])
    with pytest.raises(InputError, match="need at least two vectors, got 1"):
        make_correction(name).fit(x[:1])  # a fit still needs a spread


def test_a_standardizer_grows_one_row_at_a_time():
    x = _data(n=40, layers=2, dim=6)
    grown = Standardizer()
    for row in x:
        grown.partial_fit(row[None])
    whole = Standardizer().fit(x)
    np.testing.assert_allclose(grown.mean_, whole.mean_, rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(grown.transform(x[:1]), whole.transform(x[:1]), rtol=1e-4, atol=1e-4)
