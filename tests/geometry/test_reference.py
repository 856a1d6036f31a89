"""A correction fitted on a reference corpus by name: the one library path the command line, the
Senses views and the app share (the app hands over the sample's vectors it holds)."""

from __future__ import annotations

import numpy as np

from workbench.corpora.occurrences import demo_sentences
from workbench.corpora.reference import load_reference_corpus, sample_corpus
from workbench.encoding.cache import encode_cached
from workbench.geometry.reference import fit_correction, fit_reference


def test_the_demo_texts_are_a_reference_corpus_and_a_correction_fits_on_them(
    tiny_encoder, tmp_cache
):
    demo = load_reference_corpus("demo")
    assert [list(s.words) for s in demo.sentences] == demo_sentences()
    by_name = fit_correction(tiny_encoder, "zscore", "demo")
    assert by_name is not None and fit_correction(tiny_encoder, "none", "demo") is None
    sample = sample_corpus(demo, 500, random_state=0)
    assert sample.n_sentences == len(demo.sentences)  # 170: whole at the default size
    held = encode_cached(tiny_encoder, sample.words)
    from_held = fit_reference(tiny_encoder, "zscore", sample, emb=held)
    np.testing.assert_array_equal(by_name.mean_, from_held.mean_)
    np.testing.assert_array_equal(by_name.scale_, from_held.scale_)
    assert by_name.provenance_ == from_held.provenance_
    assert by_name.provenance_.corpus_hash == sample.sha256
    assert by_name.provenance_.fingerprint == tiny_encoder.fingerprint
