"""A WSD system ready to answer: the one value :func:`workbench.wsd.systems.open_system` returns.

An :class:`OpenedSystem` answers what every caller asks: which system answers (:attr:`name`)
and what to tell the user about it (:attr:`note`: why another system answers than the one
asked for), the encoder whose word vectors it reads (:attr:`encoder`), how a word's candidates
are scored (:meth:`index`: the sense index for the ``(lemma, POS)`` pairs an input needs), and
the POS probe that answers when no POS is given (:attr:`pos_probe`). Nothing heavy happens when
it is made: the model loads on the first use of :attr:`encoder`, and an index is built or
loaded on the first call of :meth:`index` (kept after, when it is the same for every input).
:func:`workbench.wsd.disambiguate.disambiguate` and
:func:`workbench.wsd.evaluate.evaluate_corpus` take it.

Example::

    opened = open_system("best")                 # nothing loaded yet
    opened.inputs                                # (('semcor', None),): read when it is built
    index = opened.index([("bank", "NOUN")])     # loads the model, builds or loads the index
    OpenedSystem.of_index(encoder, index)        # a system answering from an index in hand
"""

from __future__ import annotations

import functools
import threading
from collections.abc import Callable, Sequence
from typing import Any

from workbench.encoding.encoder import Encoder
from workbench.encoding.pooling import LayerSpec
from workbench.encoding.rows import Progress
from workbench.wsd.biencoder import BIENCODER_DESCRIPTION, BiEncoder
from workbench.wsd.builds import SystemProgress
from workbench.wsd.index import SenseIndex
from workbench.wsd.levers import TestTimeLevers
from workbench.wsd.pos_probe import PosProbe
from workbench.wsd.presets import BIENCODER

Lemmas = Sequence[tuple[str, str]]
#: The index of a system that is the same for every input, from its encoder (built or loaded).
WholeIndex = Callable[[Encoder, Progress, SystemProgress], SenseIndex]
#: The index of a system for the ``(lemma, POS)`` pairs an input needs (None: every sense).
LemmaIndex = Callable[[Encoder, Lemmas | None, Progress], SenseIndex]
#: What :meth:`OpenedSystem.describe` says of a system answering with settings of its own.
CALLER_SETTINGS = "settings given by the caller"
#: ``pos_probe``'s default: the bi-encoder's probe (None without a bi-encoder).
BIENCODER_PROBE = "the bi-encoder's"


class OpenedSystem:
    """A WSD system ready to answer (see the module docstring).

    Args:
        name: the system that answers, after the bi-encoder's hand-over (``biencoder``,
            ``best``, ``plain``, ``wordnet``; without SemCor a SemCor system's index is the
            WordNet-only one, which :attr:`note` says), ``custom`` for settings of its own,
            ``saved`` for a saved folder.
        encoder: its encoder, or a function loading it when first needed.
        whole: its index when that is the same for every input (a SemCor system's, a saved
            one): a function of the encoder, called once.
        for_lemmas: else its index for the lemmas an input needs, a function of the encoder.
        note: why another system answers than the one asked for ("" when it is that one).
        biencoder: the bi-encoder that answers, or a function loading it (None: none does).
        pos_probe: the POS probe (default: the bi-encoder's, None without one).
        builds_ahead: whether its index is a long build worth starting ahead (a SemCor
            system's, built once per encoder).
        inputs: the training corpora its index reads, ``(name or path, gold key file)``, to
            check before any work.
        say: called with a line before a long build starts.
        levers: the bi-encoder's test-time weights its index was made with
            (:mod:`workbench.wsd.levers`; None: none).
        description: one line for reports: the named system's description
            (:class:`workbench.wsd.systems.base.System`), else :data:`CALLER_SETTINGS`.
        layers: the layer spec its index reads (None: none to check, a saved index or the
            bi-encoder): checked against the model as soon as the encoder loads, before a
            word is encoded (a layer 99 of a 6-layer model is refused before SemCor is read).
    """

    def __init__(
        self,
        name: str,
        encoder: Encoder | Callable[[], Encoder] | None = None,
        *,
        whole: WholeIndex | None = None,
        for_lemmas: LemmaIndex | None = None,
        note: str = "",
        biencoder: BiEncoder | Callable[[], BiEncoder] | None = None,
        pos_probe: PosProbe | None | str = BIENCODER_PROBE,
        builds_ahead: bool = False,
        inputs: tuple[tuple[str, str | None], ...] = (),
        say: SystemProgress = None,
        levers: TestTimeLevers | None = None,
        description: str = CALLER_SETTINGS,
        layers: str | None = None,
    ) -> None:
        if (whole is None) == (for_lemmas is None):
            raise ValueError("an opened system has either a whole index or one for lemmas")
        self.name = name
        self.note = note
        self.builds_ahead = builds_ahead
        self.inputs = inputs
        self._encoder = encoder
        self._biencoder = biencoder
        self._pos_probe = pos_probe
        self._whole = whole
        self._for_lemmas = for_lemmas
        self._say = say
        self.levers = levers
        self.description = description
        self.layers = layers
        self._index: SenseIndex | None = None
        self._lock = threading.Lock()

    @classmethod
    def of_index(cls, encoder: Encoder, index: SenseIndex, name: str = "") -> OpenedSystem:
        """A system answering from ``index`` (read with ``encoder``), as it is."""
        system = cls(name or "custom", encoder, whole=lambda enc, progress, say: index)
        system._index = index
        return system

    @classmethod
    def of_biencoder(cls, bi: BiEncoder) -> OpenedSystem:
        """A system answering with the bi-encoder ``bi`` (its gloss vectors, its POS probe)."""
        return cls(
            BIENCODER.name,
            for_lemmas=lambda enc, lemmas, progress: bi.index(lemmas, progress=progress),
            biencoder=bi,
            description=BIENCODER_DESCRIPTION,
        )

    @property
    def is_biencoder(self) -> bool:
        """Whether a bi-encoder answers (known without loading it)."""
        return self._biencoder is not None

    @functools.cached_property
    def biencoder(self) -> BiEncoder | None:
        """The bi-encoder that answers (loaded now if not yet), else None."""
        bi = self._biencoder
        return bi() if callable(bi) and not isinstance(bi, BiEncoder) else bi

    @functools.cached_property
    def encoder(self) -> Encoder:
        """The encoder whose word vectors the system reads (the bi-encoder's context encoder),
        loaded on first use; the index's layer spec (:attr:`layers`) is checked against it then.

        Raises:
            InputError: a layer the model does not have."""
        if self.biencoder is not None:
            return self.biencoder.encoder
        enc = self._encoder
        if enc is None:
            raise ValueError(f"the {self.name} system was opened without an encoder")
        loaded = enc if isinstance(enc, Encoder) else enc()
        if self.layers is not None:
            LayerSpec.parse(self.layers).resolve(loaded.n_hidden)
        return loaded

    @property
    def pos_probe(self) -> PosProbe | None:
        """The POS probe that answers when no POS is given (the bi-encoder's), else None."""
        if self._pos_probe == BIENCODER_PROBE:
            return self.biencoder.pos_probe if self.biencoder is not None else None
        return self._pos_probe  # type: ignore[return-value]

    def with_pos_probe(self, probe: PosProbe | None) -> OpenedSystem:
        """This system, answering with ``probe`` when no POS is given."""
        other = OpenedSystem(self.name, self._encoder, whole=self._whole,
                             for_lemmas=self._for_lemmas, note=self.note,
                             biencoder=self._biencoder, pos_probe=probe,
                             builds_ahead=self.builds_ahead, inputs=self.inputs,
                             say=self._say, levers=self.levers,
                             description=self.description, layers=self.layers)  # fmt: skip
        other._index = self._index
        return other

    @property
    def ready(self) -> bool:
        """Whether its index is in hand (the same for every input and built or loaded)."""
        return self._index is not None

    @property
    def index_kind(self) -> str:
        """What its index is made of, in a word for progress lines: ``gloss`` (the
        bi-encoder's gloss vectors), ``wordnet`` (WordNet's glosses), or the system's name."""
        if self._for_lemmas is None:
            return self.name
        return "gloss" if self._biencoder is not None else "wordnet"

    def index(
        self, lemmas: Lemmas | None = None, progress: Progress = None, say: SystemProgress = None
    ) -> SenseIndex:
        """Its sense index for the ``(lemma, POS)`` pairs an input needs (None: for every
        sense). An index that is the same for every input is built or loaded once (``say``,
        default the one given when opened, hears of a long build before it starts)."""
        if self._for_lemmas is not None:
            return self._for_lemmas(self.encoder, lemmas, progress)
        with self._lock:
            if self._index is None:
                assert self._whole is not None
                self._index = self._whole(self.encoder, progress, say or self._say)
            return self._index

    def describe(self) -> dict[str, Any]:
        """What answers, for reports: the system, its description, the model(s)."""
        model = self.biencoder.describe() if self.biencoder else self.encoder.describe()
        return {
            "name": self.name,
            "description": self.description,
            "model": model,
            **({"levers": self.levers.describe()} if self.levers is not None else {}),
            **({"note": self.note} if self.note else {}),
        }
