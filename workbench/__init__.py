"""workbench: contextual-embedding analysis.

The heavy pieces (torch, transformers) are imported lazily, so ``import workbench`` and the
command line's ``--help`` stay fast::

    from workbench import Encoder
    enc = Encoder()                       # the packaged all-MiniLM-L6-v2, on the best device
    emb = enc.encode(["The bank raised rates.", "We sat on the river bank."])
    emb.vectors.shape                     # (n_words, n_layers + 1, dim) float32
"""

from __future__ import annotations

__version__ = "0.1.0"

_LAZY = {
    "Encoder": "workbench.encoding.encoder",
    "LayerwiseEmbeddings": "workbench.encoding.embeddings",
    "LayerSpec": "workbench.encoding.pooling",
    "EmbeddingCache": "workbench.encoding.cache",
}

__all__ = ["__version__", *_LAZY]


def __getattr__(name: str):
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'workbench' has no attribute {name!r}")
