"""Shared fixtures: a tiny random BERT (fast), the real packaged model, the WSD data, a cache."""

from __future__ import annotations

import os
import warnings
from pathlib import Path

import pytest

from workbench import Encoder
from workbench.corpora.datasets import load_dataset
from workbench.corpora.readers import Corpus
from workbench.encoding.models import default_model_path
from workbench.lexicon.wordnet import load_wordnet
from workbench.wsd.builds import semcor_index, semcor_sha256, system_index_path
from workbench.wsd.config import EncoderInfo
from workbench.wsd.disambiguate import target_lemmas
from workbench.wsd.predict import encode_instances, train_index
from workbench.wsd.sources import gloss_vectors, sense_graph
from workbench.wsd.store import save_index
from workbench.wsd.systems.registry import SYSTEMS

REPO = Path(__file__).resolve().parents[1]


def _data_dir() -> Path | None:
    env = os.environ.get("WORKBENCH_DATA")
    candidates = [Path(env)] if env else []
    candidates.append(REPO.parent / "shared" / "data" / "wsd")
    for path in candidates:
        if (path / "WSD_Evaluation_Framework").is_dir():
            return path
    return None


# The suite computes in float32 whatever the CPU (auto is bfloat16 where the CPU has bfloat16
# instructions): its comparisons against float32 references and fixed answers then hold on every
# machine, subprocesses and Ray workers included. tests/encoding/test_precision.py unsets it to
# test the automatic choice, and tests the bfloat16 path explicitly.
os.environ.setdefault("WORKBENCH_DTYPE", "float32")


@pytest.fixture(scope="session", autouse=True)
def _session_cache(tmp_path_factory) -> bool:
    """Every test session gets its own cache dir unless WORKBENCH_CACHE is set by the caller;
    True when the session made its own."""
    if "WORKBENCH_CACHE" in os.environ:
        return False
    os.environ["WORKBENCH_CACHE"] = str(tmp_path_factory.mktemp("wb-cache"))
    return True


@pytest.fixture(scope="session")
def tiny_model_dir(tmp_path_factory) -> Path:
    """A randomly initialised 2-layer BERT (hidden 32) with the packaged model's tokenizer."""
    import torch
    from transformers import AutoTokenizer, BertConfig, BertModel

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
    """The tiny BERT on torch: the tests of the torch forward pass and its machinery (runner,
    pipeline, dtypes) read its model and runner."""
    return Encoder(model=str(tiny_model_dir), device="cpu", backend="torch")


@pytest.fixture(scope="session")
def tiny_onnx_encoder(tiny_model_dir):
    """The tiny BERT on ONNX Runtime (its export made once per session cache)."""
    return Encoder(model=str(tiny_model_dir), device="cpu", backend="onnx")


@pytest.fixture(scope="session")
def default_encoder():
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
    """A cache of the test's own, but for the models' exports: its ``onnx`` folder is the
    session cache's (an export is made once per model and session, not once per test; tests of
    the exports themselves use :func:`own_exports`)."""
    path = tmp_path / "cache"
    shared = Path(os.environ["WORKBENCH_CACHE"]) / "onnx"
    shared.mkdir(parents=True, exist_ok=True)
    path.mkdir()
    (path / "onnx").symlink_to(shared, target_is_directory=True)
    monkeypatch.setenv("WORKBENCH_CACHE", str(path))
    return path


@pytest.fixture
def own_exports(tmp_cache) -> Path:
    """A cache of the test's own, exports included (made afresh)."""
    (tmp_cache / "onnx").unlink()
    return tmp_cache


#: Lemmas whose senses the stand-in 'best' WSD index covers fully (what the WSD tests ask about).
STAND_IN_LEMMAS = ("bass", "helium", "bank", "money", "river", "play", "cell", "balloon")
STAND_IN_SENTENCES = 1000  # SemCor's first sentences, plus every sentence with those lemmas


@pytest.fixture(scope="session")
def best_wsd_index(wsd_data, default_encoder, _session_cache) -> Path:
    """The default ('best') WSD index, where the app and the CLI look for it.

    The real one encodes all of SemCor and the definitions of WordNet's 117k synsets (about 10
    minutes on 2 cores). In a session cache this stands in for it: the 'best' settings
    (:data:`workbench.wsd.systems.registry.SYSTEMS`) trained on a part of SemCor (its first
    :data:`STAND_IN_SENTENCES` sentences and every sentence with one of
    :data:`STAND_IN_LEMMAS`), with propagation and gloss vectors for the senses of those lemmas
    and of SemEval-2007's (the evaluation tests' set). Built once per session, under the name
    the full index has, so every caller finds it through its ordinary code path. With a cache
    dir of the caller's (``WORKBENCH_CACHE`` set), the real index is used or built: a
    stand-in is never written into a cache that outlives the session.
    """
    enc, best = default_encoder, SYSTEMS["best"]
    path = system_index_path(EncoderInfo.of(enc), best, semcor_sha256())
    if (path / "meta.json").is_file():
        return path
    if not _session_cache:
        semcor_index(enc, "best")
        return path
    wordnet = load_wordnet()
    semcor = load_dataset("semcor", wsd_data)
    wanted = set(STAND_IN_LEMMAS)
    sentences = [
        s for i, s in enumerate(semcor.sentences)
        if i < STAND_IN_SENTENCES or any(inst.lemma in wanted for inst in s.instances)
    ]  # fmt: skip
    part = Corpus("semcor", tuple(sentences), semcor.source, semcor.sha256)
    dev = load_dataset("semeval2007", wsd_data)
    pairs = {(inst.lemma, inst.pos) for s in dev.sentences for inst in s.instances}
    lemmas = {x for lemma in STAND_IN_LEMMAS for x in target_lemmas(lemma, wordnet)}
    lemmas |= {x for lemma, pos in pairs for x in target_lemmas(lemma, wordnet, pos)}
    keys = sorted({k for lemma, pos in lemmas for k in wordnet.candidates(lemma, pos)})
    gloss = gloss_vectors(enc, wordnet, best.config.layers, keys, best.config.gloss_pooling)
    training = encode_instances(enc, part)
    graph = sense_graph(wordnet)
    index = train_index(
        training, best.config, EncoderInfo.of(enc), graph=graph, gloss=gloss, targets=keys
    )
    save_index(index, path)
    return path
