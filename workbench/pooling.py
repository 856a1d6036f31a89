"""Pure functions: subword -> word pooling, and layer selection / combination.

Pooling turns each word's span of subword vectors into one vector (``first``, ``mean`` or
``last`` subword). A :class:`LayerSpec` turns a word's stack of hidden states
``(n_layers + 1, dim)`` into one vector: one layer, the mean or sum of several (e.g. the last
four, as in BERT's feature-based experiments and LMMS), or a weighted sum.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np

from workbench.errors import InputError

Pooling = Literal["first", "mean", "last"]
POOLINGS: tuple[str, ...] = ("first", "mean", "last")


def check_pooling(pooling: str) -> Pooling:
    """Return ``pooling`` if it is one of first/mean/last, else raise InputError."""
    if pooling not in POOLINGS:
        raise InputError(f"Unknown pooling '{pooling}'; choose one of {', '.join(POOLINGS)}.")
    return pooling  # type: ignore[return-value]


def pooling_matrix(
    spans: Sequence[Sequence[tuple[int, int]]], seq_len: int, pooling: Pooling
) -> np.ndarray:
    """Weights that pool subword vectors into word vectors, for a batch.

    Args:
        spans: per sequence of the batch, the ``(start, end)`` token span of each word to pool
            (positions in the model input, special tokens included).
        seq_len: padded length of the batch.
        pooling: ``first``, ``mean`` or ``last``.

    Returns:
        ``(batch, max_words, seq_len)`` float32; ``weights @ hidden`` gives
        ``(batch, max_words, dim)``. Rows past a sequence's word count are zero.
    """
    max_words = max((len(s) for s in spans), default=0)
    weights = np.zeros((len(spans), max_words, seq_len), dtype=np.float32)
    for b, seq in enumerate(spans):
        for w, (start, end) in enumerate(seq):
            if pooling == "first":
                weights[b, w, start] = 1.0
            elif pooling == "last":
                weights[b, w, end - 1] = 1.0
            else:
                weights[b, w, start:end] = 1.0 / (end - start)
    return weights


@dataclass(frozen=True)
class LayerSpec:
    """Which hidden states make a word's vector, and how they are combined.

    Attributes:
        layers: hidden-state indices (0 = embedding output, n = last layer); negative
            indices count from the end (-1 = last layer).
        op: ``mean`` or ``sum`` of the chosen layers (``mean`` of one layer is that layer).
        weights: optional weights, one per layer, for a weighted sum (``op`` is then ignored).

    Example:
        >>> LayerSpec.parse("last4-sum")
        LayerSpec(layers=(-4, -3, -2, -1), op='sum', weights=None)
    """

    layers: tuple[int, ...]
    op: Literal["mean", "sum"] = "mean"
    weights: tuple[float, ...] | None = None

    @classmethod
    def parse(cls, spec: str | int | LayerSpec | Sequence[int]) -> LayerSpec:
        """Parse ``"6"``, ``"-1"``, ``"last4-sum"``, ``"last4-mean"``, ``"3,4,5"`` (mean),
        ``"sum:3,4,5"``, ``"mean:3,4"`` or ``"weighted:3=0.5,4=0.5"`` (also an int or a list)."""
        if isinstance(spec, LayerSpec):
            return spec
        if isinstance(spec, (int, np.integer)):
            return cls((int(spec),))
        if not isinstance(spec, str):
            return cls(tuple(int(x) for x in spec))
        text = spec.strip().lower().replace(" ", "")
        try:
            if text.startswith("last") and "-" in text:
                count, op = text[4:].split("-", 1)
                n = int(count)
                if n < 1 or op not in ("sum", "mean"):
                    raise ValueError
                return cls(tuple(range(-n, 0)), op)  # type: ignore[arg-type]
            if text.startswith("weighted:"):
                pairs = [p.split("=") for p in text[9:].split(",")]
                return cls(
                    tuple(int(a) for a, _ in pairs), "sum", tuple(float(b) for _, b in pairs)
                )
            op = "mean"
            if ":" in text:
                op, text = text.split(":", 1)
                if op not in ("sum", "mean"):
                    raise ValueError
            layers = tuple(int(x) for x in text.split(","))
            return cls(layers, op)  # type: ignore[arg-type]
        except ValueError:
            raise InputError(
                f"Cannot read layer spec '{spec}': use e.g. '6', '-1', 'last4-sum', 'last4-mean', "
                "'3,4,5', 'sum:3,4,5' or 'weighted:3=0.5,4=0.5'."
            ) from None

    def resolve(self, n_hidden: int) -> tuple[int, ...]:
        """Absolute hidden-state indices for a model with ``n_hidden`` (= n_layers + 1) states."""
        out = []
        for layer in self.layers:
            idx = layer + n_hidden if layer < 0 else layer
            if not 0 <= idx < n_hidden:
                raise InputError(
                    f"Layer {layer} does not exist: this model has hidden states 0..{n_hidden - 1}."
                )
            out.append(idx)
        return tuple(out)

    @property
    def label(self) -> str:
        """A short name for tables and cache keys, e.g. ``L6``, ``sum(L3..L6)``."""
        if len(self.layers) == 1 and self.weights is None:
            return f"L{self.layers[0]}"
        body = ",".join(str(x) for x in self.layers)
        if self.weights is not None:
            return (
                "weighted("
                + ",".join(f"{a}={b:g}" for a, b in zip(self.layers, self.weights))
                + ")"
            )
        return f"{self.op}({body})"


def combine_layers(
    vectors: np.ndarray, available: Sequence[int], spec: LayerSpec | str | int, n_hidden: int
) -> np.ndarray:
    """Apply a :class:`LayerSpec` to word vectors.

    Args:
        vectors: ``(n_words, n_kept_layers, dim)``, any float dtype (a memmap is fine).
        available: hidden-state index of each slot of axis 1.
        spec: the layer spec (parsed if a string).
        n_hidden: the model's number of hidden states (n_layers + 1), for negative indices.

    Returns:
        ``(n_words, dim)`` float32.
    """
    spec = LayerSpec.parse(spec)
    wanted = spec.resolve(n_hidden)
    slot = {layer: i for i, layer in enumerate(available)}
    missing = [w for w in wanted if w not in slot]
    if missing:
        raise InputError(
            f"Layer(s) {missing} were not kept in these embeddings (kept: {list(available)})."
        )
    idx = [slot[w] for w in wanted]
    if len(idx) == 1 and spec.weights is None:
        return np.asarray(vectors[:, idx[0], :], dtype=np.float32)
    stack = np.asarray(vectors[:, idx, :], dtype=np.float32)
    if spec.weights is not None:
        w = np.asarray(spec.weights, dtype=np.float32)[None, :, None]
        return (stack * w).sum(axis=1)
    return stack.sum(axis=1) if spec.op == "sum" else stack.mean(axis=1)
