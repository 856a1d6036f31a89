"""The text a gloss encoder reads for a WordNet synset (the WSD bi-encoder's glosses).

``how`` (:data:`GlossText`) says what the text holds:

* ``definition``: the definition alone, as the bi-encoder of Blevins & Zettlemoyer (2020) reads
  it: ``"sloping land (especially the slope beside a body of water)"``;
* ``lemmas``: the synset's lemmas first: ``"bank : sloping land (...)"``;
* ``lemmas+examples``: and its usage examples: ``"bank : sloping land (...) ; they pulled the
  canoe up on the bank ; ..."``;
* ``lemmas+hypernyms``: and what kind of thing it is, each direct hypernym's lemmas and
  definition: ``"bank : sloping land (...) ; a kind of slope, incline, side : an elevated
  geological formation"`` (a synset without hypernyms, as most adjectives, reads as ``lemmas``);
* ``esr``: the richer gloss of ESR (Song et al. 2021, "Improved Word Sense Disambiguation with
  Enhanced Sense Representations"): the lemmas, the definition, the first usage example, the
  first hypernym's definition and, for a verb, its frames:
  ``"strike, hit: deliver a sharp blow ... ; hit the ball ; affect; Somebody strike something;
  ..."`` (read with a cut of 64 subwords: ``--gloss-text esr --gloss-max-length 64``; what is
  missing is left out).

Training (:mod:`workbench.finetune.tasks.wsd.glosses`) and the trained model's answers
(:mod:`workbench.wsd.biencoder`) both read the text from here, so they cannot drift apart.

Example::

    gloss_text(load_wordnet(), "bank.n.01", "lemmas")   # 'bank : sloping land (...)'
"""

from __future__ import annotations

from typing import Literal

from workbench.lexicon.wordnet import WordNet

#: What a gloss encoder reads for a sense.
GlossText = Literal["definition", "lemmas", "lemmas+examples", "lemmas+hypernyms", "esr"]
GLOSS_TEXTS: tuple[str, ...] = (
    "definition",
    "lemmas",
    "lemmas+examples",
    "lemmas+hypernyms",
    "esr",
)


def gloss_text(wordnet: WordNet, synset: str, how: GlossText) -> str:
    """The text the gloss encoder reads for ``synset`` (a name such as ``bank.n.01``)."""
    definition = wordnet.gloss(synset)
    if how == "definition":
        return definition
    if how == "esr":
        parts = [f"{_lemmas(wordnet, synset)}: {definition}", *wordnet.examples(synset)[:1]]
        parts += [wordnet.gloss(h) for h in wordnet.hypernyms(synset)[:1]]
        return " ; ".join([*parts, *wordnet.frames(synset)])
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
