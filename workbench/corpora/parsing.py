"""File-level helpers of the corpus readers: ``.xz``, key files, the XML parser.

The framework's XML is parsed by expat (the parser under ``ElementTree.iterparse``) with
callbacks that build the sentences directly, so SemCor's 38 MB stream through without an
element tree and every error can name its file and line. :mod:`workbench.corpora.readers` is
the public interface.
"""

from __future__ import annotations

import contextlib
import gc
import lzma
import os
from collections.abc import Iterator
from pathlib import Path
from sys import intern
from typing import IO, Any
from xml.parsers import expat

import numpy as np

from workbench.corpora.text import read_text_file
from workbench.errors import DataError
from workbench.fileio import input_problem

# --------------------------------------------------------------------------- io


def open_maybe_xz(path: str | os.PathLike, mode: str = "rb") -> IO:
    """Open a file, decompressing it on the fly when its name ends with ``.xz``; as text, a
    UTF-8 byte-order mark at its start is not part of the first line."""
    path = Path(path)
    if path.is_dir():
        raise DataError(f"{path}: is a directory, not a file")
    if not path.exists():
        raise DataError(
            f"{path} {input_problem(path)}" if path.is_symlink() else f"{path}: file not found"
        )
    if not path.is_file():
        raise DataError(f"{path}: not a regular file")
    if path.suffix == ".xz":
        if "b" in mode:
            return lzma.open(path, mode)
        return lzma.open(path, mode, encoding="utf-8-sig")
    if "b" in mode:
        return open(path, mode)
    return open(path, mode, encoding="utf-8-sig")


# --------------------------------------------------------------------------- gold keys


def read_gold_keys(path: str | os.PathLike) -> dict[str, tuple[str, ...]]:
    """Read a key file (``id key [key ...]`` per line; ``.xz`` accepted).

    Keys of repeated ids are merged (in order, without duplicates), as the official scorer does.
    A line with an id and no key gives an empty tuple.
    """
    keys: dict[str, list[str]] = {}
    text = read_text_file(path, f"key file {path}", DataError)  # size, NUL, encoding, .xz
    for line in text.splitlines():
        fields = line.split()
        if not fields:
            continue
        bucket = keys.setdefault(fields[0], [])
        bucket.extend(k for k in fields[1:] if k not in bucket)
    return {k: tuple(v) for k, v in keys.items()}


# --------------------------------------------------------------------------- XML reader


class _XmlBuilder:
    """expat callbacks that turn the framework's XML into :class:`Sentence` objects."""

    def __init__(self, path: Path, parser, gold: dict, sentence_cls, instance_cls) -> None:
        self.path, self.parser, self.gold = path, parser, gold
        self.sentence_cls, self.instance_cls = sentence_cls, instance_cls
        self.sentences: list = []
        self.used_gold = 0
        self.sentence_id: str | None = None
        self.token: dict | None = None
        self.text: list[str] = []
        self.words: list[str] = []
        self.lemmas: list[str] = []
        self.pos: list[str] = []
        self.instances: list = []

    def fail(self, message: str) -> DataError:
        return DataError(f"{self.path}:{self.parser.CurrentLineNumber}: {message}")

    def start(self, name: str, attrs: dict) -> None:
        if name in ("wf", "instance"):
            if self.sentence_id is None:
                raise self.fail(f"<{name}> outside a <sentence>")
            if self.token is not None:
                raise self.fail(f"<{name}> nested in another token")
            if name == "instance" and not all(attrs.get(a) for a in ("id", "lemma", "pos")):
                raise self.fail("<instance> without its id, lemma and pos attributes")
            self.token = attrs
            self.text = []
        elif name == "sentence":
            if self.sentence_id is not None:
                raise self.fail("<sentence> nested in another <sentence>")
            self.sentence_id = attrs.get("id") or f"{self.path.stem}.s{len(self.sentences):05d}"
            self.words, self.lemmas, self.pos, self.instances = [], [], [], []

    def end(self, name: str) -> None:
        if name in ("wf", "instance"):
            self._end_token(name)
        elif name == "sentence":
            self.sentences.append(
                self.sentence_cls(
                    self.sentence_id,
                    tuple(self.words),
                    tuple(self.lemmas),
                    tuple(self.pos),
                    tuple(self.instances),
                )
            )
            self.sentence_id = None

    def _end_token(self, name: str) -> None:
        attrs, surface = self.token, "".join(self.text).strip()
        assert attrs is not None, "an end tag without its start tag"  # expat pairs the tags
        self.token = None
        if not surface:
            raise self.fail(f"<{name}> with an empty surface")
        lemma = intern(attrs.get("lemma") or surface)  # interned: SemCor repeats them a lot
        pos = intern(attrs.get("pos") or "X")
        surface = intern(surface)
        if name == "instance":
            keys = self.gold.get(attrs["id"], ())
            self.used_gold += attrs["id"] in self.gold
            self.instances.append(self.instance_cls(attrs["id"], len(self.words), lemma, pos, keys))
        self.words.append(surface)
        self.lemmas.append(lemma)
        self.pos.append(pos)

    def chars(self, data: str) -> None:
        if self.token is not None:
            self.text.append(data)


@contextlib.contextmanager
def _gc_paused() -> Iterator[None]:
    """No cyclic GC while building many small acyclic objects (SemCor: ~1.2 M); restored after."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


_XML_CHUNK = 1 << 16  # bytes read and parsed at a time
#: The most bytes an XML file may hold between two ``<``: a tag with its attributes plus the
#: text after it. The framework's files stay under 200; expat re-scans an unfinished token
#: each time more bytes arrive, so the time a token takes grows with the square of its length.
MAX_XML_TOKEN_BYTES = 1 << 16


def _feed_bounded(parser: Any, fh: IO[bytes], path: Path, limit: int) -> None:
    """Feed ``fh`` to ``parser`` in chunks, refusing (before expat sees it) a run of more than
    ``limit`` bytes without a ``<``."""
    offset = 0  # bytes read so far
    last_open = 0  # offset of the last "<"
    lines = 1  # line of ``offset``
    while chunk := fh.read(_XML_CHUNK):
        opens = np.flatnonzero(np.frombuffer(chunk, dtype=np.uint8) == 0x3C) + offset
        bounds = np.concatenate([[last_open], opens, [offset + len(chunk)]])
        gaps = np.diff(bounds)
        if gaps.size and int(gaps.max()) > limit:
            start = int(bounds[int(np.argmax(gaps))])
            line = lines + chunk[: max(0, start - offset)].count(b"\n")
            raise DataError(
                f"{path}:{line}: more than {limit // 1024} KiB of attributes or "
                f"text in one tag (from byte {start}); such input is refused"
            )
        if opens.size:
            last_open = int(opens[-1])
        parser.Parse(chunk, False)
        offset += len(chunk)
        lines += chunk.count(b"\n")
    parser.Parse(b"", True)


def parse_xml(
    path: Path,
    gold: dict,
    sentence_cls: type,
    instance_cls: type,
    max_token_bytes: int | None = MAX_XML_TOKEN_BYTES,
) -> tuple[list, int]:
    """Parse a framework XML file into ``sentence_cls`` objects holding ``instance_cls`` ones.

    ``max_token_bytes`` bounds the bytes between two ``<`` (:data:`MAX_XML_TOKEN_BYTES`);
    ``None`` lifts the bound (expat's own ``ParseFile``: for trusted files only).

    Returns:
        ``(sentences, n_gold_used)``: the sentences in file order, and how many gold ids
        matched an instance.

    Raises:
        DataError: malformed XML, a token without its attributes, or a tag with more than
            :data:`MAX_XML_TOKEN_BYTES` of attributes and text, naming file and line.
    """
    parser = expat.ParserCreate()
    parser.buffer_text = True
    parser.buffer_size = _XML_CHUNK
    builder = _XmlBuilder(path, parser, gold, sentence_cls, instance_cls)
    parser.StartElementHandler = builder.start
    parser.EndElementHandler = builder.end
    parser.CharacterDataHandler = builder.chars
    try:
        with open_maybe_xz(path, "rb") as fh, _gc_paused():
            if max_token_bytes is None:
                parser.ParseFile(fh)
            else:
                _feed_bounded(parser, fh, path, max_token_bytes)
    except expat.ExpatError as exc:
        raise DataError(
            f"{path}:{exc.lineno}: malformed XML ({expat.ErrorString(exc.code)}, "
            f"column {exc.offset + 1})"
        ) from exc
    except (OSError, EOFError, lzma.LZMAError) as exc:
        raise DataError(f"{path}: cannot read: {exc}") from exc
    return builder.sentences, builder.used_gold
