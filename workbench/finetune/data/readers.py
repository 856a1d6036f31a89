"""Data readers for fine-tuning: CSV / JSONL tables, CoNLL-style BIO files, plain text, WSD
corpora.

Formats (the task kind picks the reader; a table's format is taken from its extension):

* ``.csv`` / ``.tsv`` with a header row, or ``.jsonl`` (one JSON object a line):
  ``text,label`` (sequence classification) or ``text_a,text_b,label`` (pairs). Extra
  columns are ignored. A missing or empty label is an error naming the line.
* CoNLL (any other extension, usually ``.conll`` / ``.txt`` / ``.bio``): one word a line, the
  word in the first column and its IOB2 tag in the last (columns split on tabs or spaces),
  a blank line between sentences, ``-DOCSTART-`` lines skipped. An ``I-X`` that does not
  continue an ``X`` entity is an error naming the line, unless ``repair_bio=True`` (it then
  becomes ``B-X``, the reading seqeval's scorer gives it anyway).
* plain text for masked-LM: one text a line, blank lines skipped.
* WSD: a framework ``*.data.xml`` with its ``*.gold.key.txt`` beside it, or a framework dataset
  by name (:func:`read_wsd`; the corpus reader :func:`workbench.corpora.readers.read_xml` reads
  it).

The table, CoNLL and text readers raise :class:`~workbench.errors.DataError` for a missing or
empty file.

Example::

    train = read_table("train.csv", pair=False)     # -> DataFile of TextExample
    labels = LabelSet.from_examples(train.examples)
    labels.check(dev.examples, "dev.csv")           # unseen dev labels -> DataError
"""

from __future__ import annotations

import csv
import io
import json
import os
from collections.abc import Sequence
from dataclasses import asdict, dataclass, is_dataclass
from pathlib import Path

from workbench.corpora.datasets import DATASETS, load_dataset
from workbench.corpora.readers import Corpus, read_xml
from workbench.corpora.text import read_text_file
from workbench.errors import DataError
from workbench.fileio import input_problem, sha256_file, sha256_json
from workbench.finetune.data.bio import is_valid_tag, orphan_inside, repair_bio


@dataclass(frozen=True)
class TextExample:
    """One text and its class label."""

    text: str
    label: str


@dataclass(frozen=True)
class PairExample:
    """Two texts (one input, separated by [SEP]) and their label."""

    text_a: str
    text_b: str
    label: str


@dataclass(frozen=True)
class TaggedSentence:
    """Words and one IOB2 tag per word."""

    words: tuple[str, ...]
    tags: tuple[str, ...]


@dataclass(frozen=True)
class DataFile:
    """Examples read from one source, with its identity for the training card.

    Attributes:
        examples: the examples, in file order.
        source: the file path (or a built-in task's name).
        sha256: SHA-256 of the file's bytes (or of the built-in data's canonical JSON).
    """

    examples: tuple
    source: str
    sha256: str

    def card(self) -> dict:
        """``{"source", "sha256", "n"}`` for the training card."""
        return {"source": self.source, "sha256": self.sha256, "n": len(self.examples)}


def _open_checked(path: str | Path) -> Path:
    path = Path(path)
    problem = input_problem(path)
    if problem is not None:  # missing, a directory, a link that leads nowhere, unreadable ...
        raise DataError(f"Data file {path} {problem}.")
    if path.stat().st_size == 0:
        raise DataError(f"Data file {path} is empty.")
    return path


def _text(path: Path) -> str:
    """The text of the data file ``path`` (:func:`workbench.corpora.text.read_text_file`: at
    most the ``text_bytes`` limit, no NUL, UTF-8 or UTF-16/32 with a byte-order mark)."""
    return read_text_file(path, f"Data file {path}", DataError)


def _rows(path: Path) -> list[tuple[int, dict]]:
    """``(line number, row dict)`` of a CSV/TSV (header row) or JSONL file."""
    suffix = path.suffix.lower()
    if suffix in (".jsonl", ".json", ".ndjson"):
        rows = []
        for n, line in enumerate(_text(path).splitlines(), 1):
            if not line.strip():
                continue
            try:
                obj = json.loads(line)
            except json.JSONDecodeError as exc:
                raise DataError(f"{path}, line {n}: not valid JSON ({exc.msg}).") from exc
            if not isinstance(obj, dict):
                raise DataError(f"{path}, line {n}: expected a JSON object, got {obj!r:.40}.")
            rows.append((n, obj))
        return rows
    if suffix not in (".csv", ".tsv"):
        raise DataError(f"{path}: a table must be .csv, .tsv or .jsonl, not '{suffix}'.")
    fh = io.StringIO(_text(path), newline="")
    reader = csv.DictReader(fh, delimiter="\t" if suffix == ".tsv" else ",")
    return [(reader.line_num, row) for row in reader]


def read_table(path: str | Path, pair: bool) -> DataFile:
    """Read ``text,label`` (``pair=False``) or ``text_a,text_b,label`` rows.

    Raises:
        DataError: missing/empty file, a missing column, an empty text or label (naming the line).
    """
    path = _open_checked(path)
    columns = ("text_a", "text_b", "label") if pair else ("text", "label")
    examples = []
    for n, row in _rows(path):
        values = []
        for col in columns:
            value = row.get(col)
            if value is None or not str(value).strip():
                raise DataError(
                    f"{path}, line {n}: column '{col}' is missing or empty "
                    f"(expected columns: {', '.join(columns)})."
                )
            values.append(str(value).strip())
        examples.append(PairExample(*values) if pair else TextExample(*values))
    if not examples:
        raise DataError(f"{path} has a header but no examples.")
    return DataFile(tuple(examples), str(path), sha256_file(path))


def _check_tags(path: Path, lines: list[int], tags: list[str], repair: bool) -> list[str]:
    for n, tag in zip(lines, tags, strict=True):
        if not is_valid_tag(tag):
            raise DataError(f"{path}, line {n}: '{tag}' is not an IOB2 tag (O, B-X or I-X).")
    orphans = orphan_inside(tags)
    if orphans and not repair:
        i = orphans[0]
        raise DataError(
            f"{path}, line {lines[i]}: '{tags[i]}' does not continue an entity of its type "
            "(I- without B-). Fix the file, or pass repair_bio=True (--repair-bio) to read it "
            "as B-."
        )
    return repair_bio(tags) if orphans else tags


def read_conll(path: str | Path, repair_bio: bool = False) -> DataFile:
    """Read a CoNLL-style BIO file into :class:`TaggedSentence` examples (see module doc)."""
    path = _open_checked(path)
    sentences: list[TaggedSentence] = []
    words: list[str] = []
    tags: list[str] = []
    lines: list[int] = []

    def flush() -> None:
        if words:
            fixed = _check_tags(path, lines, tags, repair_bio)
            sentences.append(TaggedSentence(tuple(words), tuple(fixed)))
        words.clear()
        tags.clear()
        lines.clear()

    for n, line in enumerate(_text(path).splitlines(), 1):
        if not line.strip():
            flush()
            continue
        if line.startswith("-DOCSTART-"):
            continue
        parts = line.split("\t") if "\t" in line else line.split()
        if len(parts) < 2:
            raise DataError(f"{path}, line {n}: expected 'word<TAB>tag', got {line!r:.60}.")
        words.append(parts[0].strip())
        tags.append(parts[-1].strip())
        lines.append(n)
    flush()
    if not sentences:
        raise DataError(f"{path} contains no tagged sentences.")
    return DataFile(tuple(sentences), str(path), sha256_file(path))


def read_text(path: str | Path) -> DataFile:
    """Read a plain-text file, one text a line (blank lines skipped), for masked-LM."""
    path = _open_checked(path)
    texts = [ln.strip() for ln in _text(path).splitlines() if ln.strip()]
    if not texts:
        raise DataError(f"{path} contains only blank lines.")
    return DataFile(tuple(texts), str(path), sha256_file(path))


def wsd_data(corpus: Corpus, source: str | None = None) -> DataFile:
    """A sense-annotated corpus as the WSD task's data (its sentences; checksum: the corpus's)."""
    return DataFile(tuple(corpus.sentences), source or corpus.name, corpus.sha256)


def read_wsd(path: str | Path) -> DataFile:
    """WSD data from a framework ``*.data.xml`` (its ``*.gold.key.txt`` found beside it) or a
    framework dataset by name (``semcor``, ``semeval2007``, ``ALL``, ...)."""
    name = str(path)
    if name in DATASETS and not os.path.lexists(name):
        return wsd_data(load_dataset(name))
    return wsd_data(read_xml(path), name)


def in_memory(examples: Sequence, name: str) -> DataFile:
    """Wrap examples made in Python (or by a built-in task) as a :class:`DataFile`."""
    if not examples:
        raise DataError(f"{name}: no examples.")
    payload = [asdict(e) if is_dataclass(e) and not isinstance(e, type) else e for e in examples]
    return DataFile(tuple(examples), name, sha256_json(payload))


def _labels_of(examples: Sequence) -> set[str]:
    """Class labels; for tagged sentences both B- and I- of every entity type seen, and O."""
    found: set[str] = set()
    for ex in examples:
        if isinstance(ex, TaggedSentence):
            found.add("O")
            found.update(f"{p}-{t[2:]}" for t in ex.tags if t != "O" for p in ("B", "I"))
        else:
            found.add(ex.label)
    return found


@dataclass(frozen=True)
class LabelSet:
    """The label vocabulary, fixed from the training data (sorted, so ids are reproducible).

    Attributes:
        names: label strings; the id of a label is its position.
    """

    names: tuple[str, ...]

    @classmethod
    def from_examples(cls, examples: Sequence) -> LabelSet:
        """Labels of classification examples, or the tags of tagged sentences.

        For tagged sentences the set is ``O`` (first), then ``B-X`` and ``I-X`` of every
        entity type ``X`` seen, so a dev ``I-X`` of a type trained only as ``B-X`` is known.
        """
        found = _labels_of(examples)
        if len(found) < 2 and not any(isinstance(e, TaggedSentence) for e in examples):
            raise DataError(
                f"The training data has only one label ({', '.join(found)}): need at least two."
            )
        ordered = sorted(found - {"O"})
        return cls(tuple(["O", *ordered] if "O" in found else ordered))

    def id(self, label: str) -> int:
        """The id of ``label`` (ValueError if unknown; use :meth:`check` first)."""
        return self.names.index(label)

    def check(self, examples: Sequence, source: str) -> None:
        """Raise :class:`DataError` if ``examples`` use labels absent from the training data."""
        found = _labels_of(examples)
        unseen = sorted(found - set(self.names))
        if unseen:
            raise DataError(
                f"{source} has labels never seen in the training data: {', '.join(unseen[:10])}"
                f"{' ...' if len(unseen) > 10 else ''}. Add examples of them to the training "
                "set, or drop them from the dev set."
            )
