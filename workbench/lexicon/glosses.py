"""The text a gloss encoder reads for a WordNet synset (the WSD bi-encoder's glosses).

``how`` (:data:`GlossText`) says what the text holds:

* ``definition``: the definition alone, as the bi-encoder of Blevins & Zettlemoyer (2020) reads
  it: ``"sloping land (especially the slope beside a body of water)"``;
* ``lemmas``: the synset's lemmas first: ``"bank : sloping land (...)"``;
* ``lemmas+examples``: and its usage examples: ``"bank : sloping land (...) ; they pulled the
  canoe up on the bank ; ..."``;
* ``lemmas+hypernyms``: and what kind of thing it is, each direct hypernym's lemmas and
  definition: ``"bank : sloping land (...) ; a kind of slope, incline, side : an elevated
  geological formation"`` (a synset without hypernyms, as most adjectives, reads as ``lemmas``).

Training (:mod:`workbench.finetune.tasks.wsd.glosses`) and the trained model's answers
(:mod:`workbench.wsd.biencoder`) both read the text from here, so they cannot drift apart.

Example::

    gloss_text(load_wordnet(), "bank.n.01", "lemmas")   # 'bank : sloping land (...)'
"""

from __future__ import annotations

from typing import Literal

from workbench.lexicon.wordnet import WordNet

#: What a gloss encoder reads for a sense.
GlossText = Literal["definition", "lemmas", "lemmas+examples", "lemmas+hypernyms"]
GLOSS_TEXTS: tuple[str, ...] = ("definition", "lemmas", "lemmas+examples", "lemmas+hypernyms")


def gloss_text(wordnet: WordNet, synset: str, how: GlossText) -> str:
    """The text the gloss encoder reads for ``synset`` (a name such as ``bank.n.01``)."""
    definition = wordnet.gloss(synset)
    if how == "definition":
        return definition
    text = f"{_lemmas(wordnet, synset)} : {definition}"
    if how == "lemmas+examples":
        text = " ; ".join([text, *wordnet.examples(synset)])
    elif how == "lemmas+hypernyms":
        kinds = [f"a kind of {_lemmas(wordnet, h)} : {wordnet.gloss(h)}"
                 for h in wordnet.hypernyms(synset)]  # fmt: skip
        text = " ; ".join([text, *kinds])
    return text


def _lemmas(wordnet: WordNet, synset: str) -> str:
    return ", ".join(name.replace("_", " ") for name in wordnet.lemmas(synset))
