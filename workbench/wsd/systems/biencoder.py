"""The gloss-informed bi-encoder (``--system biencoder``, the default): the trained context
encoder's vector of the word against the gloss vector of each candidate sense
(:mod:`workbench.wsd.biencoder`).

The package ships one for its default model; a directory trained by ``workbench finetune wsd``
answers the same way, with the test-time levers its folder records unless others are given
(:func:`~workbench.wsd.levers.folder_levers`). Nothing is built ahead. For a model without one,
:data:`FALLBACK_SYSTEM` answers and the opened system's note says so (:func:`fallback_note`).
It alone takes the test-time levers (:mod:`workbench.wsd.levers`) and has no index settings to
change.

Example::

    BIENCODER_SYSTEM.open(Request()).name                       # 'biencoder'
    BIENCODER_SYSTEM.open(Request(model="bert-base-uncased")).note
    # "there is no trained WSD bi-encoder for 'bert-base-uncased', so the 'best' system ..."
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

from workbench.encoding.encoder import Encoder
from workbench.encoding.rows import Progress
from workbench.errors import InputError, ModelLoadError
from workbench.wsd.biencoder import (
    CONTEXT_POOLING,
    biencoder_dir,
    finished_card,
    load_biencoder,
    shipped_biencoder,
)
from workbench.wsd.builds import semcor_frequencies
from workbench.wsd.levers import folder_f1, folder_levers, with_prior
from workbench.wsd.opened import Lemmas, OpenedSystem
from workbench.wsd.presets import BIENCODER, PACKAGED_FINGERPRINT
from workbench.wsd.systems.base import Request, System
from workbench.wsd.systems.centroids import BEST_SYSTEM

#: The system the bi-encoder hands over to for a model it was not trained on.
FALLBACK_SYSTEM = BEST_SYSTEM


def fallback_note(model: str | None) -> str:
    """Why the :data:`FALLBACK_SYSTEM` answers where the bi-encoder was asked for."""
    what = "the packaged default model" if model is None else f"'{model}'"
    return (
        f"there is no trained WSD bi-encoder for {what}, so the '{FALLBACK_SYSTEM.name}' system "
        "answers (`workbench finetune wsd` trains one)"
    )


def shipped_f1() -> float | None:
    """F1 on ALL of the shipped bi-encoder as it answers: the figure its levers file records
    measured with its test-time levers (:func:`workbench.wsd.levers.folder_f1`), else its
    training card's test score (None: none shipped, or neither is recorded)."""
    directory = shipped_biencoder()
    if directory is None:
        return None
    try:
        answered = folder_f1(directory)
        if answered is not None:
            return answered
        test = finished_card(directory).get("test") or {}
        return round(100 * float(test["f1"]), 1)
    except (ModelLoadError, KeyError, TypeError, ValueError):
        return None


@dataclass(frozen=True)
class BiEncoderSystem(System):
    """The bi-encoder of the model (a bi-encoder directory, or the one the package ships for
    that base model): offered where the model has one."""

    is_biencoder: ClassVar[bool] = True

    def missing(self, model: str | None) -> str | None:
        """Why it is not offered: no bi-encoder was trained for ``model`` (None when one was)."""
        if biencoder_dir(model) is not None:
            return None
        what = "the packaged default model" if model is None else f"'{model}'"
        return (
            f"no WSD bi-encoder was trained for {what} (the package ships one for "
            "all-MiniLM-L6-v2); `workbench finetune wsd` trains one"
        )

    def open(self, request: Request) -> OpenedSystem:
        """The bi-encoder of ``request.model``, with ``request.levers`` over the ones its folder
        records (:func:`~workbench.wsd.levers.folder_levers`: the shipped one smooths by 0.25);
        for a model without one, :data:`FALLBACK_SYSTEM` with a note saying so.

        Raises:
            InputError: index settings changed (it has none), ``pooling`` other than the one
                it was trained with.
            ModelLoadError: the folder's levers file is damaged.
        """
        directory = biencoder_dir(request.model)
        if directory is None:
            notes = [fallback_note(request.model)]
            if request.levers.active:
                notes.append(
                    f"the bi-encoder's test-time levers ({request.levers.label}) do not apply to it"
                )
            return FALLBACK_SYSTEM.open_noted(request, notes)
        levers = request.levers.over(folder_levers(directory))
        weights = levers.describe()
        if request.changes:
            raise InputError(
                f"{', '.join(request.changes)}: the bi-encoder has no index settings to change"
            )
        if request.pooling != CONTEXT_POOLING:
            raise InputError(
                f"the bi-encoder pools a word's subwords as it was trained "
                f"('{CONTEXT_POOLING}'), not '{request.pooling}': leave --pooling out"
            )
        wordnet = request.wordnet

        def gloss_index(enc: Encoder, lemmas: Lemmas | None, progress: Progress) -> Any:
            assert opened.biencoder is not None
            index = opened.biencoder.index(lemmas, wordnet, progress, weights["smoothing"])
            if weights["prior"]:
                index = with_prior(index, semcor_frequencies(), weights["prior"])
            return index

        device, dtype = request.device, request.dtype
        opened = OpenedSystem(
            self.name,
            for_lemmas=gloss_index,
            biencoder=lambda: load_biencoder(str(directory), device, dtype),
            levers=levers,
            description=self.description,
        )
        return opened

    def packaged_f1(self) -> float | None:
        """The shipped bi-encoder's F1 as it answers (:func:`shipped_f1`)."""
        return shipped_f1()

    def measured_f1(self, fingerprint: str, dtype: str) -> float | None:
        """The shipped one's F1 (its training card), for the packaged model; None for others."""
        return shipped_f1() if fingerprint == PACKAGED_FINGERPRINT else None

    def f1_phrase(self, fingerprint: str, dtype: str) -> str:
        """Its F1 on ALL as shipped, for the packaged model (:meth:`System.f1_phrase`)."""
        f1 = self.measured_f1(fingerprint, dtype)
        if f1 is not None:
            return f"{f1} F1 on ALL as shipped"
        return super().f1_phrase(fingerprint, dtype)


#: ``biencoder``: the default system.
BIENCODER_SYSTEM = BiEncoderSystem(
    **vars(BIENCODER),
    label="bi-encoder: trained context vs. gloss vectors",
    help="default: the gloss-informed bi-encoder shipped for the packaged model, or the one in "
    f"--model DIR; no index to build; a model without one falls back to {FALLBACK_SYSTEM.name}",
)
