"""The layer specs the app offers are ones the model can make: a model with fewer than four
hidden states is not offered the sum or the mean of the last four (it would fail after the
occurrences were encoded)."""

from __future__ import annotations

import pytest

from webapp.settings import layer_options
from workbench.encoding.pooling import LayerSpec


@pytest.mark.parametrize("n_layers", [1, 2, 3, 6, 12])
def test_every_offered_layer_spec_exists_in_the_model(n_layers):
    options = layer_options(n_layers)
    for spec in options:
        LayerSpec.parse(spec).resolve(n_layers + 1)  # raises for a spec the model lacks
    assert ("last4-sum" in options) == (n_layers >= 3)
    assert options[-1] == "0" and str(n_layers) in options
