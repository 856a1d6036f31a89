"""WordNet's glosses: the system that needs no SemCor (``--system wordnet``).

Every sense is represented the same way, by its gloss vector (its synset's definition and
usage examples through the same encoder path), so the scores of any two candidates are
comparable. It loses to WordNet's first sense on the benchmarks
(:func:`~workbench.wsd.presets.system_note` says so). It answers with the full index when
``workbench wsd train --corpus wordnet`` has stored it, else with one for the lemmas an input
needs (:func:`open_glosses`, which the SemCor systems answer with too where SemCor is missing).

Example::

    opened = WORDNET_SYSTEM.open(Request())
    opened.index([("bank", "NOUN")])   # the gloss vectors of bank's noun senses
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

from workbench.encoding.encoder import Encoder
from workbench.encoding.rows import Progress
from workbench.lexicon.wordnet import WordNet
from workbench.wsd.builds import wordnet_index, wordnet_index_path
from workbench.wsd.config import EncoderInfo, SenseIndexConfig
from workbench.wsd.opened import CALLER_SETTINGS, Lemmas, OpenedSystem
from workbench.wsd.presets import WORDNET
from workbench.wsd.store import load_index
from workbench.wsd.systems.base import Request, System


def open_glosses(
    name: str,
    config: SenseIndexConfig,
    encoder: Encoder | Any,
    wordnet: WordNet | None,
    note: str = "",
    description: str = CALLER_SETTINGS,
) -> OpenedSystem:
    """A system called ``name`` answering with WordNet's gloss vectors of ``config``: the full
    index where it is stored in the cache dir, else one for the lemmas an input needs."""

    def glosses(enc: Encoder, lemmas: Lemmas | None, progress: Progress) -> Any:
        info = EncoderInfo.of(enc)
        stored = wordnet_index_path(info, config)
        if (stored / "meta.json").is_file():
            return load_index(stored, info)
        return wordnet_index(enc, lemmas, wordnet, config, progress)

    return OpenedSystem(name, encoder, for_lemmas=glosses, note=note, pos_probe=None,
                        description=description, layers=config.layers)  # fmt: skip


@dataclass(frozen=True)
class WordNetGlosses(System):
    """A system answering with WordNet's gloss vectors of its settings (``config``), trained on
    nothing but WordNet: offered everywhere."""

    def open(self, request: Request) -> OpenedSystem:
        """Its gloss vectors of ``request``'s model, with the settings ``request.changes``
        gives (then called ``custom``); ``request.train`` does not apply."""
        config = dataclasses.replace(self.config, **(request.changes or {}))
        if request.changes:
            return open_glosses("custom", config, request.encoder_of(), request.wordnet)
        return open_glosses(self.name, config, request.encoder_of(), request.wordnet,
                            description=self.description)  # fmt: skip

    def choice_label(self, fingerprint: str, dtype: str) -> str:
        """Its label alone: it says it is below WordNet's first sense instead of a score."""
        return self.label


#: ``wordnet``: every sense's gloss vector, no SemCor.
WORDNET_SYSTEM = WordNetGlosses(
    **vars(WORDNET),
    label="WordNet glosses only (no SemCor; below WordNet's first sense)",
    help="no SemCor: gloss vectors only; below WordNet's first sense",
)
