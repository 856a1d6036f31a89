"""The correction base class: per-layer fitting, layout checks, provenance, save.

Concrete corrections (z-scores, centering, all-but-the-top, whitening) and
:func:`~workbench.geometry.corrections.load_correction` live in
:mod:`workbench.geometry.corrections`.
"""

from __future__ import annotations

import dataclasses
import inspect
import json
import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar, TypeVar

import numpy as np

from workbench import __version__
from workbench.errors import InputError, MismatchError
from workbench.fileio import remove_stale_temporaries, sha256_file
from workbench.outputs import output_file, refuse_foreign


@dataclass(frozen=True)
class Provenance:
    """What a correction was fitted on.

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


def check_array(x: Any, name: str = "X", min_rows: int = 1) -> np.ndarray:
    """``x`` as an array of ``(n, dim)`` or ``(n, n_layers, dim)`` finite numbers, n at least
    ``min_rows``: 1 to transform (one query row is a whole input), 2 to fit (a spread needs
    two).

    Raises:
        InputError: naming ``name`` and what is wrong (shape, dtype, too few rows, the first
            row holding NaN or inf).
    """
    x = np.asarray(x)
    if x.ndim not in (2, 3):
        raise InputError(f"{name} must be (n, dim) or (n, n_layers, dim), got shape {x.shape}")
    if x.dtype.kind not in "fiu":
        raise InputError(f"{name} must be numeric, got dtype {x.dtype}")
    if x.shape[0] < min_rows:
        need = {1: "one vector", 2: "two vectors"}.get(min_rows, f"{min_rows} vectors")
        raise InputError(f"{name}: need at least {need}, got {x.shape[0]}")
    finite = np.isfinite(x).reshape(x.shape[0], -1).all(axis=1)
    if not finite.all():
        raise InputError(f"{name}: row {int(np.argmin(finite))} contains NaN or inf")
    return x


_P = TypeVar("_P", bound="Correction")


class Correction:
    """Base class: per-layer fitting, layout checks, provenance, save/load.

    Subclasses define ``name`` and ``label`` (how tables and figures name it), ``state_names``
    (the names of the learned arrays: each is the attribute ``<name>_`` after fitting, and an
    array of the saved ``.npz``), ``_fit_layer(x) -> dict`` and ``_transform_layer(x, state) ->
    array`` on one layer's ``(n, dim)`` float64 array.

    scikit-learn's estimator conventions without importing scikit-learn (an import every app
    page that fits a correction would pay): ``__init__`` only stores its keyword
    parameters, :meth:`get_params` / :meth:`set_params` read and set them, so
    ``sklearn.base.clone`` and ``Pipeline`` work on a correction.
    """

    # ------------------------------------------------------------------ parameters
    @classmethod
    def _param_names(cls) -> list[str]:
        init = inspect.signature(cls.__init__).parameters.values()
        return sorted(
            p.name for p in init if p.name != "self" and p.kind == p.POSITIONAL_OR_KEYWORD
        )

    def get_params(self, deep: bool = True) -> dict[str, Any]:
        """The constructor's parameters and their values (scikit-learn's ``get_params``)."""
        return {name: getattr(self, name) for name in self._param_names()}

    def set_params(self: _P, **params: Any) -> _P:
        """Set constructor parameters by name (scikit-learn's ``set_params``)."""
        known = self._param_names()
        for name, value in params.items():
            if name not in known:
                raise InputError(
                    f"{type(self).__name__} has no parameter {name!r}; known: {', '.join(known)}"
                )
            setattr(self, name, value)
        return self

    def __repr__(self) -> str:
        params = ", ".join(f"{k}={v!r}" for k, v in self.get_params().items())
        return f"{type(self).__name__}({params})"

    name: ClassVar[str] = ""
    label: ClassVar[str] = ""  # how tables and figures name it ("standardized")
    state_names: ClassVar[tuple[str, ...]] = ()
    #: The axes of each learned array of one layer, by name: ``"dim"`` is the input width
    #: (``n_features_in_``), another name a size shared by the arrays that use it. An array
    #: not listed is one vector of ``dim`` (checked on load).
    state_axes: ClassVar[dict[str, tuple[str, ...]]] = {}

    # ------------------------------------------------------------------ subclass hooks
    def _fit_layer(self, x: np.ndarray) -> dict[str, np.ndarray]:
        raise NotImplementedError

    def _transform_layer(self, x: np.ndarray, state: Mapping[str, np.ndarray]) -> np.ndarray:
        raise NotImplementedError

    def state_problem(self) -> str | None:
        """Why the learned arrays (read back from a file) cannot be this correction's, in
        words; None when they can. The base class has nothing to add to the layout checks;
        a subclass refuses values its transform cannot use (a z-score's scale of 0)."""
        return None

    # ------------------------------------------------------------------ contract
    def fit(self: _P, X: Any, y: Any = None, *, provenance: Provenance | None = None) -> _P:
        """Learn the correction from reference vectors ``X`` and return ``self``.

        Args:
            X: ``(n, dim)`` or ``(n, n_layers, dim)``, n >= 2, finite.
            y: ignored (scikit-learn compatibility).
            provenance: what ``X`` was computed from (checked again at transform time).
        """
        x = check_array(X, min_rows=2)
        layers = [x] if x.ndim == 2 else [x[:, k, :] for k in range(x.shape[1])]
        states = [self._fit_layer(np.asarray(layer, dtype=np.float64)) for layer in layers]
        for key in self.state_names:
            arrays = [s[key] for s in states]
            setattr(self, f"{key}_", arrays[0] if x.ndim == 2 else np.stack(arrays))
        self.n_features_in_ = int(x.shape[-1])
        self.n_layers_ = None if x.ndim == 2 else int(x.shape[1])
        self.n_samples_seen_ = int(x.shape[0])
        self.provenance_ = provenance if provenance is not None else Provenance()
        return self

    def fit_embeddings(self: _P, emb: Any, corpus: str = "", corpus_hash: str = "") -> _P:
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
        """Apply the fitted correction; same layout as ``X`` (one row or more), float32.

        Raises:
            MismatchError: another width or layer count than at fit time, or a ``provenance``
                that names another model / pooling / layers.
        """
        self._check_fitted()
        x = check_array(X)
        self._check_layout(x)
        if provenance is not None:
            self.check_compatible(provenance)
        if x.ndim == 2:
            state = {k: getattr(self, f"{k}_") for k in self.state_names}
            return self._transform_layer(np.asarray(x, np.float64), state).astype(np.float32)
        out = [
            self._transform_layer(
                np.asarray(x[:, k, :], np.float64),
                {s: getattr(self, f"{s}_")[k] for s in self.state_names},
            ).astype(np.float32)
            for k in range(x.shape[1])
        ]
        return np.stack(out, axis=1)

    def fit_transform(
        self, X: Any, y: Any = None, *, provenance: Provenance | None = None
    ) -> np.ndarray:
        """``fit(X).transform(X)``."""
        return self.fit(X, provenance=provenance).transform(X)

    def transform_embeddings(self, emb: Any) -> np.ndarray:
        """Transform a LayerwiseEmbeddings fitted per layer: checks model and pooling, picks the
        fitted layers out of ``emb.layers``; returns ``(n, n_layers, dim)`` float32."""
        self._check_fitted()
        mine = self.provenance_
        if not mine.layers:
            raise MismatchError("this correction was not fitted per layer on embeddings")
        self.check_compatible(dataclasses.replace(Provenance.from_embeddings(emb), layers=()))
        have = [int(v) for v in emb.layers]
        missing = [layer for layer in mine.layers if layer not in have]
        if missing:
            raise MismatchError(f"fitted on layers {list(mine.layers)}; embeddings lack {missing}")
        slots = [have.index(layer) for layer in mine.layers]
        return self.transform(emb.vectors[:, slots, :])

    # ------------------------------------------------------------------ persistence
    def save(self, path: str | os.PathLike[str], overwrite: bool = False) -> tuple[Path, Path]:
        """Write ``<stem>.npz`` (learned arrays) and ``<stem>.json`` (kind, parameters,
        provenance, shapes, the npz's SHA-256), each whole or not at all; a ``.json`` left
        beside another writer's ``.npz`` is refused on load (the SHA-256). A file of those
        names that the workbench did not write is replaced only with ``overwrite``. Returns
        both paths."""
        self._check_fitted()
        npz, meta = saved_paths(path)
        for target in (npz, meta):
            refuse_foreign(target, overwrite)  # both refused before either is written
        remove_stale_temporaries(npz.parent, [npz.name, meta.name])  # of killed writers
        with output_file(npz, overwrite=overwrite, suffix=".npz") as tmp:
            np.savez(tmp, **{k: getattr(self, f"{k}_") for k in self.state_names})
        info = {
            "kind": self.name,
            "params": self.get_params(),
            "n_features_in": self.n_features_in_,
            "n_layers": self.n_layers_,
            "n_samples_seen": self.n_samples_seen_,
            "provenance": dataclasses.asdict(self.provenance_),
            "npz_sha256": sha256_file(npz),
            "workbench_version": __version__,
        }
        with output_file(meta, overwrite=overwrite) as tmp:
            tmp.write_text(json.dumps(info, indent=2) + "\n", encoding="utf-8")
        return npz, meta


def saved_paths(path: str | os.PathLike[str]) -> tuple[Path, Path]:
    """The ``(.npz, .json)`` pair a correction is saved to: ``path`` with or without either
    suffix names the same pair (``z`` -> ``z.npz`` and ``z.json``)."""
    p = Path(path)
    if p.suffix in (".npz", ".json"):
        p = p.with_suffix("")
    return p.with_name(p.name + ".npz"), p.with_name(p.name + ".json")
