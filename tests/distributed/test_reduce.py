"""What is built from shards equals what is built in memory: the standardizer (partial fits
merged over shards, here and as Ray tasks), the sense index, the sampled per-layer geometry."""

from __future__ import annotations

import numpy as np
import pytest

from workbench.corpora.readers import read_xml
from workbench.distributed.reader import ShardedEmbeddings
from workbench.distributed.reduce import fit_sense_index, fit_standardizer, sample_geometry
from workbench.errors import InputError
from workbench.geometry.analysis import GeometryConfig, analyze_layers
from workbench.geometry.corrections import Moments, Standardizer
from workbench.wsd.config import EncoderInfo, SenseIndexConfig
from workbench.wsd.predict import encode_instances, train_index


@pytest.fixture(scope="module")
def shards(semcor_job) -> ShardedEmbeddings:
    """semcor200 in 4 shards (the job of conftest, which test_jobs checks against encode)."""
    return ShardedEmbeddings(semcor_job.directory)


def test_partial_fit_merges_exactly():
    rng = np.random.default_rng(0)
    x = rng.normal(3.0, 2.0, size=(501, 4, 8)).astype(np.float32)
    whole = Standardizer().fit(x)
    parts = Standardizer()
    for chunk in np.array_split(x, [1, 2, 40, 41, 300]):  # one-row batches too
        parts.partial_fit(chunk)
    for name in ("mean_", "var_", "scale_"):
        np.testing.assert_allclose(getattr(parts, name), getattr(whole, name), rtol=1e-12)
    assert parts.n_samples_seen_ == 501 and parts.n_layers_ == 4
    merged = Moments.of(x[:100]).merge(Moments.of(x[100:]))
    np.testing.assert_allclose(merged.var, Moments.of(x).var, rtol=1e-12)


@pytest.mark.parametrize("engine", ["local", "ray"])
def test_standardizer_from_shards_equals_the_in_memory_fit(shards, engine):
    emb = shards.to_embeddings()
    whole = Standardizer().fit_embeddings(emb)
    z = fit_standardizer(shards, engine=engine)
    assert z.n_samples_seen_ == len(emb) == len(shards)
    for name in ("mean_", "var_", "scale_"):
        np.testing.assert_allclose(getattr(z, name), getattr(whole, name), atol=1e-6)
    assert z.provenance_.layers == (0, 1, 2) and z.provenance_.fingerprint == shards.fingerprint
    np.testing.assert_allclose(z.transform_embeddings(emb), whole.transform_embeddings(emb),
                               atol=1e-5)  # fmt: skip
    one = fit_standardizer(shards, layers=[2])
    np.testing.assert_allclose(one.mean_[0], whole.mean_[2], atol=1e-6)
    with pytest.raises(InputError, match="not in the shards"):
        fit_standardizer(shards, layers=[7])


@pytest.mark.parametrize("correction", ["none", "zscore"])
def test_sense_index_from_shards_equals_the_in_memory_one(
    shards, tiny_encoder, semcor200, correction
):
    config = SenseIndexConfig(layers="last2-sum" if correction == "none" else "2",
                              correction=correction)  # fmt: skip
    training = encode_instances(tiny_encoder, read_xml(semcor200), cache=False)
    memory = train_index(training, config, EncoderInfo.of(tiny_encoder))
    sharded = fit_sense_index(shards, config, engine="ray" if correction == "none" else "local")
    assert sharded.keys_ == memory.keys_ and len(memory) > 100
    np.testing.assert_array_equal(sharded.counts_, memory.counts_)
    np.testing.assert_allclose(sharded.vectors_, memory.vectors_, atol=1e-5)
    if correction == "zscore":
        np.testing.assert_allclose(sharded.correction_.mean_, memory.correction_.mean_,
                                   atol=1e-6)  # fmt: skip
    assert sharded.encoder_ == memory.encoder_
    with pytest.raises(InputError, match="'none' or 'zscore'"):
        fit_sense_index(shards, SenseIndexConfig(layers="2", correction="whiten"))


def test_geometry_of_all_shards_equals_the_in_memory_analysis(shards):
    config = GeometryConfig(n_pairs=2000, corrections=("none", "zscore"))
    sampled = sample_geometry(shards, n_shards=None, max_rows=10**9, config=config)
    emb = shards.to_embeddings()
    memory = analyze_layers(emb.vectors, emb.words, emb.sentence_index, emb.layers, config)
    for layer in emb.layers:
        for correction in ("none", "zscore"):
            a, b = sampled.get(correction, layer), memory.get(correction, layer)
            assert a.anisotropy.value == pytest.approx(b.anisotropy.value, abs=1e-9)
    small = sample_geometry(shards, n_shards=2, max_rows=1500, config=config)
    assert small.n_fit_words + small.n_measure_words <= 1500
    assert 0 < small.get("none", 2).anisotropy.value <= 1
