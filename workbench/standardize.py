"""Post-processors of word vectors: z-scores and, for comparison, other corrections.

All share one scikit-learn style interface: ``__init__`` stores parameters, ``fit(X)`` learns
and returns ``self``, learned state ends in ``_``, ``transform(X)`` / ``fit_transform(X)``.

Input layout: ``X`` is ``(n, dim)`` (one layer) or ``(n, n_layers, dim)`` (fitted PER LAYER:
one mean / scale / projection per layer, stacked along a leading layer axis of the learned
arrays). Computation is float64, output float32 of the same layout.

* :class:`Standardizer` (``"zscore"``): ``z = (x - mu) / sigma`` with ``mu`` the mean over the
  reference corpus and ``sigma`` the POPULATION standard deviation (ddof = 0) per dimension.
* :class:`MeanCenterer` (``"center"``): ``x - mu``.
* :class:`AllButTheTop` (``"abtt"``): remove the mean and the projection on the top ``D``
  principal components (Mu & Viswanath 2018; ``D`` defaults to ``round(dim / 100)``, at least 1).
* :class:`Whitener` (``"whiten"``): ``(x - mu) W`` with ``W = U diag(1 / sqrt(s))`` from the
  covariance's SVD, optionally only the first ``k`` columns (Su et al. 2021, BERT-whitening).
* :class:`Identity` (``"none"``): the unchanged vectors, for a uniform code path.

Fitted objects remember where they come from (:class:`Provenance`: model fingerprint, layers,
pooling, reference corpus and its hash), save to ``<stem>.npz`` + ``<stem>.json``, and refuse
vectors of another width, layer count or model with :class:`~workbench.errors.MismatchError`.

Example::

    z = make_postprocessor("zscore").fit_embeddings(emb, corpus="semcor", corpus_hash=h)
    vectors = z.transform_embeddings(other_emb)          # (n, n_layers, dim) float32
    z.save("refs/minilm-semcor-zscore")                  # .npz + .json
    z2 = load_postprocessor("refs/minilm-semcor-zscore")
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar, Literal

import numpy as np
from sklearn.base import BaseEstimator

from workbench import __version__
from workbench.errors import DataError, InputError, MismatchError

PostProcessorName = Literal["zscore", "center", "abtt", "whiten", "none"]


@dataclass(frozen=True)
class Provenance:
    """What a post-processor was fitted on.

    Attributes:
        model_name: the encoder's name.
        fingerprint: the encoder's fingerprint (identity incl. weights hash); "" if unknown.
        layers: hidden-state index of each slot of the layer axis (per-layer fits), else ().
        layer_spec: the layer selection of a 2-D fit (e.g. "last4-sum"), else "".
        pooling: subword -> word pooling ("first" | "mean" | "last").
        corpus: name of the reference corpus.
        corpus_hash: hash of the reference corpus content.
        n_sentences: sentences in the reference corpus.
    """

    model_name: str = ""
    fingerprint: str = ""
    layers: tuple[int, ...] = ()
    layer_spec: str = ""
    pooling: str = ""
    corpus: str = ""
    corpus_hash: str = ""
    n_sentences: int = 0

    @classmethod
    def from_embeddings(cls, emb: Any, corpus: str = "", corpus_hash: str = "") -> Provenance:
        """The provenance of a :class:`~workbench.LayerwiseEmbeddings` (all its layers)."""
        return cls(
            model_name=str(emb.model_name),
            fingerprint=str(emb.fingerprint),
            layers=tuple(int(v) for v in emb.layers),
            pooling=str(emb.pooling),
            corpus=corpus,
            corpus_hash=corpus_hash,
            n_sentences=int(emb.n_sentences),
        )


def _check_array(x: Any, name: str = "X") -> np.ndarray:
    x = np.asarray(x)
    if x.ndim not in (2, 3):
        raise InputError(f"{name} must be (n, dim) or (n, n_layers, dim), got shape {x.shape}")
    if x.dtype.kind not in "fiu":
        raise InputError(f"{name} must be numeric, got dtype {x.dtype}")
    if x.shape[0] < 2:
        raise InputError(f"{name}: need at least two vectors, got {x.shape[0]}")
    finite = np.isfinite(x).reshape(x.shape[0], -1).all(axis=1)
    if not finite.all():
        raise InputError(f"{name}: row {int(np.argmin(finite))} contains NaN or inf")
    return x


class PostProcessor(BaseEstimator):
    """Base class: per-layer fitting, layout checks, provenance, save/load.

    Subclasses define ``name``, ``_state`` (names of learned arrays), ``_fit_layer(x) -> dict``
    and ``_transform_layer(x, state) -> array`` on one layer's ``(n, dim)`` float64 array.
    """

    name: ClassVar[str] = ""
    _state: ClassVar[tuple[str, ...]] = ()

    # ------------------------------------------------------------------ subclass hooks
    def _fit_layer(self, x: np.ndarray) -> dict[str, np.ndarray]:
        raise NotImplementedError

    def _transform_layer(self, x: np.ndarray, state: Mapping[str, np.ndarray]) -> np.ndarray:
        raise NotImplementedError

    # ------------------------------------------------------------------ contract
    def fit(self, X: Any, y: Any = None, *, provenance: Provenance | None = None):
        """Learn the correction from reference vectors ``X`` and return ``self``.

        Args:
            X: ``(n, dim)`` or ``(n, n_layers, dim)``, n >= 2, finite.
            y: ignored (scikit-learn compatibility).
            provenance: what ``X`` was computed from (checked again at transform time).
        """
        x = _check_array(X)
        layers = [x] if x.ndim == 2 else [x[:, k, :] for k in range(x.shape[1])]
        states = [self._fit_layer(np.asarray(layer, dtype=np.float64)) for layer in layers]
        for key in self._state:
            arrays = [s[key] for s in states]
            setattr(self, f"{key}_", arrays[0] if x.ndim == 2 else np.stack(arrays))
        self.n_features_in_ = int(x.shape[-1])
        self.n_layers_ = None if x.ndim == 2 else int(x.shape[1])
        self.n_samples_seen_ = int(x.shape[0])
        self.provenance_ = provenance if provenance is not None else Provenance()
        return self

    def fit_embeddings(self, emb: Any, corpus: str = "", corpus_hash: str = ""):
        """Fit per layer on ``emb.vectors`` of a LayerwiseEmbeddings, recording its provenance."""
        return self.fit(
            emb.vectors, provenance=Provenance.from_embeddings(emb, corpus, corpus_hash)
        )

    def _check_fitted(self) -> None:
        if not hasattr(self, "n_features_in_"):
            raise InputError(f"this {type(self).__name__} is not fitted yet: call fit(X) first")

    def _check_layout(self, x: np.ndarray) -> None:
        fitted = "(n, dim)" if self.n_layers_ is None else f"(n, {self.n_layers_}, dim)"
        if x.shape[-1] != self.n_features_in_:
            raise MismatchError(
                f"{type(self).__name__} was fitted on {self.n_features_in_}-dimensional vectors "
                f"({self.provenance_.model_name or 'unknown model'}); got {x.shape[-1]} dimensions"
            )
        if (x.ndim == 2) != (self.n_layers_ is None) or (
            x.ndim == 3 and x.shape[1] != self.n_layers_
        ):
            raise MismatchError(
                f"{type(self).__name__} was fitted on arrays {fitted}; got shape {x.shape}"
            )

    def check_compatible(self, provenance: Provenance) -> None:
        """Raise MismatchError if ``provenance`` names another model, pooling or layers."""
        self._check_fitted()
        mine = self.provenance_
        for field in ("fingerprint", "pooling", "layers", "layer_spec"):
            a, b = getattr(mine, field), getattr(provenance, field)
            if a and b and a != b:
                raise MismatchError(
                    f"{type(self).__name__} was fitted with {field} {a!r} "
                    f"({mine.model_name or 'unknown model'}); the vectors have {field} {b!r}"
                )

    def transform(self, X: Any, *, provenance: Provenance | None = None) -> np.ndarray:
        """Apply the fitted correction; same layout as ``X``, float32.

        Raises:
            MismatchError: another width or layer count than at fit time, or a ``provenance``
                that names another model / pooling / layers.
        """
        self._check_fitted()
        x = _check_array(X)
        self._check_layout(x)
        if provenance is not None:
            self.check_compatible(provenance)
        if x.ndim == 2:
            state = {k: getattr(self, f"{k}_") for k in self._state}
            return self._transform_layer(np.asarray(x, np.float64), state).astype(np.float32)
        out = [
            self._transform_layer(
                np.asarray(x[:, k, :], np.float64),
                {s: getattr(self, f"{s}_")[k] for s in self._state},
            ).astype(np.float32)
            for k in range(x.shape[1])
        ]
        return np.stack(out, axis=1)

    def fit_transform(self, X: Any, y: Any = None, *, provenance: Provenance | None = None):
        """``fit(X).transform(X)``."""
        return self.fit(X, provenance=provenance).transform(X)

    def transform_embeddings(self, emb: Any) -> np.ndarray:
        """Transform a LayerwiseEmbeddings fitted per layer: checks model and pooling, picks the
        fitted layers out of ``emb.layers``; returns ``(n, n_layers, dim)`` float32."""
        self._check_fitted()
        mine = self.provenance_
        if not mine.layers:
            raise MismatchError("this post-processor was not fitted per layer on embeddings")
        self.check_compatible(dataclasses.replace(Provenance.from_embeddings(emb), layers=()))
        have = [int(v) for v in emb.layers]
        missing = [layer for layer in mine.layers if layer not in have]
        if missing:
            raise MismatchError(f"fitted on layers {list(mine.layers)}; embeddings lack {missing}")
        slots = [have.index(layer) for layer in mine.layers]
        return self.transform(emb.vectors[:, slots, :])

    # ------------------------------------------------------------------ persistence
    def save(self, path: str | os.PathLike[str]) -> tuple[Path, Path]:
        """Write ``<stem>.npz`` (learned arrays) and ``<stem>.json`` (kind, parameters,
        provenance, shapes, the npz's SHA-256). Returns both paths."""
        self._check_fitted()
        npz, meta = _paths(path)
        npz.parent.mkdir(parents=True, exist_ok=True)
        tmp = npz.with_name(f".{npz.name}.tmp.npz")
        np.savez(tmp, **{k: getattr(self, f"{k}_") for k in self._state})
        os.replace(tmp, npz)
        info = {
            "kind": self.name,
            "params": self.get_params(),
            "n_features_in": self.n_features_in_,
            "n_layers": self.n_layers_,
            "n_samples_seen": self.n_samples_seen_,
            "provenance": dataclasses.asdict(self.provenance_),
            "npz_sha256": _sha256(npz),
            "workbench_version": __version__,
        }
        tmp_meta = meta.with_name(f".{meta.name}.tmp")
        tmp_meta.write_text(json.dumps(info, indent=2) + "\n", encoding="utf-8")
        os.replace(tmp_meta, meta)
        return npz, meta


def _paths(path: str | os.PathLike[str]) -> tuple[Path, Path]:
    p = Path(path)
    if p.suffix in (".npz", ".json"):
        p = p.with_suffix("")
    return p.with_name(p.name + ".npz"), p.with_name(p.name + ".json")


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def load_postprocessor(path: str | os.PathLike[str]) -> PostProcessor:
    """Load what :meth:`PostProcessor.save` wrote (``path`` with or without suffix).

    Raises:
        DataError: missing files, an unknown kind, or an npz that does not match its json.
    """
    npz, meta = _paths(path)
    if not npz.is_file() or not meta.is_file():
        raise DataError(f"no saved post-processor at {npz.with_suffix('')} (.npz + .json)")
    info = json.loads(meta.read_text(encoding="utf-8"))
    if info.get("kind") not in _REGISTRY:
        raise DataError(f"{meta}: unknown post-processor kind {info.get('kind')!r}")
    if _sha256(npz) != info.get("npz_sha256"):
        raise DataError(f"{npz} does not match {meta} (modified or truncated); refit and save")
    obj = _REGISTRY[info["kind"]](**info["params"])
    with np.load(npz) as arrays:
        for key in obj._state:
            setattr(obj, f"{key}_", arrays[key])
    obj.n_features_in_ = int(info["n_features_in"])
    obj.n_layers_ = None if info["n_layers"] is None else int(info["n_layers"])
    obj.n_samples_seen_ = int(info["n_samples_seen"])
    prov = dict(info["provenance"])
    prov["layers"] = tuple(prov.get("layers", ()))
    obj.provenance_ = Provenance(**prov)
    return obj


# ---------------------------------------------------------------------- the corrections


def _constant_mask(var: np.ndarray, mean: np.ndarray, n: int) -> np.ndarray:
    # scikit-learn's test for a constant feature despite float64 rounding
    eps = np.finfo(np.float64).eps
    return var <= n * eps * var + (n * mean * eps) ** 2


class Standardizer(PostProcessor):
    """Z-scores per dimension: ``z = (x - mean_) / scale_``.

    ``mean_`` is the mean over the reference vectors and ``scale_`` their population standard
    deviation (ddof = 0), per dimension (and per layer for 3-D input).

    A dimension constant on the reference corpus (sigma = 0) has no z-score; ``zero_variance``
    decides: ``"center"`` (scikit-learn's rule: ``scale_ = 1`` there, output ``x - mean_``),
    ``"zero"`` (output 0 there), or ``"error"`` (``fit`` raises InputError). The mask is kept in
    ``zero_variance_``.

    Args:
        zero_variance: the policy above.
    """

    name = "zscore"
    _state = ("mean", "scale", "var", "zero_variance")

    def __init__(self, zero_variance: Literal["center", "zero", "error"] = "center"):
        self.zero_variance = zero_variance

    def _fit_layer(self, x: np.ndarray) -> dict[str, np.ndarray]:
        if self.zero_variance not in ("center", "zero", "error"):
            raise InputError(f"zero_variance must be center|zero|error, got {self.zero_variance!r}")
        mean = x.mean(axis=0)
        var = ((x - mean) ** 2).mean(axis=0)
        const = _constant_mask(var, mean, x.shape[0])
        if const.any() and self.zero_variance == "error":
            raise InputError(f"dimensions {np.flatnonzero(const)[:10].tolist()} have sigma = 0")
        scale = np.where(const, 1.0, np.sqrt(var))
        return {"mean": mean, "scale": scale, "var": var, "zero_variance": const}

    def _transform_layer(self, x: np.ndarray, state: Mapping[str, np.ndarray]) -> np.ndarray:
        z = (x - state["mean"]) / state["scale"]
        if self.zero_variance == "zero":
            z[:, state["zero_variance"]] = 0.0
        return z


class MeanCenterer(PostProcessor):
    """Subtract the reference mean: ``x - mean_``."""

    name = "center"
    _state = ("mean",)

    def _fit_layer(self, x: np.ndarray) -> dict[str, np.ndarray]:
        return {"mean": x.mean(axis=0)}

    def _transform_layer(self, x: np.ndarray, state: Mapping[str, np.ndarray]) -> np.ndarray:
        return x - state["mean"]


class AllButTheTop(PostProcessor):
    """All-but-the-top (Mu & Viswanath 2018): center, then remove the top ``D`` principal
    directions: ``x~ = x - mean_``, ``x~ - components_.T @ components_ @ x~``.

    Args:
        n_components: ``D``; None = ``max(1, round(dim / 100))`` (the paper's rule of thumb).
    """

    name = "abtt"
    _state = ("mean", "components")

    def __init__(self, n_components: int | None = None):
        self.n_components = n_components

    def _fit_layer(self, x: np.ndarray) -> dict[str, np.ndarray]:
        dim = x.shape[1]
        d = self.n_components if self.n_components is not None else max(1, round(dim / 100))
        if not 1 <= d < min(dim, x.shape[0]):
            raise InputError(f"abtt n_components must be in [1, {min(dim, x.shape[0]) - 1}]: {d}")
        mean = x.mean(axis=0)
        xc = x - mean
        _, vecs = np.linalg.eigh(xc.T @ xc)  # ascending eigenvalues of the scatter matrix
        return {"mean": mean, "components": vecs[:, ::-1][:, :d].T.copy()}

    def _transform_layer(self, x: np.ndarray, state: Mapping[str, np.ndarray]) -> np.ndarray:
        xc = x - state["mean"]
        c = state["components"]
        return xc - (xc @ c.T) @ c


class Whitener(PostProcessor):
    """Whitening (Su et al. 2021): ``(x - mean_) @ whitening_``, ``whitening_ = U diag(s)^-1/2``
    over the first ``k`` eigenvectors of the (population) covariance.

    Directions with eigenvalue <= ``rtol * max eigenvalue`` carry no variance in the reference
    corpus; their column is set to 0 instead of dividing by ~0 (count in ``n_degenerate_``).

    Args:
        n_components: ``k``; None keeps all ``dim`` dimensions.
        rtol: relative eigenvalue threshold for degenerate directions.
    """

    name = "whiten"
    _state = ("mean", "whitening", "eigenvalues")

    def __init__(self, n_components: int | None = None, rtol: float = 1e-10):
        self.n_components = n_components
        self.rtol = rtol

    def _fit_layer(self, x: np.ndarray) -> dict[str, np.ndarray]:
        dim = x.shape[1]
        k = dim if self.n_components is None else int(self.n_components)
        if not 1 <= k <= dim:
            raise InputError(f"whiten n_components must be in [1, {dim}], got {k}")
        mean = x.mean(axis=0)
        xc = x - mean
        s, u = np.linalg.eigh(xc.T @ xc / x.shape[0])  # symmetric: eigh, ascending
        s, u = np.clip(s[::-1], 0.0, None), u[:, ::-1]
        ok = s > self.rtol * s[0]
        inv = np.where(ok, 1.0 / np.sqrt(np.where(ok, s, 1.0)), 0.0)
        return {"mean": mean, "whitening": (u * inv)[:, :k], "eigenvalues": s}

    @property
    def n_degenerate_(self) -> np.ndarray | int:
        """Degenerate directions kept as 0 (per layer for a per-layer fit)."""
        ev = self.eigenvalues_
        return (ev <= self.rtol * ev[..., :1]).sum(axis=-1)

    def _transform_layer(self, x: np.ndarray, state: Mapping[str, np.ndarray]) -> np.ndarray:
        return (x - state["mean"]) @ state["whitening"]


class Identity(PostProcessor):
    """No correction (only the layout and width checks), for a uniform code path."""

    name = "none"
    _state = ()

    def _fit_layer(self, x: np.ndarray) -> dict[str, np.ndarray]:
        return {}

    def _transform_layer(self, x: np.ndarray, state: Mapping[str, np.ndarray]) -> np.ndarray:
        return x


_REGISTRY: dict[str, type[PostProcessor]] = {
    cls.name: cls for cls in (Standardizer, MeanCenterer, AllButTheTop, Whitener, Identity)
}
POSTPROCESSORS: tuple[str, ...] = tuple(_REGISTRY)


def make_postprocessor(name: PostProcessorName | str, **params: Any) -> PostProcessor:
    """An unfitted post-processor by name: ``"zscore" | "center" | "abtt" | "whiten" | "none"``.

    Args:
        name: the correction.
        **params: its parameters (``n_components`` for abtt and whiten, ``zero_variance`` for
            zscore, ``rtol`` for whiten).

    Raises:
        InputError: an unknown name or parameter.
    """
    if name not in _REGISTRY:
        raise InputError(f"unknown post-processor {name!r}; choose from {list(POSTPROCESSORS)}")
    try:
        return _REGISTRY[name](**params)
    except TypeError as exc:
        raise InputError(f"bad parameters for {name!r}: {exc}") from None
