"""Built-in tasks made from WordNet 3.0's usage examples alone: they need no WSD data (SemCor),
only what installs with the package, so they run on a machine that is offline.

* ``wordnet-wic``, a word-in-context pair task (:func:`build_wordnet_wic`): two usage examples
  of one lemma, *same* when they illustrate the same synset, *different* when two synsets of
  the lemma. The original WiC dataset drew its pairs from the same source.
* ``wordnet-supersense``, a token task (:func:`build_wordnet_supersense`): each example's
  illustrated word tagged ``B-<lexicographer file>`` (``B-noun.animal``; a multiword lemma's
  further words ``I-...``), every other word ``O``. WordNet tags only the word an example
  illustrates, so the task is "find that word and name its class": a sparser cousin of the
  SemCor supersense task, whose every annotated word is tagged.

The target of an example is located by the lemma's inflected forms: a word is the lemma when
it is the lemma or WordNet's *morphy* gives the lemma as its base form for the synset's POS
(:func:`workbench.lexicon.morphology.morphy`: *took* -> *take*, *geese* -> *goose*; *banker*
is not *bank*); a multiword lemma is found as consecutive words (*took place*). Examples in which
no lemma of the synset is found are left out.

Both builders split by lemma (80/10/10 of the sorted lemmas, shuffled with the seed, into
train/dev/test): a lemma, in any POS, is in one split only. They return the SemCor tasks' types
(:class:`~workbench.finetune.data.wic.WicSplits`,
:class:`~workbench.finetune.data.supersense.SupersenseSplits`), so the pair and token tasks
train on them unchanged. Everything is deterministic for a seed.

Example::

    splits = build_wordnet_wic(seed=0)
    splits.train[0].label, splits.data("train", 512)   # "same" | "different", a DataFile
"""

from __future__ import annotations

import functools
import itertools
import random
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from workbench.encoding.alignment import split_words
from workbench.errors import DataError
from workbench.fileio import sha256_json
from workbench.finetune.data.readers import TaggedSentence
from workbench.finetune.data.supersense import SupersenseSplits
from workbench.finetune.data.wic import DIFFERENT, SAME, SPLITS, WicPair, WicSplits
from workbench.lexicon.morphology import morphy
from workbench.lexicon.wordnet import WN_TO_UPOS, WordNet, load_wordnet

#: The name the built-in tasks' cards and data sources give their corpus.
CORPUS = "wordnet-3.0-examples"


@dataclass(frozen=True)
class ExampleUse:
    """One lemma of a synset located in one of the synset's usage examples.

    Attributes:
        synset: NLTK's synset name, ``bank.n.01``.
        lexname: the synset's lexicographer file, ``noun.object``.
        keys: the sense keys of the lemma in this synset (one; two where the synset has the
            lemma in two cases, ``sun`` and ``Sun``).
        lemma: the lemma, lowercase, a multiword one joined with ``_`` (``take_place``).
        pos: universal POS (``NOUN``, ``VERB``, ``ADJ``, ``ADV``).
        example: the example's number among the synset's examples.
        words: the example as words (:func:`workbench.encoding.alignment.split_words`).
        index: the position of the lemma's first word in ``words``.
        size: how many words the lemma spans there (1, or more for a multiword lemma).
    """

    synset: str
    lexname: str
    keys: tuple[str, ...]
    lemma: str
    pos: str
    example: int
    words: tuple[str, ...]
    index: int
    size: int


@dataclass(frozen=True)
class WordNetExamples:
    """Every located use of WordNet's examples (:func:`example_uses`), in WordNet's synset order,
    and their digest (for the training card)."""

    uses: tuple[ExampleUse, ...]
    sha256: str


def _morphy_pos(wn_pos: str) -> str:
    return "a" if wn_pos == "s" else wn_pos


def locate_lemma(words: Sequence[str], lemma: str, wn_pos: str) -> int | None:
    """Position of the first occurrence of ``lemma`` (``_``-joined when multiword) in ``words``,
    each word matched as itself or through morphy's base forms for WordNet POS ``wn_pos``
    (``n v a s r``); None when it is not there.

    Example::

        >>> locate_lemma(["They", "took", "place", "."], "take_place", "v")
        1
        >>> locate_lemma(["the", "banker"], "bank", "n") is None
        True
    """
    parts = lemma.lower().split("_")
    pos = _morphy_pos(wn_pos)
    lower = [w.lower() for w in words]
    forms: dict[int, set[str]] = {}

    def matches(i: int, part: str) -> bool:
        if lower[i] == part:
            return True
        if i not in forms:
            forms[i] = set(morphy(lower[i], pos))
        return part in forms[i]

    for i in range(len(lower) - len(parts) + 1):
        if all(matches(i + j, part) for j, part in enumerate(parts)):
            return i
    return None


def synset_uses(synset: Any) -> list[ExampleUse]:
    """The uses of one NLTK ``Synset``: for each usage example, every lemma of the synset found
    in it (:func:`locate_lemma`), in the synset's lemma order; lemmas that differ only in case
    (``sun``, ``Sun``) are one lemma, with both sense keys."""
    keys: dict[str, list[str]] = {}
    for lemma in synset.lemmas():
        keys.setdefault(lemma.name().lower(), []).append(lemma.key())
    found = []
    pos = WN_TO_UPOS[synset.pos()]
    for number, text in enumerate(synset.examples()):
        words = tuple(split_words(text))
        for name, its_keys in keys.items():
            at = locate_lemma(words, name, synset.pos())
            if at is not None:
                found.append(ExampleUse(synset.name(), synset.lexname(), tuple(its_keys), name,
                                        pos, number, words, at, len(name.split("_"))))  # fmt: skip
    return found


@functools.lru_cache(maxsize=2)
def _uses(wordnet: WordNet) -> WordNetExamples:
    uses = tuple(u for s in wordnet.reader.all_synsets() for u in synset_uses(s))
    digest = sha256_json([wordnet.version, [(u.keys, u.example, u.index) for u in uses]])
    return WordNetExamples(uses, digest)


def example_uses(wordnet: WordNet | None = None) -> WordNetExamples:
    """Every located use of WordNet's usage examples (about 48,000 of the 48,339 examples' lemmas),
    found once per process (a pass over WordNet of some seconds) and kept."""
    return _uses(wordnet or load_wordnet())


def split_of_lemmas(
    lemmas: Iterable[str], seed: int, fractions: tuple[float, float] = (0.8, 0.1)
) -> dict[str, str]:
    """Lemma -> ``train``, ``dev`` or ``test``: the sorted lemmas shuffled with ``seed``, the
    first ``fractions[0]`` of them train, the next ``fractions[1]`` dev, the rest test."""
    ordered = sorted(set(lemmas))
    random.Random(seed).shuffle(ordered)
    cut1 = int(len(ordered) * fractions[0])
    cut2 = int(len(ordered) * (fractions[0] + fractions[1]))
    return {lem: SPLITS[0 if i < cut1 else 1 if i < cut2 else 2] for i, lem in enumerate(ordered)}


def _as_word(use: ExampleUse) -> tuple[tuple[str, ...], int]:
    """The example's words with a multiword target joined into one word (``"took place"``), and
    the target's position."""
    w, i, n = use.words, use.index, use.size
    return (*w[:i], " ".join(w[i : i + n]), *w[i + n :]), i


def _wic_pair(a: ExampleUse, b: ExampleUse, label: str) -> WicPair:
    words_a, index_a = _as_word(a)
    words_b, index_b = _as_word(b)
    return WicPair(a.lemma, a.pos, words_a, index_a, words_b, index_b, a.keys, b.keys, label)


def _params(examples: WordNetExamples, seed: int, fractions: tuple[float, float]) -> dict:
    return {"corpus": CORPUS, "corpus_sha256": examples.sha256, "seed": seed,
            "fractions": list(fractions)}  # fmt: skip


def build_wordnet_wic(
    examples: WordNetExamples | None = None,
    seed: int = 0,
    max_per_lemma: int = 5,
    fractions: tuple[float, float] = (0.8, 0.1),
) -> WicSplits:
    """The ``wordnet-wic`` pairs (see the module docstring).

    Per (lemma, POS) with examples of at least two synsets and two examples of one synset,
    every candidate pair of different example texts is listed (same synset: *same*; two
    synsets: *different*), and ``n`` of each are drawn with the seed, ``n`` = min(same
    candidates, different candidates, ``max_per_lemma``): every lemma is balanced, and so is
    every split. The pairs of a split are shuffled with the seed.

    Args:
        examples: the located uses (default :func:`example_uses`).
        seed: seeds the lemma split and the drawing.
        max_per_lemma: at most this many same and this many different pairs per (lemma, POS).
        fractions: shares of lemmas in train and dev (test gets the rest).

    Raises:
        DataError: no pairs at all (``examples`` too few).
    """
    examples = examples or example_uses()
    rng = random.Random(seed)
    groups: dict[tuple[str, str], list[ExampleUse]] = defaultdict(list)
    for use in examples.uses:
        groups[(use.lemma, use.pos)].append(use)
    split_of = split_of_lemmas((lemma for lemma, _ in groups), seed, fractions)
    out: dict[str, list[WicPair]] = {s: [] for s in SPLITS}
    for key in sorted(groups):
        uses = sorted(groups[key], key=lambda u: (u.synset, u.example))
        same: list[tuple[ExampleUse, ExampleUse]] = []
        different: list[tuple[ExampleUse, ExampleUse]] = []
        for a, b in itertools.combinations(uses, 2):
            if a.words != b.words:
                (same if a.synset == b.synset else different).append((a, b))
        n = min(len(same), len(different), max_per_lemma)
        if n == 0:
            continue
        pairs = [_wic_pair(a, b, SAME) for a, b in rng.sample(same, n)]
        pairs += [_wic_pair(a, b, DIFFERENT) for a, b in rng.sample(different, n)]
        out[split_of[key[0]]].extend(pairs)
    for split in SPLITS:
        rng.shuffle(out[split])
    if not out["train"]:
        raise DataError("WordNet's examples yield no word-in-context pairs.")
    params = {**_params(examples, seed, fractions), "max_per_lemma": max_per_lemma}
    parts = (tuple(out["train"]), tuple(out["dev"]), tuple(out["test"]))
    return WicSplits(*parts, params, name="wordnet-wic")


def tag_use(use: ExampleUse) -> TaggedSentence:
    """One example as words and BIO tags: the located lemma ``B-<lexname>`` (and ``I-`` for a
    multiword lemma's further words), every other word ``O``.

    Example: the use of *bank* in "he sat on the bank" (``bank.n.01``) gives the tags
    ``O O O O B-noun.object``.
    """
    tags = ["O"] * len(use.words)
    tags[use.index] = f"B-{use.lexname}"
    for j in range(use.index + 1, use.index + use.size):
        tags[j] = f"I-{use.lexname}"
    return TaggedSentence(use.words, tuple(tags))


def build_wordnet_supersense(
    examples: WordNetExamples | None = None,
    seed: int = 0,
    fractions: tuple[float, float] = (0.8, 0.1),
) -> SupersenseSplits:
    """The ``wordnet-supersense`` sentences (see the module docstring): each example once, its
    first located lemma tagged (:func:`tag_use`), split by that lemma; each split shuffled with
    the seed (its first ``n`` sentences are a sample of every POS).

    Args:
        examples: the located uses (default :func:`example_uses`).
        seed: seeds the lemma split.
        fractions: shares of lemmas in train and dev (test gets the rest).

    Raises:
        DataError: no example at all.
    """
    examples = examples or example_uses()
    first: dict[tuple[str, int], ExampleUse] = {}
    for use in examples.uses:
        first.setdefault((use.synset, use.example), use)
    if not first:
        raise DataError("WordNet's examples yield no tagged sentence.")
    split_of = split_of_lemmas((u.lemma for u in first.values()), seed, fractions)
    out: dict[str, list[TaggedSentence]] = {s: [] for s in SPLITS}
    for use in first.values():
        out[split_of[use.lemma]].append(tag_use(use))
    rng = random.Random(seed)
    for split in SPLITS:
        rng.shuffle(out[split])
    lemmas = {s: sum(1 for v in split_of.values() if v == s) for s in SPLITS}
    params = {**_params(examples, seed, fractions), "lemmas": lemmas}
    parts = (tuple(out["train"]), tuple(out["dev"]), tuple(out["test"]))
    return SupersenseSplits(*parts, params, name="wordnet-supersense")
