"""Text files, read one way for every command: a regular file, its size checked from ``stat``
before anything is read (``.xz`` inflated no further than the limit), no NUL anywhere, and
UTF-8 (a byte-order mark allowed) or UTF-16 / UTF-32 with theirs.

The limit is ``text_bytes`` of :data:`workbench.limits.LIMITS`
(``WORKBENCH_LIMIT_TEXT_BYTES``): a 300 MB file of NULs is refused by its size in a moment,
never split into words. The readers of plain text (:func:`workbench.corpora.readers.read_text`,
a word's occurrences, fine-tuning data, key files) and of uploads (:func:`decode_text`) go
through here.

Example::

    lines = read_text_file("sentences.txt").splitlines()
    decode_text(uploaded_bytes, "notes.txt")     # InputError when it is no text
"""

from __future__ import annotations

import codecs
import lzma
import os
from pathlib import Path

from workbench.errors import InputError, WorkbenchError
from workbench.limits import limit, read_limited, regular_problem

#: Byte-order marks of the encodings read besides UTF-8 (longest first: UTF-32-LE's mark
#: begins with UTF-16-LE's).
BOMS = (
    (codecs.BOM_UTF32_LE, "utf-32"),
    (codecs.BOM_UTF32_BE, "utf-32"),
    (codecs.BOM_UTF8, "utf-8-sig"),
    (codecs.BOM_UTF16_LE, "utf-16"),
    (codecs.BOM_UTF16_BE, "utf-16"),
)
_BLOCK = 1 << 20  # bytes inflated at a time


def decode_text(data: bytes, name: str = "upload", error: type[WorkbenchError] = InputError) -> str:
    """Text bytes -> text: UTF-8 (with or without its byte-order mark), or UTF-16 / UTF-32
    with theirs (what Windows editors save as "Unicode"); bytes with a NUL, or in no such
    encoding, raise ``error`` naming ``name``.

    Example::

        decode_text(b"\\xef\\xbb\\xbfA bank.\\n")  # 'A bank.\\n'
    """
    for bom, encoding in BOMS:
        if data.startswith(bom):
            try:
                text = data.decode(encoding)
            except UnicodeDecodeError:
                raise error(
                    f"{name} starts like {encoding.upper()} text but is not: save it as UTF-8 "
                    "plain text"
                ) from None
            if "\x00" in text:
                raise error(f"{name} is not a text file (it holds NUL characters)")
            return text
    if b"\x00" in data:
        raise error(f"{name} is not a text file (it holds NUL bytes): give UTF-8 plain text")
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise error(
            f"{name} is not UTF-8 text (bad byte at position {exc.start}): save it as UTF-8 "
            "plain text"
        ) from None


def _inflate(path: Path, cap: float, name: str, error: type[WorkbenchError]) -> bytes:
    """The content of the regular ``.xz`` file ``path``, refused once it inflates past ``cap``
    (read a block at a time: never more than ``cap`` and a block is held)."""
    blocks, total = [], 0
    try:
        with lzma.open(path, "rb") as fh:
            while block := fh.read(_BLOCK):
                total += len(block)
                if total > cap:
                    raise error(f"{name} inflates past the limit of {int(cap):,} bytes "
                                "(WORKBENCH_LIMIT_TEXT_BYTES sets it)")  # fmt: skip
                blocks.append(block)
    except (lzma.LZMAError, EOFError) as exc:
        raise error(f"{name} is not a valid .xz file ({exc})") from exc
    except OSError as exc:
        raise error(f"{name} cannot be read: {exc.strerror or exc}") from exc
    return b"".join(blocks)


def read_text_file(
    path: str | os.PathLike[str], what: str = "", error: type[WorkbenchError] = InputError
) -> str:
    """The text of the file ``path`` (``.xz`` inflated): a regular file of at most the
    ``text_bytes`` limit (checked from ``stat`` before it is read; inflated ``.xz`` content
    too), with no NUL, in an encoding of :func:`decode_text`.

    Raises:
        error: naming ``what`` (default: the path): missing, not a regular file, past the
            limit, not text.
    """
    name = what or str(path)
    cap = limit("text_bytes")
    problem = regular_problem(path)
    try:
        if problem == "does not exist":
            raise FileNotFoundError(path)
        if problem is not None:
            raise error(f"{name} {problem}")
        if Path(path).suffix == ".xz":
            data = _inflate(Path(path), cap, name, error)
        else:
            data = read_limited(path, cap, name, error)
    except FileNotFoundError:
        raise error(f"{name}: file not found") from None
    return decode_text(data, name, error)
