"""The part of speech of a word in context, read off its contextual vector by a linear probe.

A user asking which sense a word has rarely says its POS, and a word's senses span several
(``mouse``: the rodent and the computer device as nouns, "to mouse" as a verb). The probe is a
multinomial logistic regression from a word's contextual vector at a layer spec (:attr:`PosProbe.
layers`: a middle layer reads POS better than the last, which the WSD system reads) to WordNet's
four POS (``NOUN``, ``VERB``, ``ADJ``, ``ADV``), fitted on the sense-annotated words of a corpus
(SemCor's 226k carry their POS). A WSD bi-encoder keeps its probe beside its
adapters (:data:`PROBE_FILE`, a few KB of weights); :func:`workbench.wsd.disambiguate.
disambiguate` asks it when no POS is given and chooses among the predicted POS's senses.

Saved as ``.npz`` (weights, bias, class names) and read with ``allow_pickle=False``: loading it
runs no code.

Example::

    probe = PosProbe(layers="3").fit(emb.select("3"), ["NOUN", "VERB", ...])
    probe.predict_proba(emb.select(probe.layers)[:1])         # (1, 4), columns probe.classes_
    probe.save(Path("runs/wsd") / PROBE_FILE)
"""

from __future__ import annotations

import zipfile
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from workbench.encoding.pooling import LayerSpec
from workbench.errors import DataError, InputError
from workbench.fileio import atomic_path
from workbench.lexicon.wordnet import POS_TAGS
from workbench.limits import check_finite, check_npz

#: The probe of a bi-encoder directory.
PROBE_FILE = "pos_probe.npz"


class PosProbe:
    """Context vector -> POS, a multinomial logistic regression (scikit-learn's contract).

    Args:
        layers: the layer spec of the vectors it reads (:class:`~workbench.encoding.pooling.
            LayerSpec`).
        c: inverse regularisation strength.
        max_iter: the solver's iterations at most.

    Attributes:
        coef_: ``(n_classes, dim)`` float32; intercept_: ``(n_classes,)``; classes_: POS names.
    """

    def __init__(self, layers: str = "-1", c: float = 1.0, max_iter: int = 500) -> None:
        self.layers = layers
        self.c = c
        self.max_iter = max_iter

    def fit(self, vectors: np.ndarray, labels: Sequence[str] | np.ndarray) -> PosProbe:
        """Fit on ``(n, dim)`` vectors and their POS (of :data:`POS_TAGS`)."""
        from sklearn.linear_model import LogisticRegression

        x = np.asarray(vectors, dtype=np.float32)
        y = np.asarray(labels)
        if len(x) != len(y) or not len(x):
            raise InputError(f"{len(x)} vectors and {len(y)} labels: a probe needs both, alike")
        unknown = sorted(set(y.tolist()) - set(POS_TAGS))
        if unknown:
            raise InputError(f"labels outside WordNet's POS ({', '.join(POS_TAGS)}): {unknown}")
        model = LogisticRegression(C=self.c, max_iter=self.max_iter)
        model.fit(x, y)
        self.coef_ = model.coef_.astype(np.float32)
        self.intercept_ = model.intercept_.astype(np.float32)
        self.classes_ = tuple(str(c) for c in model.classes_)
        if len(self.classes_) == 2:  # sklearn's binary form: one row for the second class
            self.coef_ = np.concatenate([-self.coef_, self.coef_])
            self.intercept_ = np.concatenate([-self.intercept_, self.intercept_])
        return self

    def predict_proba(self, vectors: np.ndarray) -> np.ndarray:
        """``(n, n_classes)`` probabilities, columns in :attr:`classes_` order."""
        logits = np.asarray(vectors, dtype=np.float32) @ self.coef_.T + self.intercept_
        logits -= logits.max(axis=1, keepdims=True)
        p = np.exp(logits)
        return p / p.sum(axis=1, keepdims=True)

    def predict(self, vectors: np.ndarray) -> list[str]:
        """The most probable POS of each vector."""
        return [self.classes_[i] for i in self.predict_proba(vectors).argmax(axis=1)]

    def save(self, path: str | Path) -> Path:
        """Write the probe to ``path`` (``.npz``), whole or not at all."""
        path = Path(path)
        check_finite(self.coef_, "the probe's weights")
        check_finite(self.intercept_, "the probe's bias")
        with atomic_path(path, suffix=".npz") as tmp:
            np.savez(tmp, coef=self.coef_, intercept=self.intercept_,
                     classes=np.array(self.classes_, dtype=str),
                     layers=np.array(self.layers))  # fmt: skip
        return path


def load_probe(path: str | Path) -> PosProbe | None:
    """The probe saved at ``path``; None when there is no file.

    Raises:
        DataError: a damaged file, one of another shape, or weights that are not all finite.
    """
    path = Path(path)
    if not path.is_file():
        return None
    try:
        check_npz(path)
        with np.load(path, allow_pickle=False) as data:
            coef = np.asarray(data["coef"], dtype=np.float32)
            intercept = np.asarray(data["intercept"], dtype=np.float32)
            classes = tuple(str(c) for c in data["classes"].tolist())
            layers = str(data["layers"])
        LayerSpec.parse(layers)
        if coef.ndim != 2 or coef.shape[0] != len(classes) or intercept.shape != (len(classes),):
            raise ValueError(f"weights of shape {coef.shape} for {len(classes)} classes")
        if not set(classes) <= set(POS_TAGS):
            raise ValueError(f"classes {classes} are not WordNet POS")
        check_finite(coef, "its weights")
        check_finite(intercept, "its bias")
    except (OSError, ValueError, KeyError, EOFError, zipfile.BadZipFile, DataError) as exc:
        raise DataError(f"{path} is not a readable POS probe ({exc})") from exc
    probe = PosProbe(layers)
    probe.coef_, probe.intercept_, probe.classes_ = coef, intercept, classes
    return probe
