"""Sense-annotated corpora: the data model and the readers.

A corpus is a tuple of :class:`Sentence`; a sentence is a tuple of *words* (an element's
surface may contain spaces, e.g. the multiword ``"took place"``: it stays one word, never
split), their lemmas and universal POS tags, and the sense-annotated :class:`Instance` among
them. Readers:

* :func:`read_xml` - the unified evaluation framework's ``*.data.xml`` + ``*.gold.key.txt``
  (Raganato et al. 2017), also ``.xz``-compressed; SemCor comes in the same format. Streaming
  (expat, the parser under ``ElementTree.iterparse``): no element tree is built.
* :func:`read_text` - plain text, one sentence per line, no annotation.
* :func:`load_dataset` - a framework dataset by name (``"ALL"``, ``"semcor"``, ...).

Example::

    >>> corpus = load_dataset("senseval2")
    >>> corpus.n_instances
    2282
    >>> sentence, instance = next(corpus.instances())
    >>> sentence.words[instance.index], instance.lemma, instance.pos, instance.keys
    ('art', 'art', 'NOUN', ('art%1:09:00::',))
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

from workbench.corpora.parsing import parse_xml, read_gold_keys
from workbench.corpora.text import read_text_file
from workbench.encoding.alignment import split_words
from workbench.errors import DataError
from workbench.fileio import sha256_bytes, sha256_files


@dataclass(frozen=True, slots=True)
class Instance:
    """One sense-annotated word of a sentence.

    Attributes:
        id: the instance id (``"senseval2.d000.s000.t000"``).
        index: position of the word in :attr:`Sentence.words`.
        lemma: WordNet lemma, lowercase, multiword joined with ``_`` (``"take_place"``).
        pos: universal POS tag (``NOUN``, ``VERB``, ``ADJ``, ``ADV``).
        keys: gold WordNet sense keys, any of them is right; empty when there is no gold.
    """

    id: str
    index: int
    lemma: str
    pos: str
    keys: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class Sentence:
    """A sentence as words, with parallel lemmas and POS tags, and its instances.

    Attributes:
        id: the sentence id (``"senseval2.d000.s000"``).
        words: surfaces; one element is one word even when it contains spaces.
        lemmas: one lemma per word (same length as ``words``).
        pos: one universal POS tag per word (same length as ``words``).
        instances: the sense-annotated words, in sentence order.
    """

    id: str
    words: tuple[str, ...]
    lemmas: tuple[str, ...]
    pos: tuple[str, ...]
    instances: tuple[Instance, ...] = ()

    def __len__(self) -> int:
        return len(self.words)


@dataclass(frozen=True)
class Corpus:
    """A named, hashed collection of sentences.

    Attributes:
        name: short name (``"ALL"``, ``"semcor"``, a file stem).
        sentences: the sentences, in file order.
        source: the files it was read from (empty for an in-memory corpus).
        sha256: hex digest identifying the content (of the source files, or of the
            generating parameters for a derived corpus); cache keys use it.
        n_unknown_gold: gold-key lines whose id matched no instance (tolerated, counted).
        n_skipped: items the reader skipped (blank lines, examples without their target, ...).
    """

    name: str
    sentences: tuple[Sentence, ...]
    source: tuple[Path, ...] = ()
    sha256: str = ""
    n_unknown_gold: int = 0
    n_skipped: int = 0

    def __len__(self) -> int:
        return len(self.sentences)

    def __hash__(self) -> int:  # cheap: equal corpora have equal names and hashes
        return hash((self.name, self.sha256, len(self.sentences)))

    def __iter__(self) -> Iterator[Sentence]:
        return iter(self.sentences)

    @property
    def n_sentences(self) -> int:
        return len(self.sentences)

    @property
    def n_tokens(self) -> int:
        return sum(len(s.words) for s in self.sentences)

    @property
    def n_instances(self) -> int:
        return sum(len(s.instances) for s in self.sentences)

    def instances(self) -> Iterator[tuple[Sentence, Instance]]:
        """Yield ``(sentence, instance)`` for every instance, in corpus order."""
        for sentence in self.sentences:
            for instance in sentence.instances:
                yield sentence, instance

    def gold(self) -> dict[str, tuple[str, ...]]:
        """Instance id -> gold keys (instances without gold are left out)."""
        return {inst.id: inst.keys for _, inst in self.instances() if inst.keys}

    def pos_of(self) -> dict[str, str]:
        """Instance id -> universal POS (the grouping used for per-POS scores)."""
        return {inst.id: inst.pos for _, inst in self.instances()}

    def n_gold_keys(self) -> int:
        return sum(len(inst.keys) for _, inst in self.instances())

    def head(self, n: int) -> Corpus:
        """The first ``n`` sentences, as a corpus (its hash covers the cut)."""
        digest = sha256_bytes(f"{self.sha256}:head:{n}")
        return Corpus(f"{self.name}[:{n}]", self.sentences[:n], self.source, digest)


def default_gold_path(xml_path: str | os.PathLike) -> Path | None:
    """The framework's gold file next to an XML file (``X.data.xml[.xz]`` -> ``X.gold.key.txt``)."""
    xml_path = Path(xml_path)
    name = xml_path.name.removesuffix(".xz").removesuffix(".data.xml")
    for suffix in (".gold.key.txt", ".gold.key.txt.xz"):
        candidate = xml_path.with_name(name + suffix)
        if candidate.is_file():
            return candidate
    return None


def read_xml(
    xml_path: str | os.PathLike,
    gold_path: str | os.PathLike | None = None,
    name: str | None = None,
) -> Corpus:
    """Read a framework-format corpus (``*.data.xml`` + ``*.gold.key.txt``, ``.xz`` accepted).

    Args:
        xml_path: the ``*.data.xml`` (or ``*.data.xml.xz``) file.
        gold_path: its key file; ``None`` looks for ``*.gold.key.txt[.xz]`` next to it (no
            gold at all is allowed: every instance then has empty ``keys``).
        name: corpus name; defaults to the file name without ``.data.xml[.xz]``.

    Returns:
        The :class:`Corpus`; gold ids with no instance are counted in ``n_unknown_gold``.

    Raises:
        DataError: a missing file, malformed XML (the message names the file and line), or a
            gold file none of whose ids is an instance of the XML.
    """
    xml_path = Path(xml_path)
    if gold_path is None:
        gold_path = default_gold_path(xml_path)
    gold = read_gold_keys(gold_path) if gold_path is not None else {}
    sentences, used_gold = parse_xml(xml_path, gold, Sentence, Instance)
    if gold and not used_gold:
        example = next(iter(gold))
        raise DataError(
            f"none of the {len(gold)} ids of the gold file {gold_path} (e.g. {example!r}) is an "
            f"instance of {xml_path}: the key file of another dataset?"
        )
    sources = (xml_path,) if gold_path is None else (xml_path, Path(gold_path))
    stem = xml_path.name.removesuffix(".xz").removesuffix(".data.xml")
    return Corpus(
        name=name or stem,
        sentences=tuple(sentences),
        source=sources,
        sha256=sha256_files(sources),
        n_unknown_gold=len(gold) - used_gold,
    )


# --------------------------------------------------------------------------- plain text

#: The byte-order mark some editors write at the start of UTF-8 text, as a character.
BOM = "\ufeff"


def _line_sentences(lines: Iterable[str], name: str) -> tuple[list[Sentence], int]:
    """Sentences of the non-blank lines (id ``<name>.l<line number>``) and the blank count.

    A byte-order mark (U+FEFF) opening the first line is dropped: editors on Windows write one,
    and it is no part of the first word.
    """
    sentences, skipped = [], 0
    for number, line in enumerate(lines, start=1):
        if number == 1:
            line = line.removeprefix(BOM)
        words = split_words(line)
        if not words:
            skipped += 1
            continue
        sentences.append(sentence_from_words(f"{name}.l{number}", words))
    return sentences, skipped


def sentence_from_words(sentence_id: str, words: Iterable[str]) -> Sentence:
    """An unannotated sentence: lemma = lowercased word, POS ``X`` (unknown)."""
    words = tuple(words)
    return Sentence(sentence_id, words, tuple(w.lower() for w in words), ("X",) * len(words))


def read_text(path: str | os.PathLike, name: str | None = None) -> Corpus:
    """Read plain text, one sentence per line (``.xz`` accepted), split into words; the file
    is read by :func:`workbench.corpora.text.read_text_file` (at most the ``text_bytes`` limit,
    no NUL, UTF-8 or UTF-16/32 with a byte-order mark), else :class:`DataError`.

    Blank lines are skipped (counted in ``n_skipped``) but keep their number: the sentence of
    line 3 has id ``"<name>.l3"`` whatever came before.
    """
    path = Path(path)
    name = name or path.name.removesuffix(".xz").rsplit(".", 1)[0]
    text = read_text_file(path, error=DataError)  # size, NUL and encoding checked first
    sentences, skipped = _line_sentences(text.splitlines(), name)
    return Corpus(name, tuple(sentences), (path,), sha256_files([path]), n_skipped=skipped)


def corpus_from_texts(texts: Iterable[str], name: str = "texts") -> Corpus:
    """An in-memory corpus from raw strings (one sentence each; blank ones skipped)."""
    texts = list(texts)
    sentences, skipped = _line_sentences(texts, name)
    digest = sha256_bytes("\n".join(texts))
    return Corpus(name, tuple(sentences), (), digest, n_skipped=skipped)
