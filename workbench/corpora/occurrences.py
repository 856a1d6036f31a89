"""A lemma's occurrences in context: gather them, encode them (cached), tabulate them.

Sources: SemCor or any framework corpus (gold sense keys), WordNet's usage examples (the sense
whose example it is), the project's demo texts in ``data/demo/`` or a user's text file. A text
file is UTF-8, one sentence per line, either plain (every form of the lemma counts, found with
WordNet's morphology) or ``label<TAB>sentence`` with the target in ``[brackets]``
(see ``data/README.md``)::

    occs = lemma_occurrences("bank", "demo")         # or "semcor", "wordnet", a file, an upload
    ov = encode_occurrences(Encoder(), occs)         # one row per occurrence
    ov.vectors.shape                                 # (n_occurrences, n_layers + 1, dim)
    occurrence_table(occs, sense_glosses(load_wordnet(), [o.label for o in occs]))
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from workbench.corpora import text as text_files
from workbench.corpora.datasets import DATASETS, load_dataset
from workbench.corpora.readers import Corpus
from workbench.corpora.tagging import tag_words
from workbench.encoding.alignment import split_words
from workbench.encoding.cache import encode_cached
from workbench.encoding.embeddings import LayerwiseEmbeddings
from workbench.encoding.rows import Progress
from workbench.errors import InputError
from workbench.fileio import named_path
from workbench.lexicon.morphology import base_forms
from workbench.lexicon.wordnet import POS_TAGS, WordNet, load_wordnet

if TYPE_CHECKING:
    import pandas as pd

    from workbench.encoding.encoder import Encoder


#: The demo texts shipped in the repository (``data/demo/<word>.tsv``).
DEMO_DIR = Path(__file__).resolve().parents[2] / "data" / "demo"
_MARKED = re.compile(r"\[([^\[\]]+)\]")


@dataclass(frozen=True)
class Occurrence:
    """One occurrence of a word in a sentence.

    Attributes:
        words: the sentence as words.
        index: position of the target word in ``words``.
        label: gold sense key or user label; ``""`` when unknown.
        source: where it comes from (instance id, synset name, ``file:line``).
    """

    words: tuple[str, ...]
    index: int
    label: str = ""
    source: str = ""

    @property
    def word(self) -> str:
        return self.words[self.index]

    def marked(self, left: str = "[", right: str = "]") -> str:
        """The sentence as text with the target word marked."""
        return " ".join(
            f"{left}{w}{right}" if i == self.index else w for i, w in enumerate(self.words)
        )


@dataclass(frozen=True)
class OccurrenceVectors:
    """Occurrences and their layerwise vectors, row ``i`` of ``emb`` = ``occurrences[i]``.

    Attributes:
        occurrences: the occurrences.
        emb: :class:`~workbench.encoding.embeddings.LayerwiseEmbeddings`, ``vectors`` of shape
            ``(n_occurrences, n_kept_layers, dim)``.
    """

    occurrences: tuple[Occurrence, ...]
    emb: LayerwiseEmbeddings

    @property
    def vectors(self) -> np.ndarray:
        return self.emb.vectors

    @property
    def labels(self) -> list[str]:
        return [o.label for o in self.occurrences]


# --------------------------------------------------------------------------- matching words


def lemma_matcher(lemma: str) -> Callable[[str], bool]:
    """A predicate: is a word a form of ``lemma`` (case-insensitive, WordNet morphology)?"""
    lemma = _check_lemma(lemma)
    target = lemma.lower().replace(" ", "_")
    return lambda word: word.lower().replace(" ", "_") == target or target in base_forms(word)


def _check_lemma(lemma: str) -> str:
    lemma = (lemma or "").strip()
    if not lemma:
        raise InputError("no word given: type the word whose occurrences you want to see")
    return lemma


# --------------------------------------------------------------------------- text sources


def decode_text(data: bytes, name: str = "upload") -> list[str]:
    """Text bytes -> lines, by the one text reader
    (:func:`workbench.corpora.text.decode_text`: UTF-8, or UTF-16 / UTF-32 with their
    byte-order mark; a NUL anywhere, or another encoding, raises :class:`InputError`)."""
    return text_files.decode_text(data, name, InputError).splitlines()


def _marked_line(text: str, where: str) -> tuple[tuple[str, ...], int]:
    """Words of a line with one ``[target]``, and the target's position."""
    m = _MARKED.search(text)
    if m is None:
        raise InputError(f"{where}: mark one word in [brackets]")
    target = split_words(m.group(1))
    if len(target) != 1:
        raise InputError(f"{where}: mark exactly one word in [brackets], got {m.group(0)!r}")
    before, after = split_words(text[: m.start()]), split_words(text[m.end() :])
    return tuple(before + target + after), len(before)


def from_lines(lines: Iterable[str], lemma: str, source: str = "text") -> list[Occurrence]:
    """Occurrences of ``lemma`` in text lines (plain, or ``label<TAB>sentence``, ``[target]``).

    A marked line gives its one marked word (whatever it is); a plain line gives every word
    that is a form of ``lemma``. Blank lines and lines starting with ``#`` are skipped.
    """
    matches = lemma_matcher(lemma)
    found: list[Occurrence] = []
    for number, raw in enumerate(lines, start=1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        label, _, text = line.rpartition("\t")
        where = f"{source}:{number}"
        if _MARKED.search(text):
            words, index = _marked_line(text, where)
            found.append(Occurrence(words, index, label.strip(), where))
            continue
        words = tuple(split_words(text))
        for i, w in enumerate(words):
            if matches(w):
                found.append(Occurrence(words, i, label.strip(), where))
    return found


def with_pos(found: Sequence[Occurrence], pos: str, wordnet: WordNet) -> list[Occurrence]:
    """The occurrences of plain text whose target word is tagged ``pos`` (``NOUN``, ``VERB``,
    ``ADJ`` or ``ADV``) by :func:`workbench.corpora.tagging.tag_words` in its sentence; each
    sentence is tagged once.

    Example::

        with_pos(from_lines(["I bank at the bank ."], "bank"), "NOUN", load_wordnet())
        # [Occurrence(words=('I', 'bank', 'at', 'the', 'bank', '.'), index=4, ...)]
    """
    if pos not in POS_TAGS:
        raise InputError(f"unknown POS {pos!r}: one of {', '.join(POS_TAGS)}")
    tags: dict[tuple[str, ...], tuple[str, ...]] = {}
    kept = []
    for o in found:
        if o.words not in tags:
            tags[o.words] = tag_words(o.words, wordnet)
        if tags[o.words][o.index] == pos:
            kept.append(o)
    return kept


def demo_words(directory: Path | None = None) -> list[str]:
    """The words that have a demo text (``data/demo/<word>.tsv``), sorted."""
    directory = directory or DEMO_DIR
    return sorted(p.stem for p in directory.glob("*.tsv")) if directory.is_dir() else []


def read_demo(word: str, directory: Path | None = None) -> list[str]:
    """The lines of the demo text of ``word``: one of :func:`demo_words` (the word is looked
    up in the folder's listing, never joined to a path as given), its file inside the folder
    with every link followed (:func:`workbench.fileio.named_path`).

    Raises:
        InputError: no demo text of that name (``../x`` and ``/tmp/x`` included), or one whose
            file leads outside the folder.
    """
    folder = directory or DEMO_DIR
    if word not in demo_words(folder):
        raise InputError(f"no demo text for {word!r}; choose one of {demo_words(folder)}")
    path = named_path(folder, f"{word}.tsv", "demo text")
    return path.read_text(encoding="utf-8-sig").splitlines()


def demo_sentences(directory: Path | None = None) -> list[list[str]]:
    """Every sentence of every demo text, as words (brackets removed), file by file."""
    found: list[list[str]] = []
    for word in demo_words(directory):
        found.extend(list(o.words) for o in from_lines(read_demo(word, directory), word))
    return found


# --------------------------------------------------------------------------- annotated sources


def from_corpus(
    corpus: Iterable,
    lemma: str,
    pos: str | None = None,
    limit: int | None = 300,
    random_state: int = 0,
) -> list[Occurrence]:
    """Sense-annotated occurrences of ``lemma`` in a :class:`~workbench.corpora.readers.Corpus`.

    Args:
        corpus: a corpus (iterable of sentences with ``instances``), e.g. SemCor.
        lemma: the WordNet lemma (``"bank"``, ``"take_place"``), case-insensitive.
        pos: restrict to one universal POS (``NOUN``...); None = all.
        limit: keep at most this many, a random sample in corpus order; None = all.
        random_state: seed of the sample.

    Raises:
        InputError: the lemma has no annotated occurrence in the corpus.
    """
    lemma = _check_lemma(lemma).lower().replace(" ", "_")
    found = [
        Occurrence(s.words, inst.index, inst.keys[0] if inst.keys else "", inst.id)
        for s in corpus
        for inst in s.instances
        if inst.lemma == lemma and (pos is None or inst.pos == pos)
    ]
    if not found:
        what = f"{lemma!r}" + (f" as {pos}" if pos else "")
        raise InputError(f"the corpus has no annotated occurrence of {what}; try another word")
    return _sample(found, limit, random_state)


#: Occurrence sources by name (besides a framework dataset's name, ``"upload"`` and a text file's
#: path): see :func:`lemma_occurrences`.
SOURCES: tuple[str, ...] = ("semcor", "wordnet", "demo")


def lemma_occurrences(
    lemma: str,
    source: str = "semcor",
    pos: str | None = None,
    limit: int | None = 200,
    random_state: int = 0,
    data_dir: str | Path | None = None,
    wordnet: WordNet | None = None,
    corpus: Corpus | None = None,
    upload: bytes | None = None,
    upload_name: str = "upload",
) -> list[Occurrence]:
    """A lemma's occurrences, with their gold senses where the source has them: what the
    Senses page, ``workbench senses`` and the fine-tuning comparison each picture.

    Args:
        lemma: the WordNet lemma (``"bank"``).
        source: ``"semcor"`` or any framework dataset name (gold sense keys; ``corpus``: that
            dataset already loaded), ``"wordnet"`` (usage examples, labelled with the sense
            whose example it is), ``"demo"`` (the project's demo text of the word),
            ``"upload"`` (the text file ``upload``, its bytes, named ``upload_name``) or the
            path of a text file (:func:`from_lines`; any of the encodings of :func:`decode_text`).
        pos: one universal POS (``NOUN``...); None = all. Of the dataset's or WordNet's
            annotation; in an upload or a text file, the tagger's (:func:`with_pos`); a demo
            text is taken whole.
        limit: at most this many, a seeded sample in the source's order; None = all.
        random_state: the sample's seed.
        data_dir: the WSD data directory (default: ``WORKBENCH_DATA`` ...).
        wordnet: a loaded WordNet (default: :func:`workbench.lexicon.wordnet.load_wordnet`).

    Raises:
        InputError: the lemma does not occur (with that POS); DataError: the corpus is missing.

    Example::

        lemma_occurrences("bank", "semcor", pos="NOUN", limit=200)   # 200 of SemCor's 'bank'
        lemma_occurrences("bass", "demo", limit=None)                # the whole demo text
    """
    if source.lower() in {d.lower() for d in DATASETS}:
        dataset = corpus if corpus is not None else load_dataset(source, data_dir)
        return from_corpus(dataset, lemma, pos, limit, random_state)
    if source == "wordnet":
        return _sample(from_wordnet(wordnet or load_wordnet(), lemma, pos), limit, random_state)
    if source == "demo":
        lines, name = read_demo(lemma), f"{lemma}.tsv"
    elif source == "upload":
        lines, name = decode_text(upload or b"", upload_name), upload_name
    else:
        path = Path(source).expanduser()
        if not path.is_file():
            raise InputError(
                f"unknown occurrence source {source!r}: use {', '.join(SOURCES)}, a framework "
                "dataset name or the path of a text file"
            )
        lines, name = text_files.read_text_file(path, error=InputError).splitlines(), path.name
    found = from_lines(lines, lemma, name)
    if not found:
        raise InputError(
            f"{name} has no occurrence of {lemma!r}: check the word, or mark the target in "
            "[brackets]"
        )
    if pos is not None and source != "demo":
        found = with_pos(found, pos, wordnet or load_wordnet())
        if not found:
            raise InputError(
                f"{name} has no occurrence of {lemma!r} tagged {pos}: choose another POS or any"
            )
    return _sample(found, limit, random_state)


def _sample(found: list[Occurrence], limit: int | None, random_state: int) -> list[Occurrence]:
    """At most ``limit`` of ``found``: a seeded sample kept in order (all when None)."""
    if limit is not None and len(found) > limit:
        rng = np.random.default_rng(random_state)
        found = [found[i] for i in sorted(rng.choice(len(found), size=limit, replace=False))]
    return found


def from_wordnet(wordnet: WordNet, lemma: str, pos: str | None = None) -> list[Occurrence]:
    """Occurrences of ``lemma`` in WordNet's usage examples, labelled with the sense key.

    Examples in which no form of the lemma occurs (synonyms' examples) are skipped.

    Raises:
        InputError: no example of any sense contains the lemma.
    """
    lemma = _check_lemma(lemma).lower().replace(" ", "_")
    matches = lemma_matcher(lemma)
    found: list[Occurrence] = []
    for p in [pos] if pos else POS_TAGS:
        for key in wordnet.candidates(lemma, p):
            synset = wordnet.synset(key)
            for example in wordnet.examples(synset):
                words = tuple(split_words(example))
                hits = [i for i, w in enumerate(words) if matches(w)]
                if hits:
                    found.append(Occurrence(words, hits[0], key, synset))
    if not found:
        raise InputError(f"WordNet has no usage example containing {lemma!r}; try another source")
    return found


# --------------------------------------------------------------------------- vectors and tables


def encode_occurrences(
    encoder: Encoder,
    occurrences: Sequence[Occurrence],
    layers: Sequence[int] | None = None,
    progress: Progress = None,
) -> OccurrenceVectors:
    """Encode the target word of every occurrence through the on-disk cache.

    Args:
        encoder: a :class:`~workbench.encoding.encoder.Encoder`.
        occurrences: the occurrences (at least one).
        layers: hidden-state indices to keep (default all).
        progress: passed to the encoder (a callable taking the fraction done).

    Returns:
        :class:`OccurrenceVectors`; ``vectors`` is ``(n_occurrences, n_layers, dim)``.
    """

    if not occurrences:
        raise InputError("no occurrence to encode: the word does not occur in the text")
    emb = encode_cached(
        encoder,
        [list(o.words) for o in occurrences],
        layers=layers,
        keep=[[o.index] for o in occurrences],
        progress=progress,
    )
    return OccurrenceVectors(tuple(occurrences), emb)


def sense_glosses(wordnet: WordNet, labels: Iterable[str]) -> dict[str, str]:
    """Label -> WordNet gloss for every label that is a sense key (others map to ``""``)."""
    out = {}
    for label in dict.fromkeys(labels):
        out[label] = wordnet.gloss(wordnet.synset(label)) if wordnet.has_key(label) else ""
    return out


def sense_names(glosses: Mapping[str, str], width: int = 40) -> dict[str, str]:
    """Legend text per label: ``"bank%1:17:01:: sloping land (especially…"``."""
    names = {}
    for label, gloss in glosses.items():
        short = gloss if len(gloss) <= width else gloss[: width - 1] + "…"
        names[label] = f"{label or '(no label)'} {short}".strip()
    return names


def occurrence_table(
    occurrences: Sequence[Occurrence],
    glosses: Mapping[str, str] | None = None,
    coords: np.ndarray | None = None,
    predicted: Sequence[str] | None = None,
) -> pd.DataFrame:
    """A ``pandas.DataFrame``, one row per occurrence (for display and CSV export).

    Columns: ``sentence`` (target in brackets), ``word``, ``label``, ``gloss``, ``source``,
    then ``predicted`` if given and ``x``, ``y`` (, ``z``) if ``coords`` ``(n, 2|3)`` is given.
    """
    import pandas as pd

    glosses = glosses or {}
    table = pd.DataFrame(
        {
            "sentence": [o.marked() for o in occurrences],
            "word": [o.word for o in occurrences],
            "label": [o.label for o in occurrences],
            "gloss": [glosses.get(o.label, "") for o in occurrences],
            "source": [o.source for o in occurrences],
        }
    )
    if predicted is not None:
        table["predicted"] = list(predicted)
    if coords is not None:
        coords = np.asarray(coords)
        if coords.shape[0] != len(occurrences):
            raise InputError(f"{coords.shape[0]} coordinates for {len(occurrences)} occurrences")
        for axis, column in zip("xyz", coords.T, strict=False):
            table[axis] = column
    return table
