"""The SemCor centroid systems (``--system best``, ``--system plain``): each sense a vector from
its training occurrences (a centroid), from related senses, or from its gloss.

* ``best``: SemCor centroids at the last layer, LMMS propagation down to the lexicographer
  file, definition gloss vectors weighted 0.2 (the best untrained system of docs/results.md);
* ``plain``: SemCor centroids at the last layer, nothing else (textbook 1-NN).

Opened, a SemCor system answers with its SemCor index, built once per encoder
(:func:`workbench.wsd.builds.semcor_index`); without SemCor in the data dir the WordNet-only
index answers (:data:`NO_SEMCOR_NOTE` says so); settings changed from the system's or another
training corpus build an index of those settings on that corpus, once.

Example::

    opened = BEST_SYSTEM.open(Request())   # nothing built yet
    opened.builds_ahead, opened.inputs      # (True, (('semcor', None),))
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from workbench.encoding.encoder import Encoder
from workbench.encoding.rows import Progress
from workbench.wsd.builds import SystemProgress, semcor_available, semcor_index, trained_index
from workbench.wsd.evaluate import load_corpus
from workbench.wsd.opened import CALLER_SETTINGS, OpenedSystem
from workbench.wsd.presets import BEST, PLAIN
from workbench.wsd.systems.base import Request, System
from workbench.wsd.systems.wordnet import WORDNET_SYSTEM, open_glosses

#: The note of a WordNet-only index answering where a SemCor system was asked for.
NO_SEMCOR_NOTE = (
    "no SemCor in the data dir: the WordNet-only index is used (--system wordnet), which scores "
    "below WordNet's first sense; `workbench data download` fetches SemCor"
)


@dataclass(frozen=True)
class SemCorCentroids(System):
    """A system answering with an index of its settings (``config``) trained on SemCor (or on
    the corpus a request names): offered where SemCor is in the data dir."""

    def missing(self, model: str | None) -> str | None:
        """Why it is not offered: SemCor is not in the data dir (None when it is)."""
        if semcor_available():
            return None
        return (
            "needs SemCor, which is not in the WSD data dir; `workbench data download` fetches it"
        )

    def open(self, request: Request) -> OpenedSystem:
        """Its index for ``request`` (see the module docstring)."""
        return self.open_noted(request, ())

    def open_noted(self, request: Request, notes: Sequence[str]) -> OpenedSystem:
        """:meth:`open`, the opened system's note starting with ``notes`` (why it answers
        instead of the system asked for)."""
        notes = list(notes)
        corpus = request.train
        if corpus is None:
            corpus = "semcor" if semcor_available() else "wordnet"
            if corpus == "wordnet":
                notes.append(NO_SEMCOR_NOTE)
        base = WORDNET_SYSTEM.config if corpus == "wordnet" else self.config
        config = dataclasses.replace(base, **(request.changes or {}))
        enc = request.encoder_of()
        note = "; ".join(notes)
        # its own name; "custom" for settings of its own
        answering = self.name if not request.changes else "custom"
        description = self.description if answering == self.name else CALLER_SETTINGS
        wordnet = request.wordnet
        if corpus == "wordnet":
            return open_glosses(answering, config, enc, wordnet, note, description)
        if corpus == "semcor" and request.gold is None and config == self.config:

            def semcor(enc: Encoder, progress: Progress, said: SystemProgress) -> Any:
                return semcor_index(enc, self, wordnet, progress, said)

            return OpenedSystem(self.name, enc, whole=semcor, note=note, pos_probe=None,
                                builds_ahead=True, inputs=((corpus, None),), say=request.say,
                                description=self.description, layers=config.layers)  # fmt: skip
        train, gold = corpus, request.gold

        def trained(enc: Encoder, progress: Progress, said: SystemProgress) -> Any:
            return trained_index(enc, load_corpus(train, gold), config, wordnet, progress)

        return OpenedSystem(answering, enc, whole=trained, note=note, pos_probe=None,
                            inputs=((corpus, gold),), say=request.say,
                            description=description, layers=config.layers)  # fmt: skip


#: ``best``: SemCor centroids + propagation + definition glosses.
BEST_SYSTEM = SemCorCentroids(
    **vars(BEST),
    label="best: SemCor + propagation + glosses",
    help="SemCor centroids, last layer, lexname propagation, definition glosses at 0.2",
)
#: ``plain``: SemCor centroids, 1-NN.
PLAIN_SYSTEM = SemCorCentroids(
    **vars(PLAIN),
    label="plain 1-NN on SemCor",
    help="SemCor centroids, last layer, 1-NN",
)
