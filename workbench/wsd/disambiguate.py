"""Disambiguate one word in one sentence: every candidate sense with its gloss and score.

The library call behind ``workbench wsd disambiguate`` and the app's WSD page. It takes a system
opened by :func:`workbench.wsd.systems.open_system` (the shipped bi-encoder by default, whose
glosses are encoded when first needed): its encoder reads the word, its index scores the
candidates, its POS probe answers when no POS is given. Every result names the corpus and the
system its vectors come from, and every candidate its definition, its score and where the score
comes from (a trained gloss vector, and how often the sense occurred in the bi-encoder's
training; a centroid of so many occurrences; a propagated vector).

Example::

    opened = open_system()         # the shipped bi-encoder
    result = disambiguate(opened, "He sat on the bank of the river", "bank")
    print(result.to_text())        # ranked senses: key, score, where the score comes from, gloss
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from workbench.corpora.tagging import tag_words
from workbench.encoding.alignment import split_words
from workbench.encoding.encoder import Encoder
from workbench.encoding.rows import Progress
from workbench.errors import InputError
from workbench.lexicon.morphology import morphy
from workbench.lexicon.wordnet import UPOS_TO_WN, WordNet, load_wordnet
from workbench.wsd.builds import wordnet_index
from workbench.wsd.config import EncoderInfo, SenseIndexConfig, TrainingInfo
from workbench.wsd.index import SenseIndex
from workbench.wsd.opened import OpenedSystem
from workbench.wsd.predict import InstanceSet
from workbench.wsd.presets import FEW_OCCURRENCES, WORDNET, system_note, system_of

#: How a propagated row got its vector, for a user.
PROPAGATED_FROM = {
    "synset": "propagated from its synset's other senses",
    "hypernym": "propagated from its hypernyms' senses",
    "lexname": "propagated from its lexicographer file",
}


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
        evidence: where the score comes from, for a user (``centroid of 12 semcor occurrences
            + gloss``, ``propagated from its lexicographer file``, ``gloss vector``, ...).
        tag_count: how often WordNet's annotators tagged the sense (orders the first senses).
    """

    key: str
    synset: str
    pos: str
    gloss: str
    score: float
    origin: str | None
    count: int
    wordnet_rank: int
    evidence: str = ""
    tag_count: int = 0


def evidence(origin: str | None, count: int, corpus: str, config: SenseIndexConfig) -> str:
    """Where a candidate's score comes from, in words: the centroid of ``count`` training
    occurrences, a propagated vector, or a gloss vector (``origin``, from the index)."""
    plus = " + gloss" if config.gloss == "concat" else ""
    if origin is None:
        return "no vector in the index"
    if origin == "centroid":
        return f"centroid of {count} {corpus} occurrence{'s' if count != 1 else ''}{plus}"
    if origin in PROPAGATED_FROM:
        return f"{PROPAGATED_FROM[origin]} (no occurrence of its own){plus}"
    if config.gloss == "concat":
        return "gloss only (no occurrence, nothing to propagate from)"
    if config.gloss_pooling == "trained":
        seen = f"seen {count}x" if count else "unseen"
        return f"its gloss vector ({seen} in training)"
    return f"gloss vector ({config.gloss_pooling.replace('-', ' and ')})"


@dataclass(frozen=True)
class Disambiguation:
    """The ranked senses of one word in context (best first; senses without a row last).

    Attributes:
        words, target: the sentence and the position of the target word.
        lemmas: the ``(lemma, POS)`` pairs the word can be.
        candidates: every WordNet sense of those pairs, best first.
        training: where the index's vectors come from.
        config: the index's config label; system: its system name (``best``, ``plain``,
            ``wordnet``, ``custom``: :func:`workbench.wsd.presets.system_of`).
        note: what the user must know about the index's quality ("" if nothing).
        centroids: whether the index has centroid rows at all (a trained bi-encoder's gloss
            index has none: its gloss vectors are the system, not a weaker stand-in).
        predicted_pos: with no POS given, the POS a probe read off the word's vector and its
            probability (``("", 0.0)``: none predicted): the chosen sense is of that POS, and
            its candidates are ranked first.
    """

    words: tuple[str, ...]
    target: int
    lemmas: tuple[tuple[str, str], ...]
    candidates: tuple[SenseCandidate, ...]
    training: TrainingInfo
    config: str
    system: str = "custom"
    note: str = ""
    centroids: bool = True
    predicted_pos: tuple[str, float] = ("", 0.0)

    @property
    def best(self) -> SenseCandidate | None:
        """The chosen sense: the top-scored one, else WordNet's first sense (back-off)."""
        scored = [c for c in self.candidates if not np.isnan(c.score)]
        if scored:
            return scored[0]
        return self.first_sense

    @property
    def first_sense(self) -> SenseCandidate | None:
        """WordNet's first sense of the word: of the POS it can be, the first sense tagged most
        often (the back-off; with no POS given, ``bass`` is a noun before an adjective)."""
        first = [c for c in self.candidates if c.wordnet_rank == 1]
        return max(first, key=lambda c: c.tag_count) if first else None

    @property
    def warning(self) -> str:
        """A warning when the chosen sense rests on fewer than a handful of training
        occurrences ("" otherwise, when :attr:`note` already says it, and for an index without
        centroids, where no sense has occurrences to rest on)."""
        best = self.best
        if best is None or self.note or np.isnan(best.score) or not self.centroids:
            return ""
        if best.count >= FEW_OCCURRENCES:
            return ""
        if best.origin == "centroid":
            times = "once" if best.count == 1 else f"{best.count} times"
            return (
                f"The chosen sense occurs only {times} in {self.training.corpus}: its score "
                "rests on too few occurrences to be trusted."
            )
        return (
            f"The chosen sense has no occurrence in {self.training.corpus}: its vector is "
            f"{best.evidence}, weaker evidence than a centroid of many occurrences."
        )

    def to_text(self) -> str:
        """A plain-text table for the terminal."""
        marked = " ".join(f"[{w}]" if i == self.target else w for i, w in enumerate(self.words))
        lines = [
            marked,
            f"system: {self.system}, trained on {self.training.corpus} ({self.config})",
        ]
        if self.predicted_pos[0]:
            pos, p = self.predicted_pos
            lines.append(
                f"POS: {pos} (read off the word's vector, probability {p:.2f}): * is the best of "
                f"the {pos} senses; --pos chooses another part of speech"
            )
        if not self.candidates:
            return "\n".join([*lines, "no WordNet senses for this word: nothing to choose from"])
        lines.append(f"{'':2}{'score':>6}  {'sense key':<28} {'score from':<44} gloss")
        for c in self.candidates:
            score = "  -   " if np.isnan(c.score) else f"{c.score:6.3f}"
            mark = "*" if c is self.best else " "
            lines.append(f"{mark} {score}  {c.key:<28} {c.evidence:<44} {c.gloss}")
        if all(np.isnan(c.score) for c in self.candidates):
            lines.append("(no candidate has a vector: * is WordNet's first sense, the back-off)")
        if self.warning:
            lines.append(f"warning: {self.warning}")
        first = self.first_sense
        if self.note:
            lines.append(f"note: {self.note}")
            if first is not None:
                lines.append(f"WordNet's first sense (the back-off): {first.key}: {first.gloss}")
        return "\n".join(lines)


def _matches(words: Sequence[str], target: str) -> list[int]:
    """The positions where ``target`` (a word or a phrase, case-insensitive) starts in
    ``words``, non-overlapping."""
    parts = [p.lower() for p in split_words(str(target))]
    if not parts:
        raise InputError("the target word is empty")
    lower = [w.lower() for w in words]
    found: list[int] = []
    for i in range(len(lower) - len(parts) + 1):
        if (not found or i >= found[-1] + len(parts)) and lower[i : i + len(parts)] == parts:
            found.append(i)
    return found


def find_target(
    words: Sequence[str], target: str | int, occurrence: int = 1
) -> tuple[list[str], int]:
    """Locate the target in ``words``: a position, or the ``occurrence``-th (1: the first)
    case-insensitive match of a word or a multiword phrase (merged into one word, as the
    framework's XML does).

    Example::

        find_target("the bank by the bank".split(), "bank", 2)  # (words, 4)
    """
    words = list(words)
    if isinstance(target, (int, np.integer)):
        if not 0 <= int(target) < len(words):
            raise InputError(f"position {target} is outside the sentence ({len(words)} words)")
        return words, int(target)
    found = _matches(words, target)
    if not found:
        raise InputError(f"'{target}' is not a word of the sentence: {' '.join(words)}")
    if not 1 <= occurrence <= len(found):
        raise InputError(
            f"'{target}' occurs {len(found)} time{'s' * (len(found) != 1)} in the sentence, "
            f"so there is no occurrence {occurrence}"
        )
    i = found[occurrence - 1]
    n = len(split_words(str(target)))
    return [*words[:i], " ".join(words[i : i + n]), *words[i + n :]], i


def count_in_sentence(text: str | Sequence[str], word: str) -> int:
    """How many times ``word`` (a word or a phrase) occurs in the sentence, as
    :func:`find_target` counts (0 for an empty word)."""
    words = split_words(text) if isinstance(text, str) else list(text)
    return len(_matches(words, word)) if split_words(word) else 0


#: The parts of speech :func:`likely_target` prefers, in order.
TARGET_POS = ("NOUN", "VERB", "ADJ", "ADV")


def likely_target(text: str | Sequence[str], wordnet: WordNet) -> str | None:
    """The word of a sentence a reader most likely wants disambiguated: of the words that
    :func:`workbench.corpora.tagging.tag_words` tags NOUN (else VERB, ADJ, ADV), the one with
    the most WordNet senses in that POS (the first on a tie); None when no word has a sense.

    Example::

        likely_target("He sat on the bank of the river.", wordnet)  # 'bank' (a noun)
    """
    words = split_words(text) if isinstance(text, str) else list(text)
    tags = tag_words(words, wordnet)
    for upos in TARGET_POS:
        senses = {}
        for word, tag in zip(words, tags):
            if tag == upos and word.lower() not in senses:
                keys = {k for lemma, _ in target_lemmas(word, wordnet, upos)
                        for k in wordnet.candidates(lemma, upos)}  # fmt: skip
                senses[word.lower()] = (len(keys), word)
        best = max(senses.values(), key=lambda n_word: n_word[0], default=(0, ""))
        if best[0]:
            return best[1]
    return None


def in_sentence(text: str | Sequence[str], word: str) -> bool:
    """Whether ``word`` (a word or a phrase) is a word of the sentence, as :func:`find_target`
    finds it."""
    words = split_words(text) if isinstance(text, str) else list(text)
    try:
        find_target(words, word)
    except InputError:
        return False
    return bool(words)


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


def instance_lemmas(instances: InstanceSet, wordnet: WordNet) -> tuple[tuple[str, str], ...]:
    """The WordNet ``(lemma, POS)`` pairs the instances' lemmas can be (:func:`target_lemmas`
    of each distinct lemma and POS), sorted: what an index for these instances must cover."""
    pairs = set(zip(instances.lemmas, instances.pos))
    return tuple(sorted({x for lemma, pos in pairs for x in target_lemmas(lemma, wordnet, pos)}))


def instance_index(
    encoder: Encoder,
    instances: InstanceSet,
    wordnet: WordNet | None = None,
    config: SenseIndexConfig = WORDNET.config,
    progress: Progress = None,
) -> SenseIndex:
    """The WordNet-only index (:func:`workbench.wsd.builds.wordnet_index`) restricted to the
    lemmas of ``instances`` (:func:`instance_lemmas`): how a test set is scored without SemCor,
    in a fraction of the time a full WordNet index takes to build."""
    wordnet = wordnet or load_wordnet()
    return wordnet_index(encoder, instance_lemmas(instances, wordnet), wordnet, config, progress)


def disambiguate(
    system: OpenedSystem,
    text: str | Sequence[str],
    target: str | int,
    pos: str | None = None,
    wordnet: WordNet | None = None,
    progress: Progress = None,
    occurrence: int = 1,
) -> Disambiguation:
    """Rank the WordNet senses of one word in context.

    Args:
        system: the system that answers (:func:`workbench.wsd.systems.open_system`): its
            encoder reads the sentence, its index for the word's ``(lemma, POS)`` pairs scores
            the candidates, and, with no ``pos`` given and a word that can be several POS, its
            POS probe reads the POS off the word's vector: the chosen sense is of the
            predicted POS, whose senses are ranked first (every candidate is still scored and
            listed).
        text: the sentence, raw or as words.
        target: the word (its ``occurrence``-th match, case-insensitive; a phrase becomes
            one word) or its position.
        pos: restrict to one universal POS (NOUN, VERB, ADJ, ADV); None: every POS the word
            can be.
        wordnet: default :func:`load_wordnet`.
        progress: a bar or callback while the system's index is built (a SemCor system's
            first build, the glosses of the word's senses).
        occurrence: which occurrence of a word ``target`` (1: the first).

    Returns:
        A :class:`Disambiguation`, candidates ranked by score.

    Raises:
        InputError: an empty sentence, a target not in it, or a ``pos`` the word has no
            senses of (when it has senses of another POS; the message names both).
    """
    wordnet = wordnet or load_wordnet()
    words = split_words(text) if isinstance(text, str) else list(text)
    if not words:
        raise InputError("the sentence is empty")
    words, at = find_target(words, target, occurrence)
    lemmas = target_lemmas(words[at], wordnet, pos)
    if not lemmas and pos is not None:  # refused before any index is built
        other = sorted({upos for _, upos in target_lemmas(words[at], wordnet)})
        if other:
            raise InputError(
                f"'{words[at]}' has no {pos} senses in WordNet, only {', '.join(other)} senses: "
                "choose one of those POS or none"
            )
    encoder, pos_probe = system.encoder, system.pos_probe
    index = system.index(lemmas, progress)
    index.check_encoder(EncoderInfo.of(encoder))
    emb = encoder.encode([words], keep=[[at]], progress=False)
    vector = emb.select(index.config.layers)[0]
    predicted = ("", 0.0)
    if pos is None and pos_probe is not None and len({upos for _, upos in lemmas}) > 1:
        proba = pos_probe.predict_proba(emb.select(pos_probe.layers))[0]
        possible = {upos for _, upos in lemmas}
        options = [(p, c) for c, p in zip(pos_probe.classes_, proba.tolist()) if c in possible]
        if options:
            p_best, c_best = max(options)
            predicted = (c_best, float(p_best))
    corpus = index.training_.corpus
    candidates = []
    for lemma, upos in lemmas:
        scored = index.candidate_scores(vector, lemma, upos)
        score_of = dict(zip(scored.keys, scored.scores.tolist()))
        for rank, key in enumerate(wordnet.candidates(lemma, upos), start=1):
            synset = wordnet.synset(key)
            origin, count = index.origin_of(key), index.count_of(key)
            candidates.append(
                SenseCandidate(
                    key=key,
                    synset=synset,
                    pos=upos,
                    gloss=wordnet.gloss(synset),
                    score=float(score_of.get(key, np.nan)),
                    origin=origin,
                    count=count,
                    wordnet_rank=rank,
                    evidence=evidence(origin, count, corpus, index.config),
                    tag_count=wordnet.senses[key].tag_count,
                )
            )
    candidates.sort(
        key=lambda c: (
            bool(predicted[0]) and c.pos != predicted[0],  # the predicted POS's senses first
            np.isnan(c.score),
            -np.nan_to_num(c.score),
            c.wordnet_rank,
        )
    )
    return Disambiguation(
        tuple(words),
        at,
        lemmas,
        tuple(candidates),
        index.training_,
        index.config.label,
        system_of(index),
        system_note(index),
        index.has_centroids,
        predicted,
    )
