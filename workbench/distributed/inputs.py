"""The inputs of a sharded job: their kinds, the plan (which items go into which shard), and
reading the sentences of one part back.

An input's kind follows its name (``.xz`` compression accepted for all but Parquet):

* framework XML (``*.xml``, e.g. ``semcor.data.xml``): sentences with lemmas, POS and the
  sense-annotated instances, gold keys from the ``*.gold.key.txt`` beside it
  (:func:`workbench.corpora.readers.read_xml`); an item is a sentence;
* JSONL (``*.jsonl``, ``*.ndjson``): one JSON object per line whose ``text_column`` field is a
  sentence (a string, split into words, or a list of word strings); an item is a line;
* Parquet (``*.parquet``, ``*.pq``): the ``text_column`` column, one sentence per row (a string
  or a list of word strings); an item is a row;
* anything else: text, one sentence per line (split by
  :func:`workbench.encoding.alignment.split_words`); an item is a line.

Blank lines, empty rows and null values make no sentence but keep their item number, so a
sentence's id says where it came from: ``<stem>.l<line>`` (text, JSONL; lines from 1, the ids
:func:`~workbench.corpora.readers.read_text` gives), ``<stem>.r<row>`` (Parquet; rows from 0),
the XML's own sentence id.

A :class:`Part` is ``shard_size`` consecutive items of one input (never two inputs): the unit
of work, of resumption and of storage (one shard). :func:`plan_input` cuts an input into parts
on the driver, reading only what it must (line offsets of text; the XML, whose sentences then
travel with their part); :func:`read_part` reads a part's sentences on a worker.

Example::

    plan = plan_input("wiki.txt", 0, shard_size=2000, text_column="text")
    plan.parts[0].describe()                     # 'wiki.txt lines 1-2000'
    for item, sentence in read_part(plan.parts[0], "text"):
        sentence.id, sentence.words              # 'wiki.l1', ('The', 'bank', ...)
"""

from __future__ import annotations

import json
import lzma
import os
from collections.abc import Iterator
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Literal

import pyarrow.parquet as pq

from workbench.corpora.parsing import open_maybe_xz
from workbench.corpora.readers import Instance, Sentence, read_xml, sentence_from_words
from workbench.encoding.alignment import normalize_input, split_words
from workbench.errors import DataError, InputError
from workbench.fileio import sha256_file

InputKind = Literal["text", "jsonl", "parquet", "xml"]
_CHUNK = 1 << 20  # bytes read at a time while finding line offsets


def input_kind(path: str | os.PathLike[str]) -> InputKind:
    """The kind of an input, from its name (see the module docstring)."""
    name = Path(path).name.lower().removesuffix(".xz")
    if name.endswith(".xml"):
        return "xml"
    if name.endswith((".jsonl", ".ndjson")):
        return "jsonl"
    if name.endswith((".parquet", ".pq")):
        return "parquet"
    return "text"


def input_stem(path: str | os.PathLike[str]) -> str:
    """The name sentence ids start with: the file name without ``.xz`` and its last suffix
    (``.data.xml`` for XML), as :func:`~workbench.corpora.readers.read_text` names a corpus."""
    name = Path(path).name.removesuffix(".xz")
    if name.lower().endswith(".data.xml"):
        return name[: -len(".data.xml")]
    return name.rsplit(".", 1)[0] if "." in name else name


def sentence_to_json(sentence: Sentence) -> list[Any]:
    """A sentence as plain JSON lists (to travel with its part to a worker)."""
    instances = [[i.id, i.index, i.lemma, i.pos, list(i.keys)] for i in sentence.instances]
    return [
        sentence.id,
        list(sentence.words),
        list(sentence.lemmas),
        list(sentence.pos),
        instances,
    ]


def sentence_from_json(data: list[Any]) -> Sentence:
    """The inverse of :func:`sentence_to_json`."""
    sid, words, lemmas, pos, instances = data
    return Sentence(
        sid,
        tuple(words),
        tuple(lemmas),
        tuple(pos),
        tuple(Instance(i, int(x), lemma, p, tuple(keys)) for i, x, lemma, p, keys in instances),
    )


@dataclass(frozen=True)
class Part:
    """``stop - start`` consecutive items of one input: what one shard holds.

    Attributes:
        name: the shard's name, ``<input:05d>-<part:06d>``.
        input: index of the input in the job's input list.
        path: the input file (absolute).
        kind: its :data:`InputKind`.
        start, stop: the items ``[start, stop)``, from 0.
        offset, end: byte offsets of items ``start`` and ``stop`` (text and JSONL; in the
            decompressed stream of an ``.xz`` file), else -1.
        input_sha256: identity of the input's content when planned.
        sentences: XML only, the part's sentences as :func:`sentence_to_json` lists.
    """

    name: str
    input: int
    path: str
    kind: InputKind
    start: int
    stop: int
    offset: int = -1
    end: int = -1
    input_sha256: str = ""
    sentences: tuple[Any, ...] = ()

    @property
    def n_items(self) -> int:
        return self.stop - self.start

    def describe(self) -> str:
        """Where the part comes from, e.g. ``wiki.txt lines 2001-4000``."""
        unit, first = {"text": ("lines", 1), "jsonl": ("lines", 1)}.get(
            self.kind, ("rows" if self.kind == "parquet" else "sentences", 0)
        )
        return f"{Path(self.path).name} {unit} {self.start + first}-{self.stop - 1 + first}"

    def to_json(self) -> str:
        return json.dumps(asdict(self))

    @classmethod
    def from_json(cls, text: str) -> Part:
        data = json.loads(text)
        data["sentences"] = tuple(data["sentences"])
        return cls(**data)


@dataclass(frozen=True)
class InputPlan:
    """One input cut into parts.

    Attributes:
        path: the input (absolute); kind: its kind; sha256: identity of its content (XML: of the
            XML and its key file); n_items: its items; parts: its parts in order.
    """

    path: str
    kind: InputKind
    sha256: str
    n_items: int
    parts: tuple[Part, ...] = field(default=())


def part_name(input_index: int, part_index: int) -> str:
    """The shard name of part ``part_index`` of input ``input_index``."""
    return f"{input_index:05d}-{part_index:06d}"


def plan_input(
    path: str | os.PathLike[str], index: int, shard_size: int, text_column: str
) -> InputPlan:
    """Cut one input into parts of ``shard_size`` items.

    Raises:
        DataError: the file cannot be read, is malformed XML (naming file and line), or lacks
            the Parquet column.
    """
    path = Path(path).resolve()
    kind = input_kind(path)
    if not path.is_file():
        raise DataError(f"{path}: file not found")
    if kind == "xml":
        return _plan_xml(path, index, shard_size)
    if kind == "parquet":
        return _plan_parquet(path, index, shard_size, text_column)
    return _plan_lines(path, kind, index, shard_size)


def _plan_lines(path: Path, kind: InputKind, index: int, shard_size: int) -> InputPlan:
    """Byte offsets of every ``shard_size``-th line (one pass over the file)."""
    starts = [0]  # byte offset of lines 0, shard_size, 2 * shard_size, ...
    n_lines, pos, last = 0, 0, b"\n"
    try:
        with open_maybe_xz(path, "rb") as fh:
            while chunk := fh.read(_CHUNK):
                at = chunk.find(b"\n")
                while at >= 0:
                    n_lines += 1
                    if n_lines % shard_size == 0:
                        starts.append(pos + at + 1)
                    at = chunk.find(b"\n", at + 1)
                pos += len(chunk)
                last = chunk[-1:]
        digest = sha256_file(path)
    except (OSError, EOFError, lzma.LZMAError) as exc:
        raise DataError(f"{path}: cannot read: {exc}") from exc
    if last != b"\n":  # a last line without its newline is a line too
        n_lines += 1
    if starts[-1] >= pos:
        starts.pop()  # no line starts at the end of the file
    ends = [*starts[1:], pos]
    parts = tuple(
        Part(part_name(index, k), index, str(path), kind, k * shard_size,
             min((k + 1) * shard_size, n_lines), a, b, digest)
        for k, (a, b) in enumerate(zip(starts, ends))
    )  # fmt: skip
    return InputPlan(str(path), kind, digest, n_lines, parts)


def _plan_parquet(path: Path, index: int, shard_size: int, text_column: str) -> InputPlan:
    try:
        meta = pq.ParquetFile(path)
        names = meta.schema_arrow.names
        n_rows = int(meta.metadata.num_rows)
        digest = sha256_file(path)
    except (OSError, ValueError) as exc:  # pyarrow's errors derive from these
        raise DataError(f"{path}: cannot read as Parquet: {exc}") from exc
    if text_column not in names:
        raise DataError(f"{path}: no column '{text_column}' (columns: {', '.join(names)})")
    parts = tuple(
        Part(part_name(index, k), index, str(path), "parquet", a, min(a + shard_size, n_rows),
             input_sha256=digest)
        for k, a in enumerate(range(0, n_rows, shard_size))
    )  # fmt: skip
    return InputPlan(str(path), "parquet", digest, n_rows, parts)


def _plan_xml(path: Path, index: int, shard_size: int) -> InputPlan:
    corpus = read_xml(path)  # DataError names file and line
    sentences = [sentence_to_json(s) for s in corpus.sentences]
    n = len(sentences)
    parts = tuple(
        Part(part_name(index, k), index, str(path), "xml", a, min(a + shard_size, n),
             input_sha256=corpus.sha256, sentences=tuple(sentences[a : a + shard_size]))
        for k, a in enumerate(range(0, n, shard_size))
    )  # fmt: skip
    return InputPlan(str(path), "xml", corpus.sha256, n, parts)


# --------------------------------------------------------------------------- reading a part


def read_part(part: Part, text_column: str) -> list[tuple[int, Sentence]]:
    """The sentences of a part with their item numbers (blank items skipped).

    Raises:
        DataError: unreadable bytes, text that is not UTF-8, a JSONL line that is not a JSON
            object with the ``text_column`` field, a value that is not text; the message names
            the file and the line (or row).
    """
    if part.kind == "xml":
        return [(part.start + i, sentence_from_json(s)) for i, s in enumerate(part.sentences)]
    if part.kind == "parquet":
        return _read_parquet(part, text_column)
    return list(_read_lines(part, text_column))


def _read_lines(part: Part, text_column: str) -> Iterator[tuple[int, Sentence]]:
    path, stem = Path(part.path), input_stem(part.path)
    try:
        with open_maybe_xz(path, "rb") as fh:
            fh.seek(part.offset)
            data = fh.read(part.end - part.offset)
    except (OSError, EOFError, lzma.LZMAError) as exc:
        raise DataError(f"{path}: cannot read: {exc}") from exc
    lines = data.split(b"\n")
    if lines and not lines[-1]:
        lines.pop()  # the newline that ends the part's last line
    for item, raw in enumerate(lines, start=part.start):
        line = item + 1
        try:  # a byte-order mark opening the file is not part of its first line
            text = raw.decode("utf-8-sig" if part.offset == 0 and item == part.start else "utf-8")
        except UnicodeDecodeError as exc:
            raise DataError(
                f"{path}:{line}: not UTF-8 text ({exc.reason} at byte {exc.start})"
            ) from exc
        if part.kind == "jsonl":
            if not text.strip():
                continue
            value = _json_field(text, text_column, f"{path}:{line}")
        else:
            value = text
        words = _words(value, f"{path}:{line}")
        if words:
            yield item, sentence_from_words(f"{stem}.l{line}", words)


def _json_field(text: str, column: str, where: str) -> object:
    try:
        obj = json.loads(text)
    except json.JSONDecodeError as exc:
        raise DataError(f"{where}: not JSON ({exc.msg}, column {exc.colno})") from exc
    if not isinstance(obj, dict) or column not in obj:
        raise DataError(f"{where}: not a JSON object with a '{column}' field")
    return obj[column]


def _words(value: object, where: str) -> list[str]:
    """The words of a sentence value: a string (split) or a list of word strings; None: none."""
    if value is None:
        return []
    if isinstance(value, str):
        return split_words(value)
    if isinstance(value, list):
        if not value:
            return []
        try:
            return normalize_input([value])[0]
        except InputError as exc:  # names the word; the caller's place goes in front
            raise DataError(f"{where}: {exc}") from exc
    raise DataError(f"{where}: expected text or a list of word strings, got {type(value).__name__}")


def _read_parquet(part: Part, text_column: str) -> list[tuple[int, Sentence]]:
    path, stem = Path(part.path), input_stem(part.path)
    try:
        pf = pq.ParquetFile(path)
        meta = pf.metadata
        groups, first, row = [], None, 0
        for g in range(meta.num_row_groups):  # the row groups that overlap [start, stop)
            n = meta.row_group(g).num_rows
            if row < part.stop and row + n > part.start:
                groups.append(g)
                first = row if first is None else first
            row += n
        table = pf.read_row_groups(groups, columns=[text_column])
    except (OSError, ValueError) as exc:
        raise DataError(f"{path}: cannot read as Parquet: {exc}") from exc
    values = table.column(0).slice(part.start - (first or 0), part.n_items).to_pylist()
    out = []
    for item, value in enumerate(values, start=part.start):
        words = _words(value, f"{path}: row {item}")
        if words:
            out.append((item, sentence_from_words(f"{stem}.r{item}", words)))
    return out
