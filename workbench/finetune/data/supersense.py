"""Built-in supersense tagging: BIO over WordNet's lexicographer classes of SemCor's words.

Each sense-annotated word gets the lexicographer file (``noun.person``, ``verb.motion``,
``adj.all``, ... 45 classes) of its first gold key's synset; every other word is ``O``.
A multiword token (``"took place"``, lemma ``take_place``) is split at its spaces into words
tagged ``B-X I-X``, which is what gives the task real spans; single words are ``B-X``.

Only documents in which nouns are annotated are used: SemCor's ``brownv`` part tags only verbs,
and its untagged nouns would teach the model that nouns are ``O``. Documents (not sentences)
are split 80/10/10 into train/dev/test with the seed.

Example::

    splits = build_supersense(load_dataset("semcor"), load_wordnet())
    train = splits.data("train")            # DataFile of TaggedSentence
"""

from __future__ import annotations

import random
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from workbench.corpora.readers import Corpus, Sentence
from workbench.errors import DataError
from workbench.finetune.data.readers import DataFile, TaggedSentence, in_memory
from workbench.lexicon.wordnet import WordNet
from workbench.outputs import output_file

SPLITS = ("train", "dev", "test")


def _document(sentence_id: str) -> str:
    """``d012.s034`` -> ``d012`` (the id up to the sentence part)."""
    return sentence_id.rsplit(".s", 1)[0]


def tag_sentence(sentence: Sentence, lexname_of: Callable[[str], str]) -> TaggedSentence:
    """Words and BIO supersense tags of one corpus sentence (multiword tokens split).

    Args:
        sentence: a :class:`workbench.corpora.readers.Sentence`.
        lexname_of: sense key -> lexicographer class name.
    """
    tagged = {inst.index: lexname_of(inst.keys[0]) for inst in sentence.instances if inst.keys}
    words: list[str] = []
    tags: list[str] = []
    for i, token in enumerate(sentence.words):
        parts = token.split() or [token]
        kind = tagged.get(i)
        words.extend(parts)
        if kind is None:
            tags.extend(["O"] * len(parts))
        else:
            tags.extend([f"B-{kind}"] + [f"I-{kind}"] * (len(parts) - 1))
    return TaggedSentence(tuple(words), tuple(tags))


@dataclass(frozen=True)
class SupersenseSplits:
    """Tagged sentences per split, and how they were made; ``name``: the built-in task's name,
    in its data's source (``builtin:supersense/train(...)``)."""

    train: tuple[TaggedSentence, ...]
    dev: tuple[TaggedSentence, ...]
    test: tuple[TaggedSentence, ...]
    params: dict[str, Any]
    name: str = "supersense"

    def data(self, split: str, limit: int | None = None) -> DataFile:
        """A split as a :class:`DataFile` (its first ``limit`` sentences)."""
        if split not in SPLITS:
            raise DataError(f"Unknown split '{split}': choose one of {', '.join(SPLITS)}.")
        sents = getattr(self, split)[:limit]
        name = f"builtin:{self.name}/{split}(seed={self.params['seed']},n={len(sents)})"
        return in_memory(list(sents), name)


def build_supersense(
    corpus: Corpus, wordnet: WordNet, seed: int = 0, fractions: tuple[float, float] = (0.8, 0.1)
) -> SupersenseSplits:
    """Build the supersense splits (see the module docstring).

    Args:
        corpus: SemCor as a :class:`workbench.corpora.readers.Corpus`.
        wordnet: a :class:`workbench.lexicon.wordnet.WordNet` (for the lexicographer classes).
        seed: seeds the document split.
        fractions: shares of documents in train and dev (test gets the rest).
    """
    cache: dict[str, str] = {}

    def lexname_of(key: str) -> str:
        if key not in cache:
            cache[key] = wordnet.lexname(wordnet.synset(key))
        return cache[key]

    by_doc: dict[str, list[Sentence]] = defaultdict(list)
    for sentence in corpus:
        by_doc[_document(sentence.id)].append(sentence)
    docs = sorted(
        d
        for d, sents in by_doc.items()
        if any(inst.pos == "NOUN" for s in sents for inst in s.instances)
    )
    if not docs:
        raise DataError(f"Corpus '{corpus.name}' has no document with annotated nouns.")
    random.Random(seed).shuffle(docs)
    cut1, cut2 = int(len(docs) * fractions[0]), int(len(docs) * sum(fractions))
    parts = {"train": docs[:cut1], "dev": docs[cut1:cut2], "test": docs[cut2:]}
    out = {
        split: tuple(tag_sentence(s, lexname_of) for d in sorted(parts[split]) for s in by_doc[d])
        for split in SPLITS
    }
    params = {
        "corpus": corpus.name,
        "corpus_sha256": corpus.sha256,
        "seed": seed,
        "fractions": list(fractions),
        "documents": {k: len(v) for k, v in parts.items()},
    }
    return SupersenseSplits(out["train"], out["dev"], out["test"], params)


def write_conll(
    sentences: tuple[TaggedSentence, ...], path: str | Path, overwrite: bool = False
) -> Path:
    """Write tagged sentences as a CoNLL file (``word<TAB>tag``, blank line between); whole or
    not at all, a file there that the workbench did not write replaced only with
    ``overwrite``."""
    path = Path(path)
    with output_file(path, overwrite=overwrite) as tmp, tmp.open("w", encoding="utf-8") as fh:
        for s in sentences:
            fh.writelines(f"{w}\t{t}\n" for w, t in zip(s.words, s.tags, strict=True))
            fh.write("\n")
    return path
