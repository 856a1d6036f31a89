"""Shared fixtures: a tiny random BERT (fast), the real packaged model, the WSD data, a cache."""

from __future__ import annotations

import os
import warnings
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]


def _data_dir() -> Path | None:
    env = os.environ.get("WORKBENCH_DATA")
    candidates = [Path(env)] if env else []
    candidates.append(REPO.parent / "shared" / "data" / "wsd")
    for path in candidates:
        if (path / "WSD_Evaluation_Framework").is_dir():
            return path
    return None


@pytest.fixture(scope="session", autouse=True)
def _session_cache(tmp_path_factory):
    """Every test session gets its own cache dir unless WORKBENCH_CACHE is set by the caller."""
    if "WORKBENCH_CACHE" not in os.environ:
        os.environ["WORKBENCH_CACHE"] = str(tmp_path_factory.mktemp("wb-cache"))
    yield


@pytest.fixture(scope="session")
def tiny_model_dir(tmp_path_factory) -> Path:
    """A randomly initialised 2-layer BERT (hidden 32) with the packaged model's tokenizer."""
    import torch
    from transformers import AutoTokenizer, BertConfig, BertModel

    from workbench.encoding.models import default_model_path

    torch.manual_seed(0)
    path = tmp_path_factory.mktemp("tiny-bert")
    tok = AutoTokenizer.from_pretrained(default_model_path())
    config = BertConfig(
        vocab_size=tok.vocab_size,
        hidden_size=32,
        num_hidden_layers=2,
        num_attention_heads=2,
        intermediate_size=64,
        max_position_embeddings=64,
    )
    BertModel(config).save_pretrained(path)
    tok.model_max_length = 64
    tok.save_pretrained(path)
    return path


@pytest.fixture(scope="session")
def tiny_encoder(tiny_model_dir):
    from workbench import Encoder

    return Encoder(model=str(tiny_model_dir), device="cpu")


@pytest.fixture(scope="session")
def default_encoder():
    from workbench import Encoder

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return Encoder(device="cpu")


@pytest.fixture(scope="session")
def wsd_data() -> Path:
    path = _data_dir()
    if path is None:
        pytest.skip("WSD data not found: set WORKBENCH_DATA or put it in ../shared/data/wsd")
    return path


@pytest.fixture
def tmp_cache(tmp_path, monkeypatch) -> Path:
    path = tmp_path / "cache"
    monkeypatch.setenv("WORKBENCH_CACHE", str(path))
    return path
