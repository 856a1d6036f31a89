"""workbench: see and measure what a BERT-style encoder knows about word meaning.

The public API is :data:`__all__`; each name is imported on first use, so ``import workbench``
and the command line's ``--help`` stay fast (ONNX Runtime loads with the encoder; torch only to
train, on a GPU, or when asked)::

    from workbench import Encoder
    enc = Encoder()                       # the packaged all-MiniLM-L6-v2, on the best device
    emb = enc.encode(["The bank raised rates.", "We sat on the river bank."])
    emb.vectors.shape                     # (n_words, n_layers + 1, dim) float32

Everything else is imported from the module that defines it (``workbench.wsd.scoring``, ...);
the package map is in ARCHITECTURE.md.
"""

from __future__ import annotations

import importlib
from typing import Any

__version__ = "0.1.0"

# public name -> the module that defines it
_LAZY = {
    # encoding: models in, layerwise word vectors out
    "Encoder": "workbench.encoding.encoder",
    "LayerwiseEmbeddings": "workbench.encoding.embeddings",
    "LayerSpec": "workbench.encoding.pooling",
    "EmbeddingCache": "workbench.encoding.cache",
    "encode_cached": "workbench.encoding.cache",
    # corpora and the lexicon
    "Corpus": "workbench.corpora.readers",
    "Sentence": "workbench.corpora.readers",
    "read_xml": "workbench.corpora.readers",
    "read_text": "workbench.corpora.readers",
    "load_dataset": "workbench.corpora.datasets",
    "load_wordnet": "workbench.lexicon.wordnet",
    # geometry: measures and corrections
    "Standardizer": "workbench.geometry.corrections",
    "make_correction": "workbench.geometry.corrections",
    "load_correction": "workbench.geometry.corrections",
    "analyze_layers": "workbench.geometry.analysis",
    # word sense disambiguation
    "SenseIndex": "workbench.wsd.index",
    "SenseIndexConfig": "workbench.wsd.config",
    "open_system": "workbench.wsd.systems",
    "disambiguate": "workbench.wsd.disambiguate",
    "evaluate": "workbench.wsd.evaluate",
    "score": "workbench.wsd.scoring",
    # projections
    "Projector": "workbench.viz.projection",
    "ProjectionConfig": "workbench.viz.projection",
    # past one machine (Ray): sharded extraction, its shards read back, fits over shards
    "embed_shards": "workbench.distributed.jobs",
    "ShardConfig": "workbench.distributed.config",
    "ClusterConfig": "workbench.distributed.config",
    "ShardedEmbeddings": "workbench.distributed.reader",
    "fit_standardizer": "workbench.distributed.reduce",
    "fit_sense_index": "workbench.distributed.reduce",
    # fine-tuning (the call that runs a task is workbench.finetune.tasks.registry.finetune: the name
    # `finetune` here would clash with the subpackage)
    "TrainConfig": "workbench.finetune.training.config",
    # errors
    "WorkbenchError": "workbench.errors",
    "InputError": "workbench.errors",
    "DataError": "workbench.errors",
}

__all__ = ["__version__", *_LAZY]


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'workbench' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(__all__)
