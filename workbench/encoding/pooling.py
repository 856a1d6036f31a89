"""Pure functions: subword -> word pooling, sequence pooling, and layer selection / combination.

Pooling turns each word's span of subword vectors into one vector (``first``, ``mean`` or
``last`` subword). A :class:`LayerSpec` turns a word's stack of hidden states
``(n_layers + 1, dim)`` into one vector: one layer, the mean or sum of several (e.g. the last
four, as in BERT's feature-based experiments and LMMS), or a weighted sum.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

import numpy as np

from workbench.errors import InputError

if TYPE_CHECKING:
    import torch


Pooling = Literal["first", "mean", "last"]
POOLINGS: tuple[str, ...] = ("first", "mean", "last")


def check_pooling(pooling: str) -> Pooling:
    """Return ``pooling`` if it is one of first/mean/last, else raise InputError."""
    if pooling not in POOLINGS:
        raise InputError(f"Unknown pooling '{pooling}'; choose one of {', '.join(POOLINGS)}.")
    return pooling  # type: ignore[return-value]


@dataclass(frozen=True)
class PoolingPlan:
    """How to pool a batch's subword vectors into word vectors by gathering (and averaging).

    Words are numbered in batch order (sequence by sequence, span by span). Positions index
    the batch's hidden states flattened to ``(batch * seq_len, dim)``.

    Attributes:
        n_words: number of pooled words.
        single_words, single_positions: words that take one subword's vector (every word for
            ``first``/``last``; one-subword words for ``mean``), and that subword's position.
        multi_words: words averaged over several subwords (``mean`` only).
        multi_positions, multi_segments, multi_weights: each of their subwords, the index in
            ``multi_words`` of the word it belongs to, and its weight ``1 / len(span)``.
    """

    n_words: int
    single_words: np.ndarray
    single_positions: np.ndarray
    multi_words: np.ndarray
    multi_positions: np.ndarray
    multi_segments: np.ndarray
    multi_weights: np.ndarray


def pooling_plan_flat(starts: np.ndarray, ends: np.ndarray, pooling: Pooling) -> PoolingPlan:
    """Gather plan that pools subword vectors into word vectors, for a batch.

    Costs memory and time proportional to the number of subwords (a dense pooling matrix
    costs batch x words x sequence length), and most words, being one subword, are a
    plain gather.

    Args:
        starts, ends: ``(n_words,)`` int64 positions in the batch's hidden states flattened to
            ``(batch * seq_len, dim)`` (sequence ``b``'s token ``t`` is ``b * seq_len + t``);
            word ``k`` pools positions ``starts[k]..ends[k]-1``.
        pooling: ``first``, ``mean`` or ``last``.

    Raises:
        InputError: an empty span (``ends[k] <= starts[k]``).

    Example:
        >>> plan = pooling_plan_flat(np.array([1, 3]), np.array([3, 4]), "mean")
        >>> plan.single_words.tolist(), plan.single_positions.tolist()
        ([1], [3])
        >>> plan.multi_positions.tolist(), plan.multi_weights.tolist()
        ([1, 2], [0.5, 0.5])
    """
    starts = np.asarray(starts, dtype=np.int64)
    ends = np.asarray(ends, dtype=np.int64)
    if np.any(ends <= starts):
        raise InputError("pooling_plan_flat: every span must be non-empty.")
    words = np.arange(len(starts), dtype=np.int64)
    sizes = ends - starts
    if pooling != "mean":
        positions = starts if pooling == "first" else ends - 1
        sizes = np.ones_like(sizes)
    else:
        positions = starts
    one = sizes == 1
    multi = words[~one]
    m_sizes = sizes[multi]
    segments = np.repeat(np.arange(len(multi), dtype=np.int64), m_sizes)
    offsets = np.arange(len(segments), dtype=np.int64) - np.repeat(
        np.cumsum(m_sizes) - m_sizes, m_sizes
    )
    return PoolingPlan(
        n_words=len(starts),
        single_words=words[one],
        single_positions=positions[one],
        multi_words=multi,
        multi_positions=np.repeat(starts[multi], m_sizes) + offsets,
        multi_segments=segments,
        multi_weights=np.repeat(1.0 / m_sizes, m_sizes).astype(np.float32),
    )


def pooled_order(plan: PoolingPlan) -> np.ndarray:
    """The plan's word numbers in the order :func:`pool_words` returns their vectors: the
    one-subword (gathered) words first, then the averaged ones."""
    return np.concatenate([plan.single_words, plan.multi_words])


@dataclass(frozen=True)
class PoolingIndex:
    """A :class:`PoolingPlan`'s index arrays as torch tensors on the device of the hidden states.

    Attributes:
        single_positions: ``(n_single,)`` int64.
        multi_positions, multi_segments: ``(n_parts,)`` int64.
        multi_weights: ``(n_parts,)`` float32.
        n_multi: number of averaged words (``len(plan.multi_words)``).
    """

    single_positions: torch.Tensor
    multi_positions: torch.Tensor
    multi_segments: torch.Tensor
    multi_weights: torch.Tensor
    n_multi: int


def pool_words(
    index: PoolingIndex, hidden: Sequence[torch.Tensor], dtype: torch.dtype
) -> torch.Tensor:
    """Pool hidden states into word vectors, on their device, cast to ``dtype`` there.

    Args:
        index: the batch's plan, on the hidden states' device.
        hidden: ``(batch, seq_len, dim)`` tensors, one per hidden state to keep.
        dtype: the dtype of the result (the output's store dtype: a ``float16`` store halves
            what is copied to the host).

    Returns:
        ``(n_single + n_multi, len(hidden), dim)``: one-subword words first (a gather), then
        the averaged ones (a weighted segment sum), in :func:`pooled_order`.
    """
    import torch

    device = hidden[0].device
    dim = hidden[0].shape[-1]
    n_single = len(index.single_positions)
    out = torch.empty((n_single + index.n_multi, len(hidden), dim), dtype=dtype, device=device)

    def gather(where: torch.Tensor) -> list[torch.Tensor]:  # K x (n, D)
        return [h.reshape(-1, dim).index_select(0, where) for h in hidden]

    same = hidden[0].dtype == dtype
    if n_single:
        if same:  # straight into the result: no temporary
            torch.stack(gather(index.single_positions), dim=1, out=out[:n_single])
        else:
            out[:n_single].copy_(torch.stack(gather(index.single_positions), dim=1))
    if index.n_multi:
        parts = torch.stack(gather(index.multi_positions), dim=1)
        parts.mul_(index.multi_weights.to(parts.dtype)[:, None, None])
        if same:
            summed = out[n_single:]
            summed.zero_()
        else:
            shape = (index.n_multi, len(hidden), dim)
            summed = torch.zeros(shape, dtype=parts.dtype, device=device)
        summed.index_add_(0, index.multi_segments, parts)
        if not same:
            out[n_single:].copy_(summed)
    return out


def pool_words_array(plan: PoolingPlan, hidden: np.ndarray, dtype: np.dtype) -> np.ndarray:
    """:func:`pool_words` in numpy, for hidden states on the host (the ONNX Runtime backend).

    Args:
        plan: the batch's pooling plan.
        hidden: ``(n_states, batch, seq_len, dim)`` float32, the hidden states to keep.
        dtype: the dtype of the result.

    Returns:
        ``(n_single + n_multi, n_states, dim)`` in :func:`pooled_order`, like :func:`pool_words`.

    Example:
        >>> h = np.arange(8, dtype=np.float32).reshape(1, 1, 4, 2)   # 1 state, 4 tokens
        >>> plan = pooling_plan_flat(np.array([0, 1]), np.array([1, 3]), "mean")
        >>> pool_words_array(plan, h, np.dtype("float32"))[:, 0].tolist()
        [[0.0, 1.0], [3.0, 4.0]]
    """
    n_states, dim = hidden.shape[0], hidden.shape[-1]
    flat = hidden.reshape(n_states, -1, dim)
    n_single, n_multi = len(plan.single_positions), len(plan.multi_words)
    out = np.empty((n_single + n_multi, n_states, dim), dtype=dtype)
    if n_single:
        out[:n_single] = flat[:, plan.single_positions].transpose(1, 0, 2)
    if n_multi:
        parts = flat[:, plan.multi_positions] * plan.multi_weights[None, :, None]
        segments = plan.multi_segments  # sorted, each word's subwords side by side
        starts = np.flatnonzero(np.r_[True, segments[1:] != segments[:-1]])
        out[n_single:] = np.add.reduceat(parts, starts, axis=1).transpose(1, 0, 2)
    return out


def pool_sequence_array(hidden: np.ndarray, mask: np.ndarray, how: str) -> np.ndarray:
    """:func:`pool_sequence` in numpy: ``(batch, seq, dim) -> (batch, dim)``, the first token's
    vector (``"cls"``) or the mean over the tokens ``mask`` ``(batch, seq)`` marks."""
    if how == "cls":
        return np.ascontiguousarray(hidden[:, 0])
    m = mask[..., None].astype(hidden.dtype)
    return (hidden * m).sum(1) / np.maximum(m.sum(1), 1.0)


_MAX_LAYERS = 4096  # more hidden states than any model has: "last5000-sum" is refused at once


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
                if not 1 <= n <= _MAX_LAYERS or op not in ("sum", "mean"):
                    raise ValueError
                return cls(tuple(range(-n, 0)), op)  # type: ignore[arg-type]
            if text.startswith("weighted:"):
                pairs = [p.split("=") for p in text[9:].split(",")]
                weights = tuple(float(b) for _, b in pairs)
                if not all(math.isfinite(w) for w in weights):  # a NaN weight: NaN vectors
                    raise ValueError
                return cls(tuple(int(a) for a, _ in pairs), "sum", weights)
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
                "'3,4,5', 'sum:3,4,5' or 'weighted:3=0.5,4=0.5' (finite weights)."
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


def pool_sequence(hidden: torch.Tensor, mask: torch.Tensor, how: str) -> torch.Tensor:
    """One vector per sequence, ``(batch, seq, dim) -> (batch, dim)``: the first token's
    (``"cls"``) or the mean over the tokens ``mask`` marks (``"mean"``; special tokens count)."""
    if how == "cls":
        return hidden[:, 0]
    m = mask.unsqueeze(-1).to(hidden.dtype)
    return (hidden * m).sum(1) / m.sum(1).clamp(min=1.0)


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
