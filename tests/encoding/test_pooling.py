from __future__ import annotations

import numpy as np
import pytest
import torch

from workbench.encoding.pooling import (
    LayerSpec,
    PoolingIndex,
    PoolingPlan,
    combine_layers,
    pool_words,
    pooled_order,
    pooling_plan_flat,
)
from workbench.errors import InputError


def span_plan(spans: list[list[tuple[int, int]]], seq_len: int, pooling: str) -> PoolingPlan:
    """The plan of per-sequence ``(start, end)`` token spans, the readable form of what the
    encoder passes to :func:`pooling_plan_flat`: sequence ``b``'s token ``t`` sits at
    ``b * seq_len + t`` in the flattened batch."""
    flat = [(b * seq_len + s, b * seq_len + e) for b, seq in enumerate(spans) for s, e in seq]
    bounds = np.asarray(flat, dtype=np.int64).reshape(-1, 2)
    return pooling_plan_flat(bounds[:, 0], bounds[:, 1], pooling)


@pytest.mark.parametrize("pooling", ["first", "mean", "last"])
@pytest.mark.parametrize("dtype", [torch.float32, torch.float16])
def test_pooling_plan_matches_direct_pooling(pooling, dtype):
    rng = np.random.default_rng(0)
    spans = [[(1, 3), (3, 4), (4, 7)], [], [(1, 2), (2, 5)]]
    hidden = [torch.from_numpy(rng.standard_normal((3, 8, 4)).astype(np.float32)) for _ in range(2)]
    plan = span_plan(spans, 8, pooling)
    rows = np.array([6, 0, 3, 1, 4])  # scattered output rows; rows 2 and 5 stay untouched
    dest = torch.full((7, 2, 4), 99.0, dtype=dtype)
    index = PoolingIndex(
        torch.from_numpy(plan.single_positions),
        torch.from_numpy(plan.multi_positions),
        torch.from_numpy(plan.multi_segments),
        torch.from_numpy(plan.multi_weights),
        len(plan.multi_words),
    )
    pooled = pool_words(index, hidden, dtype)
    assert pooled.dtype == dtype and pooled.shape == (5, 2, 4)
    dest.index_copy_(0, torch.from_numpy(rows[pooled_order(plan)]), pooled)
    expected = []
    for b, seq in enumerate(spans):
        for start, end in seq:
            pick = {"first": slice(start, start + 1), "last": slice(end - 1, end)}.get(
                pooling, slice(start, end)
            )
            expected.append([h[b, pick].numpy().mean(0) for h in hidden])
    tol = 1e-6 if dtype == torch.float32 else 2e-3
    np.testing.assert_allclose(dest[rows].float().numpy(), np.array(expected), rtol=tol, atol=tol)
    assert (dest[[2, 5]] == 99).all()


def test_pooling_plan_mean_layout_and_bad_spans():
    plan = span_plan([[(1, 3), (3, 4)]], 5, "mean")
    assert plan.n_words == 2
    assert plan.single_words.tolist() == [1] and plan.single_positions.tolist() == [3]
    assert plan.multi_words.tolist() == [0]
    assert plan.multi_positions.tolist() == [1, 2] and plan.multi_segments.tolist() == [0, 0]
    assert plan.multi_weights.tolist() == [0.5, 0.5]
    last = span_plan([[(1, 3), (3, 4)]], 5, "last")
    assert last.single_positions.tolist() == [2, 3] and len(last.multi_words) == 0
    assert span_plan([[]], 5, "first").n_words == 0
    two = span_plan([[(1, 3), (3, 4)], [(1, 2), (2, 5)]], 6, "mean")
    assert two.single_positions.tolist() == [3, 7]
    assert two.multi_positions.tolist() == [1, 2, 8, 9, 10]
    with pytest.raises(InputError, match="non-empty"):
        span_plan([[(3, 3)]], 5, "mean")
    with pytest.raises(InputError, match="non-empty"):
        pooling_plan_flat(np.array([4]), np.array([4]), "first")


@pytest.mark.parametrize(
    ("text", "layers", "op"),
    [
        ("6", (6,), "mean"),
        ("-1", (-1,), "mean"),
        ("last4-sum", (-4, -3, -2, -1), "sum"),
        ("last4-mean", (-4, -3, -2, -1), "mean"),
        ("3,4,5", (3, 4, 5), "mean"),
        ("sum:3,4", (3, 4), "sum"),
    ],
)
def test_layer_spec_parse(text, layers, op):
    spec = LayerSpec.parse(text)
    assert spec.layers == layers and spec.op == op


def test_layer_spec_errors():
    with pytest.raises(InputError, match="Cannot read layer spec"):
        LayerSpec.parse("lastfour")
    with pytest.raises(InputError, match="does not exist"):
        LayerSpec.parse("9").resolve(7)


def test_combine_layers_matches_numpy():
    rng = np.random.default_rng(0)
    vec = rng.normal(size=(5, 7, 4)).astype(np.float32)
    layers = tuple(range(7))
    np.testing.assert_allclose(combine_layers(vec, layers, "last4-sum", 7), vec[:, 3:].sum(1), 1e-6)
    np.testing.assert_allclose(combine_layers(vec, layers, "-1", 7), vec[:, 6])
    np.testing.assert_allclose(combine_layers(vec, layers, "1,2", 7), vec[:, 1:3].mean(1), 1e-6)
    w = combine_layers(vec, layers, "weighted:0=0.5,6=2", 7)
    np.testing.assert_allclose(w, 0.5 * vec[:, 0] + 2 * vec[:, 6], 1e-6)
    with pytest.raises(InputError, match="not kept"):
        combine_layers(vec[:, :2], (0, 1), "6", 7)
