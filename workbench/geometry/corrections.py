"""Corrections of word vectors: z-scores and, for comparison, other corrections.

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

    z = make_correction("zscore").fit_embeddings(emb, corpus="semcor", corpus_hash=h)
    vectors = z.transform_embeddings(other_emb)          # (n, n_layers, dim) float32
    z.save("refs/minilm-semcor-zscore")                  # .npz + .json
    z2 = load_correction("refs/minilm-semcor-zscore")
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np

from workbench.errors import DataError, InputError, MismatchError
from workbench.fileio import sha256_file
from workbench.geometry.correction import Correction, Provenance, check_array, saved_paths
from workbench.limits import check_finite, check_npz, read_json

CorrectionName = Literal["zscore", "center", "abtt", "whiten", "none"]


def load_correction(path: str | os.PathLike[str]) -> Correction:
    """Load what :meth:`Correction.save` wrote (``path`` with or without suffix).

    Nothing in the files is executed: the ``.json`` is plain data and the ``.npz`` is read
    without pickles.

    Raises:
        DataError: missing or unreadable files, a ``.json`` that is not what ``save`` writes
            (truncated, not an object, a missing or mistyped field, an unknown kind or
            parameter), an ``.npz`` that does not match its ``.json``, or learned values the
            correction cannot use (:meth:`~workbench.geometry.correction.Correction.state_problem`).
    """
    npz, meta = saved_paths(path)
    if not npz.is_file() or not meta.is_file():
        raise DataError(f"no saved correction at {npz.with_suffix('')} (.npz + .json)")
    try:
        info = read_json(meta)  # a regular file of a sane size
    except (OSError, ValueError) as exc:  # UnicodeDecodeError and JSONDecodeError included
        raise DataError(f"{meta}: not a saved correction ({exc})") from exc
    if not isinstance(info, dict):
        raise DataError(f"{meta}: not a saved correction (a {type(info).__name__})")
    if info.get("kind") not in _REGISTRY:
        raise DataError(f"{meta}: unknown correction kind {info.get('kind')!r}")
    check_npz(npz)  # sizes from stat and the headers before a byte is hashed
    if sha256_file(npz) != info.get("npz_sha256"):
        raise DataError(f"{npz} does not match {meta} (modified or truncated); refit and save")
    try:
        obj = _REGISTRY[info["kind"]](**info["params"])
        with np.load(npz, allow_pickle=False) as arrays:
            for key in obj.state_names:
                setattr(obj, f"{key}_", check_finite(arrays[key], f"{npz}: {key}"))
        obj.n_features_in_ = int(info["n_features_in"])
        obj.n_layers_ = None if info["n_layers"] is None else int(info["n_layers"])
        obj.n_samples_seen_ = int(info["n_samples_seen"])
        prov = dict(info["provenance"])
        prov["layers"] = tuple(int(v) for v in prov.get("layers", ()))
        obj.provenance_ = Provenance(**prov)
    except (KeyError, TypeError, ValueError, OSError) as exc:
        raise DataError(
            f"{meta}: a field is missing or wrong ({type(exc).__name__}: {exc})"
        ) from exc
    _check_saved_shapes(obj, npz, meta)
    problem = obj.state_problem()
    if problem is not None:
        raise DataError(
            f"{npz}: not a usable saved {obj.name} correction ({problem}); refit and save"
        )
    return obj


def _check_saved_shapes(obj: Correction, npz: os.PathLike[str], meta: os.PathLike[str]) -> None:
    """Refuse learned arrays whose layout disagrees with the ``.json``: the layer count, the
    number of axes, and the feature width ``n_features_in`` (a hand-edited ``.json`` would
    otherwise fail later inside numpy)."""
    dim, layers = obj.n_features_in_, obj.n_layers_
    if dim < 1:
        raise DataError(f"{meta}: field 'n_features_in' must be 1 or more, not {dim}")
    if layers is not None and layers < 1:
        raise DataError(f"{meta}: field 'n_layers' must be 1 or more, not {layers}")
    sizes: dict[str, int] = {"dim": dim}
    for key in obj.state_names:
        value = getattr(obj, f"{key}_")
        axes = obj.state_axes.get(key, ("dim",))
        lead = () if layers is None else (layers,)
        if value.ndim != len(lead) + len(axes) or tuple(value.shape[: len(lead)]) != lead:
            raise DataError(
                f"{npz}: array {key!r} of shape {value.shape} does not fit {meta} "
                f"(field 'n_layers' is {layers})"
            )
        for axis, size in zip(axes, value.shape[len(lead) :], strict=True):
            want = sizes.setdefault(axis, int(size))
            if size != want:
                field = "n_features_in" if axis == "dim" else axis
                raise DataError(
                    f"{npz}: array {key!r} of shape {value.shape} does not fit {meta} "
                    f"(field {field!r} is {want}, the array has {size})"
                )


# ---------------------------------------------------------------------- the corrections


def _constant_mask(var: np.ndarray, mean: np.ndarray, n: int) -> np.ndarray:
    # scikit-learn's test for a constant feature despite float64 rounding
    eps = np.finfo(np.float64).eps
    return var <= n * eps * var + (n * mean * eps) ** 2


@dataclass(frozen=True)
class Moments:
    """Count, mean and population variance per dimension of a set of vectors.

    Two merge exactly (Chan, Golub & LeVeque 1979): with ``d = mean_b - mean_a`` and
    ``n = n_a + n_b``, ``mean = mean_a + d n_b / n`` and
    ``var = (n_a var_a + n_b var_b + d^2 n_a n_b / n) / n``, so statistics computed on the
    shards of a corpus, on any workers, merge into those of the whole corpus.

    Attributes:
        n: vectors counted.
        mean, var: float64 ``(dim,)`` for 2-D input, ``(n_layers, dim)`` (per layer) for 3-D.
    """

    n: int
    mean: np.ndarray
    var: np.ndarray

    @classmethod
    def of(cls, x: np.ndarray) -> Moments:
        """The moments of ``x`` ``(n, dim)`` or ``(n, n_layers, dim)``, computed in float64."""
        x64 = np.asarray(x, dtype=np.float64)
        mean = x64.mean(axis=0)
        return cls(int(x64.shape[0]), mean, ((x64 - mean) ** 2).mean(axis=0))

    def merge(self, other: Moments) -> Moments:
        """The moments of both sets together."""
        if self.mean.shape != other.mean.shape:
            raise MismatchError(f"moments of shape {self.mean.shape} and {other.mean.shape}")
        if other.n == 0:
            return self
        if self.n == 0:
            return other
        n = self.n + other.n
        delta = other.mean - self.mean
        mean = self.mean + delta * (other.n / n)
        m2 = self.var * self.n + other.var * other.n + delta**2 * (self.n * other.n / n)
        return Moments(n, mean, m2 / n)


class Standardizer(Correction):
    """Z-scores per dimension: ``z = (x - mean_) / scale_``.

    ``mean_`` is the mean over the reference vectors and ``scale_`` their population standard
    deviation (ddof = 0), per dimension (and per layer for 3-D input).

    A dimension constant on the reference corpus (sigma = 0) has no z-score; ``zero_variance``
    decides: ``"center"`` (scikit-learn's rule: ``scale_ = 1`` there, output ``x - mean_``),
    ``"zero"`` (output 0 there), or ``"error"`` (``fit`` raises InputError). The mask is kept in
    ``zero_variance_``.

    :meth:`partial_fit` follows scikit-learn's convention: each call merges a batch into the
    running ``n_samples_seen_``, ``mean_`` and ``var_`` exactly (:class:`Moments`), so partial
    fits over the parts of a corpus equal one ``fit`` on all of it (to float64 rounding);
    :meth:`partial_fit_moments` merges moments computed elsewhere (a shard on a Ray worker).

    Args:
        zero_variance: the policy above.
    """

    name = "zscore"
    label = "standardized"
    state_names = ("mean", "scale", "var", "zero_variance")

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

    def state_problem(self) -> str | None:
        """A scale that is not positive (a z-score divides by it: infinite or NaN vectors), or
        a policy for constant dimensions that is none of ``center``, ``zero``, ``error``."""
        if self.zero_variance not in ("center", "zero", "error"):
            return f"zero_variance is {self.zero_variance!r}, not center, zero or error"
        scale = np.asarray(self.scale_)
        if scale.size and not (scale > 0).all():
            return (
                f"scale holds {int((~(scale > 0)).sum())} value(s) <= 0 (a z-score divides by it)"
            )
        return None

    def _transform_layer(self, x: np.ndarray, state: Mapping[str, np.ndarray]) -> np.ndarray:
        z = (x - state["mean"]) / state["scale"]
        if self.zero_variance == "zero":
            z[:, state["zero_variance"]] = 0.0
        return z

    def partial_fit(
        self, X: Any, y: Any = None, *, provenance: Provenance | None = None
    ) -> Standardizer:
        """Merge a batch ``X`` (``(n, dim)`` or ``(n, n_layers, dim)``, n >= 1, the layout of
        earlier batches) into the statistics and return ``self``."""
        x = check_array(X)
        return self.partial_fit_moments(Moments.of(x), provenance=provenance)

    def partial_fit_moments(
        self, moments: Moments, *, provenance: Provenance | None = None
    ) -> Standardizer:
        """Merge moments computed elsewhere, as :meth:`partial_fit` on their vectors would.

        Raises:
            MismatchError: another width or layer count than the statistics so far.
            InputError: ``zero_variance="error"`` and a dimension constant so far.
        """
        if self.zero_variance not in ("center", "zero", "error"):
            raise InputError(f"zero_variance must be center|zero|error, got {self.zero_variance!r}")
        total = moments
        if getattr(self, "n_samples_seen_", 0):
            if moments.mean.shape != self.mean_.shape:
                raise MismatchError(
                    f"partial_fit: statistics of shape {self.mean_.shape} so far; this batch "
                    f"has {moments.mean.shape}"
                )
            total = Moments(self.n_samples_seen_, self.mean_, self.var_).merge(moments)
        const = _constant_mask(total.var, total.mean, total.n)
        if const.any() and self.zero_variance == "error":
            raise InputError(f"dimensions {np.flatnonzero(const)[:10].tolist()} have sigma = 0")
        self.mean_: np.ndarray = total.mean
        self.var_: np.ndarray = total.var
        self.zero_variance_: np.ndarray = const
        self.scale_: np.ndarray = np.where(const, 1.0, np.sqrt(total.var))
        self.n_features_in_ = int(total.mean.shape[-1])
        self.n_layers_ = None if total.mean.ndim == 1 else int(total.mean.shape[0])
        self.n_samples_seen_ = int(total.n)
        if provenance is not None or not hasattr(self, "provenance_"):
            self.provenance_ = provenance if provenance is not None else Provenance()
        return self


class MeanCenterer(Correction):
    """Subtract the reference mean: ``x - mean_``."""

    name = "center"
    label = "centered"
    state_names = ("mean",)

    def _fit_layer(self, x: np.ndarray) -> dict[str, np.ndarray]:
        return {"mean": x.mean(axis=0)}

    def _transform_layer(self, x: np.ndarray, state: Mapping[str, np.ndarray]) -> np.ndarray:
        return x - state["mean"]


class AllButTheTop(Correction):
    """All-but-the-top (Mu & Viswanath 2018): center, then remove the top ``D`` principal
    directions: ``x~ = x - mean_``, ``x~ - components_.T @ components_ @ x~``.

    Args:
        n_components: ``D``; None = ``max(1, round(dim / 100))`` (the paper's rule of thumb).
    """

    name = "abtt"
    label = "all-but-the-top"
    state_names = ("mean", "components")
    state_axes = {"components": ("n_components", "dim")}

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


class Whitener(Correction):
    """Whitening (Su et al. 2021): ``(x - mean_) @ whitening_``, ``whitening_ = U diag(s)^-1/2``
    over the first ``k`` eigenvectors of the (population) covariance.

    Directions with eigenvalue <= ``rtol * max eigenvalue`` carry no variance in the reference
    corpus; their column is set to 0 instead of dividing by ~0 (``eigenvalues_``, descending,
    shows which).

    Args:
        n_components: ``k``; None keeps all ``dim`` dimensions.
        rtol: relative eigenvalue threshold for degenerate directions.
    """

    name = "whiten"
    label = "whitened"
    state_names = ("mean", "whitening", "eigenvalues")
    state_axes = {"whitening": ("dim", "n_components")}

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

    def _transform_layer(self, x: np.ndarray, state: Mapping[str, np.ndarray]) -> np.ndarray:
        return (x - state["mean"]) @ state["whitening"]


class Identity(Correction):
    """No correction (only the layout and width checks), for a uniform code path."""

    name = "none"
    label = "raw"
    state_names = ()

    def _fit_layer(self, x: np.ndarray) -> dict[str, np.ndarray]:
        return {}

    def _transform_layer(self, x: np.ndarray, state: Mapping[str, np.ndarray]) -> np.ndarray:
        return x


#: Every correction, in the order tables and figures show them (raw first). A new correction
#: is a :class:`~workbench.geometry.correction.Correction` subclass with its ``name`` and
#: ``label``, and its line here.
_REGISTRY: dict[str, type[Correction]] = {
    cls.name: cls for cls in (Identity, MeanCenterer, Standardizer, AllButTheTop, Whitener)
}
#: The default correction: z-scores per layer and dimension.
DEFAULT_CORRECTION = "zscore"
#: Every correction's name as choices offer them: the default first, raw ("none") last.
CORRECTIONS: tuple[str, ...] = (
    DEFAULT_CORRECTION,
    *(name for name in _REGISTRY if name not in (DEFAULT_CORRECTION, "none")),
    "none",
)
#: How tables and figures name each correction (each class's ``label``), in their order.
CORRECTION_LABELS: dict[str, str] = {name: cls.label for name, cls in _REGISTRY.items()}


def make_correction(name: CorrectionName | str, **params: Any) -> Correction:
    """An unfitted correction by name: ``"zscore" | "center" | "abtt" | "whiten" | "none"``.

    Args:
        name: the correction.
        **params: its parameters (``n_components`` for abtt and whiten, ``zero_variance`` for
            zscore, ``rtol`` for whiten).

    Raises:
        InputError: an unknown name or parameter.
    """
    if name not in _REGISTRY:
        raise InputError(f"unknown correction {name!r}; choose from {list(CORRECTIONS)}")
    try:
        return _REGISTRY[name](**params)
    except TypeError as exc:
        raise InputError(f"bad parameters for {name!r}: {exc}") from None
