"""Batches of windows (workbench.encoding.batching): budget, order, bucketed shapes."""

from __future__ import annotations

import numpy as np
import pytest

from workbench import Encoder
from workbench.encoding.batching import BUCKET_WIDTH, BatchBuilder, bucket_width, plan_batches
from workbench.encoding.pipeline import PipelineConfig
from workbench.encoding.prepare import prepare
from workbench.encoding.rows import RowLayout, keep_masks

RNG = np.random.default_rng(1)
SENTENCES = [["word"] * int(n) for n in RNG.integers(1, 60, 80)]


@pytest.mark.parametrize("shapes", ["exact", "bucketed"])
def test_every_window_once_longest_first_under_the_budget(shapes):
    lengths = RNG.integers(1, 300, 500)
    batches = plan_batches(lengths, 2048, shapes, specials=2, max_width=512)
    flat = np.concatenate(batches)
    assert sorted(flat.tolist()) == list(range(500))
    widths = [int(lengths[b].max()) for b in batches]  # exact: the budget counts subwords
    if shapes == "bucketed":  # bucketed: padded widths, specials included
        widths = [bucket_width(w + 2, 512) for w in widths]
        assert all(len({bucket_width(int(x) + 2, 512) for x in lengths[b]}) == 1 for b in batches)
    assert all(w * len(b) <= 2048 + w for w, b in zip(widths, batches))  # one past at most
    assert all(len(b) == 1 or w * len(b) <= 2048 for w, b in zip(widths, batches))
    assert widths == sorted(widths, reverse=True)


def test_bucketed_inputs_have_few_shapes_and_the_same_vectors(tiny_model_dir, tiny_encoder):
    enc = tiny_encoder
    prep = prepare(enc.tokenizer, SENTENCES, enc.window_tokens)
    layout = RowLayout.build(SENTENCES, keep_masks(SENTENCES, None))
    builder = BatchBuilder(prep, enc.specials, layout.row_of, "mean", "bucketed", 512, 64)
    shapes = set()
    for batch in builder.batches():
        ids, mask, windows, _ = builder.inputs(batch)
        assert ids.shape[1] % BUCKET_WIDTH == 0 or ids.shape[1] == 64
        assert ids.shape[0] == 512 // ids.shape[1] >= len(windows)
        assert (mask[len(windows) :].sum(1) == enc.specials.count).all()  # dummy rows
        shapes.add(ids.shape)
    assert len(shapes) <= 2  # widths 32 and 64 on this model
    bucketed = Encoder(
        model=str(tiny_model_dir), device="cpu", pipeline=PipelineConfig(shapes="bucketed")
    )
    assert bucketed.shapes == "bucketed"
    np.testing.assert_allclose(
        bucketed.encode(SENTENCES).vectors, enc.encode(SENTENCES).vectors, atol=1e-5
    )


def test_model_inputs_are_the_batches_encode_runs(tiny_encoder):
    batches = list(tiny_encoder.model_inputs(SENTENCES))
    assert sum(ids.shape[0] for ids, _ in batches) == len(SENTENCES)
    assert sum(int(mask.sum()) for _, mask in batches) == sum(len(s) + 2 for s in SENTENCES)
    assert all(ids.dtype == np.int64 and ids.shape == mask.shape for ids, mask in batches)
