"""What a WSD system is: :class:`System`, the base of every system of the registry
(:data:`workbench.wsd.systems.registry.SYSTEMS`), and :class:`Request`, what a caller asks it
to open with.

A system has a name (``--system NAME``, the app's choice), a label for the app's choice of
systems, a help text for the command line, a one-line description for reports, the preset of
its index (:class:`~workbench.wsd.presets.IndexPreset`: settings and training corpus), whether
it is offered for a model and why not (:meth:`System.missing`), what it scores
(:meth:`System.f1_phrase`), and :meth:`System.open`, which returns the
:class:`~workbench.wsd.opened.OpenedSystem` that answers. One module of this package per kind
of system defines its subclass and instances.

Example::

    system = SYSTEMS["best"]
    system.missing("bert-base-uncased")     # None, or why it is not offered (no SemCor here)
    system.choice_label(fingerprint, "float32")  # 'best: SemCor + ... (70.2 F1 on ALL ...)'
    system.open(Request(model="bert-base-uncased"))  # an OpenedSystem; nothing loaded yet
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, ClassVar

from workbench.encoding.device import DtypeName
from workbench.encoding.encoder import Encoder
from workbench.encoding.pooling import Pooling
from workbench.lexicon.wordnet import WordNet
from workbench.wsd.builds import SystemProgress
from workbench.wsd.levers import DEFAULT_LEVERS, TestTimeLevers
from workbench.wsd.opened import OpenedSystem
from workbench.wsd.presets import IndexPreset, measured_f1_all, packaged_f1


@dataclass(frozen=True)
class Request:
    """What a system is opened with (:func:`workbench.wsd.systems.open_system`'s arguments).

    Attributes:
        model: HF id or local directory (None: the packaged default model).
        device, dtype, pooling: the encoder's.
        encoder: the encoder to read with (None: made when first needed, :meth:`encoder_of`).
        wordnet: WordNet, for the indexes built (None: loaded when needed).
        changes: index settings that differ from the system's (``{"layers": "5"}``).
        train: the training corpus of the index (None: the system's own).
        gold: the gold key file of a ``train`` path.
        say: called with a line before a long build starts.
        levers: the bi-encoder's test-time weights (a weight not given: its folder's own).
    """

    model: str | None = None
    device: str | None = None
    dtype: DtypeName = "auto"
    pooling: Pooling = "mean"
    encoder: Encoder | None = None
    wordnet: WordNet | None = None
    changes: Mapping[str, Any] | None = None
    train: str | None = None
    gold: str | None = None
    say: SystemProgress = None
    levers: TestTimeLevers = DEFAULT_LEVERS

    def encoder_of(self) -> Encoder | Any:
        """The encoder given, or a function making the encoder of these settings when first
        needed (nothing loads here)."""
        if self.encoder is not None:
            return self.encoder
        model, device, dtype, pooling = self.model, self.device, self.dtype, self.pooling
        return lambda: Encoder(model=model, device=device, dtype=dtype, pooling=pooling)


@dataclass(frozen=True)
class System(IndexPreset, ABC):
    """A named WSD system (see the module docstring): its preset (``name``, ``config``,
    ``training``, ``description``) and what a user is told of it.

    Attributes:
        label: its name in the app's choice of systems (:meth:`choice_label` adds the F1).
        help: what the command line's ``--system`` help says of it, in a phrase.
    """

    label: str
    help: str

    #: Whether it answers with a bi-encoder: its scores are dot products with gloss vectors,
    #: the test-time levers (``--smoothing``, ``--prior``) apply to it, and it has no index
    #: settings to change (``--layers``, ``--gloss`` ...).
    is_biencoder: ClassVar[bool] = False

    @abstractmethod
    def open(self, request: Request) -> OpenedSystem:
        """The system, ready to answer for ``request`` (nothing heavy happens here: the model
        loads when the system first needs its encoder, an index when it first answers)."""

    def missing(self, model: str | None) -> str | None:
        """Why the system is not offered for ``model`` (None: the packaged default), in one
        line; None when it is."""
        return None

    @property
    def f1_all(self) -> float:
        """F1 on ALL with the packaged all-MiniLM-L6-v2 in float32, as recorded
        (:func:`~workbench.wsd.presets.packaged_f1`); NaN where nothing is recorded."""
        return packaged_f1(self.name)

    def packaged_f1(self) -> float | None:
        """What it scores with the packaged model (None or NaN: not measured)."""
        return self.f1_all

    def measured_f1(self, fingerprint: str, dtype: str) -> float | None:
        """F1 on ALL recorded for the model of ``fingerprint`` computing in ``dtype``; None
        where that combination was not measured (another model, say)."""
        return measured_f1_all().get((self.name, fingerprint, dtype))

    def f1_phrase(self, fingerprint: str, dtype: str) -> str:
        """What a user is told it scores with this model: its own measured F1 on ALL, or the
        packaged model's with that said."""
        f1 = self.measured_f1(fingerprint, dtype)
        if f1 is not None:
            return f"{f1} F1 on ALL with this model in {dtype}"
        packaged = self.packaged_f1()
        if packaged is None or packaged != packaged:  # NaN: nothing recorded
            return "not measured"
        return f"{packaged} F1 on ALL with the packaged model; not measured for this one"

    def choice_label(self, fingerprint: str, dtype: str) -> str:
        """Its label in a choice of systems, with what it scores for the model of
        ``fingerprint`` in ``dtype`` (:meth:`f1_phrase`)."""
        return f"{self.label} ({self.f1_phrase(fingerprint, dtype)})"
