"""Batches of windows (workbench.encoding.batching): budget, order, what a batch holds."""

from __future__ import annotations

import numpy as np

from bench.lib.stages import model_inputs
from workbench.encoding.batching import GPU_MIN_FILL, MIN_FILL, BatchBuilder, plan_batches
from workbench.encoding.pipeline.overlap import PipelineConfig
from workbench.encoding.pooling import pooled_order, pooling_plan_flat
from workbench.encoding.prepare import prepare
from workbench.encoding.rows import RowLayout, keep_masks

RNG = np.random.default_rng(1)
SENTENCES = [["word"] * int(n) for n in RNG.integers(1, 60, 80)]


def test_every_window_once_longest_first_under_the_budget():
    lengths = RNG.integers(1, 300, 500)
    batches = plan_batches(lengths, 2048)
    flat = np.concatenate(batches)
    assert sorted(flat.tolist()) == list(range(500))
    widths = [int(lengths[b].max()) for b in batches]  # the budget counts subwords
    assert all(w * len(b) <= 2048 + w for w, b in zip(widths, batches))  # one past at most
    assert all(len(b) == 1 or w * len(b) <= 2048 for w, b in zip(widths, batches))
    assert widths == sorted(widths, reverse=True)


def test_a_larger_min_fill_makes_fewer_fuller_batches_under_the_same_budget():
    lengths = RNG.integers(5, 80, 3000)
    plans = {f: plan_batches(lengths, 8192, min_fill=f) for f in (0.1, 0.25, 0.5)}
    assert [len(p) for p in plans.values()] == sorted(
        (len(p) for p in plans.values()), reverse=True
    )
    assert len(plans[0.5]) < len(plans[0.1])
    for fill, plan in plans.items():
        assert sorted(np.concatenate(plan).tolist()) == list(range(3000))
        sizes = [int(lengths[b].max()) * len(b) for b in plan]
        assert max(sizes) <= 8192
        # a batch closed before the budget was full held at least min_fill of it (the last
        # batch excepted)
        assert all(s >= fill * 8192 - 80 for s in sizes[:-1])
    np.testing.assert_array_equal(
        np.concatenate(plans[0.1]), np.concatenate(plan_batches(lengths, 8192))
    )  # the default


def test_the_devices_defaults_of_the_batch_plan():
    auto = PipelineConfig()
    assert auto.min_fill_on("cpu") == MIN_FILL == 0.1 and auto.stream_on("cpu", 8192) == 0
    assert auto.min_fill_on("cuda:0") == GPU_MIN_FILL == 0.25
    assert auto.stream_on("cuda", 65536) == 16384
    given = PipelineConfig(overlap=True, min_fill=0.5, stream_words=100)
    assert given.min_fill_on("cpu") == 0.5 and given.stream_on("cpu", 8192) == 100
    assert PipelineConfig(stream_words=100).stream_on("cpu", 8192) == 0  # the plain loop


def test_model_inputs_are_the_batches_encode_runs(tiny_encoder):
    batches = list(model_inputs(tiny_encoder, SENTENCES))
    assert sum(ids.shape[0] for ids, _ in batches) == len(SENTENCES)
    assert sum(int(mask.sum()) for _, mask in batches) == sum(len(s) + 2 for s in SENTENCES)
    assert all(ids.dtype == np.int64 and ids.shape == mask.shape for ids, mask in batches)


def _reference(builder: BatchBuilder, prep, row_of, batch):
    """The batch built one window at a time from the prepared input: what build() gathers."""
    sp = builder.specials
    prefix, windows = len(sp.head), [prep.windows[i] for i in batch.tolist()]
    bounds = [
        (int(prep.offsets[w.sentence][w.word_start]), int(prep.offsets[w.sentence][w.word_end]))
        for w in windows
    ]
    width = max(b - a for a, b in bounds) + sp.count
    n_rows = len(windows)
    ids = np.full((n_rows, width), sp.pad, dtype=np.int64)
    mask = np.zeros((n_rows, width), dtype=np.int64)
    ids[:, :prefix] = sp.head
    ids[:, prefix : prefix + len(sp.tail)] = sp.tail
    mask[:, : sp.count] = 1
    starts, ends, rows = [], [], []
    for r, (w, (a, b)) in enumerate(zip(windows, bounds)):
        end = prefix + b - a
        ids[r, prefix:end] = prep.ids[w.sentence][a:b]
        ids[r, end : end + len(sp.tail)] = sp.tail
        mask[r, : end + len(sp.tail)] = 1
        for j in w.owned:
            if row_of[w.sentence][j] >= 0:
                off = prep.offsets[w.sentence]
                starts.append(r * width + prefix + int(off[j]) - a)
                ends.append(r * width + prefix + int(off[j + 1]) - a)
                rows.append(int(row_of[w.sentence][j]))
    return ids, mask, starts, ends, rows, sum(b - a for a, b in bounds)


def test_batches_gathered_at_once_equal_window_by_window(tiny_encoder):
    enc = tiny_encoder
    long = [f"w{i % 37}" for i in range(150)]  # cut into windows: each owns part of its words
    sentences = [*SENTENCES, long, ["solo"], long[:70]]
    keep = [sorted(RNG.choice(len(s), size=max(1, len(s) // 3), replace=False)) for s in sentences]
    for masks in (keep_masks(sentences, None), keep_masks(sentences, keep)):
        prep = prepare(enc.tokenizer, sentences, 40)
        assert len(prep.windows) > len(sentences)  # the long ones are windowed
        layout = RowLayout.build(sentences, masks)
        builder = BatchBuilder(prep, enc.specials, layout.rows, "mean", 512)
        by_window = BatchBuilder(prep, enc.specials, layout.rows, "mean", 512, gather=False)
        seen, owned = [], 0
        for batch in builder.batches():
            hb = builder.build(batch)
            slow = by_window.build(batch)
            np.testing.assert_array_equal(hb.rows, slow.rows)
            np.testing.assert_array_equal(hb.plan.multi_weights, slow.plan.multi_weights)
            ids, mask, starts, ends, rows, n_tokens = _reference(
                builder, prep, layout.row_of, batch
            )
            owned += hb.n_owned
            np.testing.assert_array_equal(hb.ids, ids)
            np.testing.assert_array_equal(hb.mask, mask)
            assert hb.n_tokens == n_tokens and hb.padded == (not mask.all())
            want = pooling_plan_flat(np.array(starts), np.array(ends), "mean")
            np.testing.assert_array_equal(hb.plan.single_positions, want.single_positions)
            np.testing.assert_array_equal(hb.plan.multi_positions, want.multi_positions)
            np.testing.assert_array_equal(hb.rows, np.array(rows)[pooled_order(want)])
            seen.extend(hb.rows.tolist())
        assert sorted(seen) == list(range(layout.n))  # every kept word once
        assert owned == sum(map(len, sentences))  # each word owned by one window
