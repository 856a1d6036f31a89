"""Sense-annotated corpora saved to disk and read back, checked.

A derived corpus that is slow to build is built once and kept: WordNet's usage examples
(:func:`workbench.corpora.wordnet_examples.example_corpus`) take NLTK's parsing of every
synset; their saved copy reads without it (docs/benchmarks.md, "Data loading"). The file is
gzipped JSON (never pickle: reading a file runs no code from it): the corpus's name, checksum
and counters, and each sentence as
``[id, words, lemmas, pos, [[id, index, lemma, pos, keys], ...]]``. Writes are atomic. A file
that is not what :func:`save_corpus` writes (truncated, corrupted, another format, words and tags
of different lengths, an instance outside its sentence) is refused with a
:class:`~workbench.errors.CacheError`.

Example::

    save_corpus(corpus, "examples.json.gz")
    assert read_corpus("examples.json.gz") == corpus
"""

from __future__ import annotations

import gzip
import json
import os
from pathlib import Path
from typing import Any

from workbench.corpora.readers import Corpus, Instance, Sentence
from workbench.errors import CacheError, DataError, LimitError
from workbench.fileio import atomic_path
from workbench.limits import read_gzip

#: The ``format`` field of a saved corpus; a file with another is refused.
CORPUS_FORMAT = "workbench-corpus/1"


def _instance_row(inst: Instance) -> list[Any]:
    return [inst.id, inst.index, inst.lemma, inst.pos, list(inst.keys)]


def save_corpus(corpus: Corpus, path: str | os.PathLike[str]) -> Path:
    """Write ``corpus`` (not its source paths) to ``path`` atomically; returns the path.

    Raises:
        OutputError: the file cannot be written (the target is then untouched).
    """
    payload = {
        "format": CORPUS_FORMAT,
        "name": corpus.name,
        "sha256": corpus.sha256,
        "n_unknown_gold": corpus.n_unknown_gold,
        "n_skipped": corpus.n_skipped,
        "sentences": [
            [s.id, s.words, s.lemmas, s.pos, [_instance_row(i) for i in s.instances]]
            for s in corpus.sentences
        ],
    }
    path = Path(path)
    with atomic_path(path) as tmp:
        with gzip.open(tmp, "wt", encoding="utf-8", compresslevel=1) as fh:
            json.dump(payload, fh, ensure_ascii=False, separators=(",", ":"))
    return path


def _strings(value: Any, what: str) -> tuple[str, ...]:
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise CacheError(f"{what} is not a list of strings")
    return tuple(value)


def _instance(row: Any, sentence: str, n_words: int) -> Instance:
    if not isinstance(row, list) or len(row) != 5:
        raise CacheError(f"an instance of {sentence!r} is not [id, index, lemma, pos, keys]")
    iid, index, lemma, pos, keys = row
    if not all(isinstance(v, str) for v in (iid, lemma, pos)):
        raise CacheError(f"instance of sentence {sentence!r}: id, lemma and pos must be strings")
    if not isinstance(index, int) or isinstance(index, bool) or not 0 <= index < n_words:
        raise CacheError(f"instance {iid!r}: word index {index!r} is outside its sentence")
    return Instance(iid, index, lemma, pos, _strings(keys, f"the keys of instance {iid!r}"))


def _sentence(row: Any) -> Sentence:
    if not isinstance(row, list) or len(row) != 5 or not isinstance(row[0], str):
        raise CacheError("a sentence is not [id, words, lemmas, pos, instances]")
    sid = row[0]
    words, lemmas, pos = (_strings(v, f"sentence {sid!r}'s {n}")
                          for v, n in zip(row[1:4], ("words", "lemmas", "tags")))  # fmt: skip
    if not len(words) == len(lemmas) == len(pos):
        raise CacheError(f"sentence {sid!r}: words, lemmas and tags differ in length")
    if not isinstance(row[4], list):
        raise CacheError(f"sentence {sid!r}: its instances are not a list")
    return Sentence(sid, words, lemmas, pos, tuple(_instance(i, sid, len(words)) for i in row[4]))


def read_corpus(path: str | os.PathLike[str]) -> Corpus:
    """The corpus :func:`save_corpus` wrote to ``path``.

    Raises:
        CacheError: the file cannot be read, or is not a corpus this module wrote (the message
            says what is wrong).
        LimitError: it is, or inflates to, more than the ``text_bytes`` limit (the file is
            kept).
    """
    path = Path(path)
    try:  # read and inflated within the text limit: a gzip bomb stops there
        data = read_gzip(path, str(path), "text_bytes")
        payload = json.loads(data.decode("utf-8"))
    except LimitError:
        raise  # refused for this run, the file kept (a lowered limit is no damage)
    except (OSError, DataError, UnicodeDecodeError, ValueError, RecursionError) as exc:
        raise CacheError(f"cannot read the saved corpus {path}: {exc}") from exc
    if not isinstance(payload, dict) or payload.get("format") != CORPUS_FORMAT:
        raise CacheError(f"{path} is not a saved corpus ({CORPUS_FORMAT})")
    try:
        name, sha256 = str(payload["name"]), str(payload["sha256"])
        counts = int(payload["n_unknown_gold"]), int(payload["n_skipped"])
        rows = payload["sentences"]
    except (KeyError, TypeError, ValueError) as exc:
        raise CacheError(f"{path}: a saved corpus's field is missing or malformed: {exc}") from exc
    if not isinstance(rows, list):
        raise CacheError(f"{path}: its sentences are not a list")
    try:
        sentences = tuple(_sentence(row) for row in rows)
    except CacheError as exc:
        raise CacheError(f"{path}: {exc}") from None
    return Corpus(name, sentences, (), sha256, *counts)
