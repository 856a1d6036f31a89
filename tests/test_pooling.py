from __future__ import annotations

import numpy as np
import pytest

from workbench.errors import InputError
from workbench.pooling import LayerSpec, combine_layers, pooling_matrix


def test_pooling_matrix_first_mean_last():
    spans = [[(1, 3), (3, 4)], [(1, 2)]]
    hidden = np.arange(2 * 5 * 2, dtype=np.float32).reshape(2, 5, 2)
    for pooling, expect in [
        ("first", hidden[0, 1]),
        ("last", hidden[0, 2]),
        ("mean", hidden[0, 1:3].mean(0)),
    ]:
        weights = pooling_matrix(spans, 5, pooling)
        assert weights.shape == (2, 2, 5)
        out = weights @ hidden
        np.testing.assert_allclose(out[0, 0], expect)
        np.testing.assert_allclose(out[0, 1], hidden[0, 3])
        np.testing.assert_allclose(out[1, 1], 0)  # padding row


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
