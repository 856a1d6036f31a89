"""Disambiguate one word in one sentence: every candidate sense with its gloss and score.

The library call behind ``workbench wsd disambiguate`` and the app's WSD page. With no index
given, a WordNet-trained one is used, so it works right after install without SemCor: the
corpus is WordNet's own usage examples plus LMMS gloss vectors of every candidate sense
(:func:`wordnet_index`). A full WordNet index, once built (``workbench wsd train --corpus
wordnet``), is read from the cache; otherwise an index restricted to the target's lemmas is
built on the fly (a second or two; its encodings are cached). Every result names the corpus its
centroids come from.

Example::

    enc = Encoder()
    result = disambiguate(enc, None, "He sat on the bank of the river", "bank")
    print(result.to_text())        # ranked senses: key, score, how the vector was made, gloss
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from workbench.corpora.readers import Corpus
from workbench.encoding.alignment import split_words
from workbench.encoding.models import default_cache_dir
from workbench.encoding.rows import Progress
from workbench.errors import InputError
from workbench.lexicon.morphology import morphy
from workbench.lexicon.wordnet import UPOS_TO_WN, WordNet, load_wordnet
from workbench.wsd.config import EncoderInfo, SenseIndexConfig, TrainingInfo
from workbench.wsd.index import SenseIndex
from workbench.wsd.predict import InstanceSet, encode_instances, train_index
from workbench.wsd.sources import gloss_vectors, sense_graph, wordnet_example_sentences
from workbench.wsd.store import load_index

if TYPE_CHECKING:
    from workbench.encoding.encoder import Encoder

WORDNET_CORPUS = "wordnet-3.0 examples + glosses"
#: How the WordNet-trained index is built: sum of the last four layers, definition gloss
#: vectors weighted 0.2, chosen on SemEval-2007 (the dev set) with candidates of every POS, as
#: `disambiguate` sees them when no POS is given (docs/results.md); no post-processor, since the
#: index is also built for single lemmas.
WORDNET_CONFIG = SenseIndexConfig(layers="last4-sum", gloss="concat", gloss_weight=0.2)


@dataclass(frozen=True)
class SenseCandidate:
    """One candidate sense of the target word.

    Attributes:
        key: the WordNet sense key; synset: its synset name; pos: universal POS.
        gloss: the synset's definition.
        score: cosine with the target's vector in the index space (NaN: the sense has no row).
        origin: how its row was made (``centroid``, ``gloss``, ``synset``, ...), None without.
        count: training occurrences of the sense.
        wordnet_rank: 1 for WordNet's first sense of its lemma and POS.
    """

    key: str
    synset: str
    pos: str
    gloss: str
    score: float
    origin: str | None
    count: int
    wordnet_rank: int


@dataclass(frozen=True)
class Disambiguation:
    """The ranked senses of one word in context (best first; senses without a row last)."""

    words: tuple[str, ...]
    target: int
    lemmas: tuple[tuple[str, str], ...]
    candidates: tuple[SenseCandidate, ...]
    training: TrainingInfo
    config: str

    @property
    def best(self) -> SenseCandidate | None:
        """The chosen sense: the top-scored one, else WordNet's first sense (back-off)."""
        scored = [c for c in self.candidates if not np.isnan(c.score)]
        if scored:
            return scored[0]
        first = [c for c in self.candidates if c.wordnet_rank == 1]
        return first[0] if first else None

    def to_text(self) -> str:
        """A plain-text table for the terminal."""
        marked = " ".join(f"[{w}]" if i == self.target else w for i, w in enumerate(self.words))
        lines = [marked, f"trained on: {self.training.corpus} ({self.config})"]
        if not self.candidates:
            return "\n".join([*lines, "no WordNet senses for this word"])
        lines.append(f"{'':2}{'score':>6}  {'sense key':<28} {'made by':<9} gloss")
        for c in self.candidates:
            score = "  -   " if np.isnan(c.score) else f"{c.score:6.3f}"
            mark = "*" if c is self.best else " "
            lines.append(f"{mark} {score}  {c.key:<28} {c.origin or 'no row':<9} {c.gloss}")
        if all(np.isnan(c.score) for c in self.candidates):
            lines.append("(no candidate has a vector: * is WordNet's first sense, the back-off)")
        return "\n".join(lines)


def find_target(words: Sequence[str], target: str | int) -> tuple[list[str], int]:
    """Locate the target in ``words``: a position, or the first case-insensitive match of a
    word or a multiword phrase (merged into one word, as the framework's XML does)."""
    words = list(words)
    if isinstance(target, (int, np.integer)):
        if not 0 <= int(target) < len(words):
            raise InputError(f"position {target} is outside the sentence ({len(words)} words)")
        return words, int(target)
    parts = [p.lower() for p in split_words(str(target))]
    if not parts:
        raise InputError("the target word is empty")
    lower = [w.lower() for w in words]
    for i in range(len(lower) - len(parts) + 1):
        if lower[i : i + len(parts)] == parts:
            merged = [*words[:i], " ".join(words[i : i + len(parts)]), *words[i + len(parts) :]]
            return merged, i
    raise InputError(f"'{target}' is not a word of the sentence: {' '.join(words)}")


def target_lemmas(
    word: str, wordnet: WordNet, pos: str | None = None
) -> tuple[tuple[str, str], ...]:
    """The WordNet ``(lemma, POS)`` pairs a surface word can be (morphy per POS)."""
    if pos is not None and pos not in UPOS_TO_WN:
        raise InputError(f"POS must be one of {', '.join(UPOS_TO_WN)}, not '{pos}'")
    found = []
    surface = word.lower().replace(" ", "_")
    for upos in [pos] if pos else list(UPOS_TO_WN):
        head, _, rest = surface.partition("_")
        forms = [surface, *morphy(surface, UPOS_TO_WN[upos])]
        if rest:  # "took place" -> "take_place": the head word inflects
            forms += [f"{h}_{rest}" for h in morphy(head, UPOS_TO_WN[upos])]
        for form in dict.fromkeys(forms):  # "banks": the person (Banks) and the plural of bank
            if form and wordnet.candidates(form, upos):
                found.append((form, upos))
    return tuple(found)


def wordnet_index(
    encoder: Encoder,
    lemmas: Sequence[tuple[str, str]] | None = None,
    wordnet: WordNet | None = None,
    config: SenseIndexConfig = WORDNET_CONFIG,
    progress: Progress = None,
) -> SenseIndex:
    """A sense index trained on WordNet's usage examples, with LMMS gloss vectors of every
    candidate sense (so no sense lacks a row).

    Args:
        encoder: the encoder.
        lemmas: restrict to the senses of these ``(lemma, POS)`` pairs (fast); None: all of
            WordNet (encodes 47k examples and 207k glosses once, several minutes on a CPU).
        wordnet: default :func:`load_wordnet`.
        config: layer spec, gloss weight (``gloss`` must be ``concat``).
        progress: passed to the encoder.
    """

    wordnet = wordnet or load_wordnet()
    if config.gloss != "concat":
        raise InputError("a WordNet-trained index needs gloss vectors (config.gloss='concat')")
    keys = None
    if lemmas is not None:
        keys = sorted({k for lemma, pos in lemmas for k in wordnet.candidates(lemma, pos)})
    gloss = gloss_vectors(
        encoder, wordnet, config.layers, keys, pooling=config.gloss_pooling, progress=progress
    )
    # propagation needs the centroids of every synset with examples, not only the lemmas'
    propagating = config.propagate != "none"
    sentences = wordnet_example_sentences(wordnet, None if propagating else lemmas)
    graph = sense_graph(wordnet) if propagating else None
    restricted = tuple(f"{lemma}.{pos}" for lemma, pos in lemmas or ())
    info = EncoderInfo.of(encoder)
    if not sentences:
        index = SenseIndex(config).fit(
            np.zeros((0, info.dim), np.float32), [], encoder=info, gloss=gloss
        )
    else:
        corpus = Corpus("wordnet-examples", sentences, (), "")
        training = encode_instances(encoder, corpus, progress=progress)
        index = train_index(training, config, info, graph=graph, gloss=gloss, targets=keys)
    index.training_ = TrainingInfo(
        WORDNET_CORPUS, f"wordnet-{wordnet.version}", len(sentences), len(sentences), restricted
    )
    return index


def instance_lemmas(instances: InstanceSet, wordnet: WordNet) -> tuple[tuple[str, str], ...]:
    """The WordNet ``(lemma, POS)`` pairs the instances' lemmas can be (:func:`target_lemmas`
    of each distinct lemma and POS), sorted: what an index for these instances must cover."""
    pairs = set(zip(instances.lemmas, instances.pos))
    return tuple(sorted({x for lemma, pos in pairs for x in target_lemmas(lemma, wordnet, pos)}))


def instance_index(
    encoder: Encoder,
    instances: InstanceSet,
    wordnet: WordNet | None = None,
    config: SenseIndexConfig = WORDNET_CONFIG,
    progress: Progress = None,
) -> SenseIndex:
    """A WordNet-trained index (:func:`wordnet_index`) restricted to the lemmas of
    ``instances`` (:func:`instance_lemmas`): how a test set is scored without SemCor, in a
    fraction of the time a full WordNet index takes to build."""
    wordnet = wordnet or load_wordnet()
    return wordnet_index(encoder, instance_lemmas(instances, wordnet), wordnet, config, progress)


def default_index_path(encoder: Encoder, config: SenseIndexConfig = WORDNET_CONFIG) -> Path:
    """Where the full WordNet-trained index of ``encoder`` is cached."""
    label = f"{config.layers}-{config.postprocess}-{config.gloss_pooling}{config.gloss_weight:g}"
    return default_cache_dir() / "wsd-index" / f"wordnet-{encoder.fingerprint}-{label}"


def disambiguate(
    encoder: Encoder,
    index: SenseIndex | None,
    text: str | Sequence[str],
    target: str | int,
    pos: str | None = None,
    wordnet: WordNet | None = None,
) -> Disambiguation:
    """Rank the WordNet senses of one word in context.

    Args:
        encoder: the encoder (must be the index's: else MismatchError).
        index: a sense index; None: the WordNet-trained one (full if cached, else built for
            the target's lemmas only).
        text: the sentence, raw or as words.
        target: the word (first match, case-insensitive; a phrase becomes one word) or its
            position.
        pos: restrict to one universal POS (NOUN, VERB, ADJ, ADV); None: every POS the word
            can be.
        wordnet: default :func:`load_wordnet`.

    Returns:
        A :class:`Disambiguation`, candidates ranked by score.
    """
    wordnet = wordnet or load_wordnet()
    words = split_words(text) if isinstance(text, str) else list(text)
    if not words:
        raise InputError("the sentence is empty")
    words, at = find_target(words, target)
    lemmas = target_lemmas(words[at], wordnet, pos)
    if index is None:
        path = default_index_path(encoder)
        if (path / "meta.json").is_file():
            index = load_index(path, encoder=encoder)
        else:
            index = wordnet_index(encoder, lemmas, wordnet, progress=False)
    index.check_encoder(encoder)
    emb = encoder.encode([words], keep=[[at]], progress=False)
    vector = emb.select(index.config.layers)[0]
    candidates = []
    for lemma, upos in lemmas:
        scored = index.candidate_scores(vector, lemma, upos)
        score_of = dict(zip(scored.keys, scored.scores.tolist()))
        for rank, key in enumerate(wordnet.candidates(lemma, upos), start=1):
            synset = wordnet.synset(key)
            candidates.append(
                SenseCandidate(
                    key=key,
                    synset=synset,
                    pos=upos,
                    gloss=wordnet.gloss(synset),
                    score=float(score_of.get(key, np.nan)),
                    origin=index.origin_of(key),
                    count=index.count_of(key),
                    wordnet_rank=rank,
                )
            )
    candidates.sort(key=lambda c: (np.isnan(c.score), -np.nan_to_num(c.score), c.wordnet_rank))
    return Disambiguation(
        tuple(words), at, lemmas, tuple(candidates), index.training_, index.config.label
    )
