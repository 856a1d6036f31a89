"""WordNet's own example sentences (and, optionally, glosses) as a sense-tagged corpus.

Each usage example of a synset becomes a :class:`~workbench.corpora.readers.Sentence` whose one
instance is the synset lemma found in it (the lemma itself or an inflected form: NLTK's morphy,
which knows irregular forms such as *took* -> *take*, plus simple suffix rules). A multiword
lemma found as consecutive words becomes one word (``"took place"``), as in the framework's
XML. Examples where no lemma of the synset can be found are skipped and counted. The corpus is
built once per configuration and kept in the cache dir (:func:`example_corpus`).

Glosses can be added as ``"<lemma> : <gloss>"`` sentences whose instance is the lemma (first
lemma of each synset, or every lemma: one sentence per sense key, full WordNet coverage).

:func:`with_examples` appends the examples to another training corpus (``semcor+examples``, the
name :func:`split_examples` reads): real centroids for senses the corpus lacks, where propagation
would otherwise guess.

Example::

    >>> corpus = example_corpus(ExampleConfig(pos=("NOUN",)))
    >>> sentence, instance = next(corpus.instances())
    >>> sentence.words[instance.index], instance.keys
"""

from __future__ import annotations

import warnings
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from workbench.corpora.readers import Corpus, Instance, Sentence
from workbench.corpora.store import read_corpus, save_corpus
from workbench.encoding.alignment import split_words
from workbench.encoding.models import default_cache_dir
from workbench.errors import CacheError, InputError, OutputError
from workbench.fileio import sha256_bytes, sha256_json
from workbench.lexicon.wordnet import POS_TAGS, UPOS_TO_WN, WN_TO_UPOS, WordNet, load_wordnet

if TYPE_CHECKING:
    from nltk.corpus.reader.wordnet import Synset

#: A training corpus name ending in this stands for that corpus followed by WordNet's usage
#: examples (:func:`with_examples`): ``semcor+examples``.
EXAMPLES_SUFFIX = "+examples"

_SUFFIXES = (
    ("'s", ""), ("’s", ""), ("ies", "y"), ("ied", "y"), ("es", ""), ("es", "e"), ("s", ""),
    ("ed", ""), ("ed", "e"), ("d", ""), ("ing", ""), ("ing", "e"), ("er", ""), ("er", "e"),
    ("est", ""), ("est", "e"), ("ier", "y"), ("iest", "y"),
)  # fmt: skip


@dataclass(frozen=True)
class ExampleConfig:
    """What goes into the WordNet example corpus.

    Attributes:
        pos: universal POS tags of the synsets to use.
        examples: include the usage examples (target located by lemma matching).
        glosses: ``"none"``; ``"first"``: one gloss sentence per synset, for its first lemma;
            ``"all"``: one per lemma (every sense key gets a sentence).
        limit: stop after this many sentences (None: all); for quick looks and tests.
    """

    pos: tuple[str, ...] = POS_TAGS  # synset POS to include (default: all four)
    examples: bool = True  # usage examples of each synset
    glosses: Literal["none", "first", "all"] = "none"  # gloss sentences
    limit: int | None = None  # at most this many sentences


@dataclass
class ExampleStats:
    """Counters filled while iterating (``skipped``: examples without a findable lemma)."""

    examples: int = 0
    matched: int = 0
    skipped: int = 0
    glosses: int = 0
    skipped_ids: list[str] = field(default_factory=list)


def word_forms(token: str, wn_pos: str, wordnet: WordNet) -> set[str]:
    """Lemma candidates of a lowercase token: itself, morphy's answer, suffix stripping."""
    forms = {token}
    for suffix, repl in _SUFFIXES:
        if token.endswith(suffix) and len(token) > len(suffix) + 1:
            stem = token[: -len(suffix)]
            forms.add(stem + repl)
            if len(stem) > 2 and stem[-1] == stem[-2]:  # running -> run, stopped -> stop
                forms.add(stem[:-1])
    found = wordnet.reader.morphy(token, "a" if wn_pos == "s" else wn_pos)
    if found:
        forms.add(found.lower())
    return forms


def locate(tokens: list[str], lemma: str, wn_pos: str, wordnet: WordNet) -> int | None:
    """Position of the first occurrence of a (multiword, ``_``-joined) lemma, or None."""
    parts = lemma.lower().split("_")
    lower = [t.lower() for t in tokens]
    for i in range(len(lower) - len(parts) + 1):
        if all(
            lower[i + j] == part or part in word_forms(lower[i + j], wn_pos, wordnet)
            for j, part in enumerate(parts)
        ):
            return i
    return None


def _sentence(sid: str, tokens: list[str], at: int, size: int, lemma, upos: str) -> Sentence:
    words = [*tokens[:at], " ".join(tokens[at : at + size]), *tokens[at + size :]]
    lemmas = [w.lower() for w in words]
    lemmas[at] = lemma.name().lower()
    pos = ["X"] * len(words)
    pos[at] = upos
    instance = Instance(f"{sid}.t0", at, lemmas[at], upos, (lemma.key(),))
    return Sentence(sid, tuple(words), tuple(lemmas), tuple(pos), (instance,))


def synset_example_sentences(
    synset: Synset, wordnet: WordNet, stats: ExampleStats | None = None
) -> Iterator[Sentence]:
    """One sense-tagged sentence per usage example of ``synset`` in which one of its lemmas is
    found (the first that is); examples where none is found are counted in ``stats``."""
    stats = stats if stats is not None else ExampleStats()
    upos = WN_TO_UPOS[synset.pos()]
    for number, text in enumerate(synset.examples()):
        stats.examples += 1
        sid = f"wn.{synset.name()}.ex{number}"
        tokens = split_words(text)
        for lemma in synset.lemmas():
            at = locate(tokens, lemma.name(), synset.pos(), wordnet)
            if at is not None:
                stats.matched += 1
                yield _sentence(sid, tokens, at, len(lemma.name().split("_")), lemma, upos)
                break
        else:
            stats.skipped += 1
            stats.skipped_ids.append(sid)


def _gloss_sentences(synset, mode: str) -> Iterator[Sentence]:
    upos = WN_TO_UPOS[synset.pos()]
    lemmas = synset.lemmas() if mode == "all" else synset.lemmas()[:1]
    gloss = split_words(synset.definition())
    for lemma in lemmas:
        surface = lemma.name().replace("_", " ")
        sid = f"wn.{synset.name()}.gloss.{lemma.name()}"
        yield _sentence(sid, [surface, ":", *gloss], 0, 1, lemma, upos)


def iter_examples(
    config: ExampleConfig = ExampleConfig(),
    wordnet: WordNet | None = None,
    stats: ExampleStats | None = None,
) -> Iterator[Sentence]:
    """Yield the sense-tagged sentences, synset by synset (WordNet order per POS)."""
    wordnet = wordnet or load_wordnet()
    stats = stats if stats is not None else ExampleStats()
    emitted = 0
    for upos in config.pos:
        for synset in wordnet.reader.all_synsets(UPOS_TO_WN[upos]):
            produced = []
            if config.examples:
                produced += list(synset_example_sentences(synset, wordnet, stats))
            if config.glosses != "none":
                produced += list(_gloss_sentences(synset, config.glosses))
                stats.glosses += len(produced) - sum(".ex" in s.id for s in produced)
            for sentence in produced:
                if config.limit is not None and emitted >= config.limit:
                    return
                emitted += 1
                yield sentence


def example_corpus(
    config: ExampleConfig = ExampleConfig(), wordnet: WordNet | None = None, cache: bool = True
) -> Corpus:
    """The WordNet example corpus as a :class:`Corpus` (``n_skipped``: unmatched examples).

    Built once and kept in the cache dir (``<cache>/corpora/``, :func:`saved_examples_path`),
    read back after that (docs/benchmarks.md, "Data loading"); ``cache=False`` builds it every
    time and keeps nothing. A saved copy that cannot be read is reported, deleted and rebuilt; a
    cache dir that cannot be written leaves the corpus built, not saved.
    """
    wordnet = wordnet or load_wordnet()
    path = saved_examples_path(config, wordnet)
    if cache and path.is_file():
        try:
            return read_corpus(path)
        except CacheError as exc:
            warnings.warn(f"{exc}; rebuilding it", stacklevel=2)
            path.unlink(missing_ok=True)
    stats = ExampleStats()
    sentences = tuple(iter_examples(config, wordnet, stats))
    digest = sha256_bytes(f"wordnet-3.0-examples:{config!r}")
    corpus = Corpus("wordnet-examples", sentences, (), digest, n_skipped=stats.skipped)
    if cache:
        try:
            save_corpus(corpus, path)
        except OutputError as exc:
            warnings.warn(f"WordNet's examples are not kept for next time: {exc}", stacklevel=2)
        else:
            _remove_older_copies(path)
    return corpus


def saved_examples_path(config: ExampleConfig, wordnet: WordNet) -> Path:
    """Where :func:`example_corpus` keeps the corpus of ``config``:
    ``<cache>/corpora/wordnet-<version>-examples-<config hash>-<source hash>.json.gz``, the
    source hash that of this module (a change to how examples are located makes a new file, and
    the copy made by the older code is then removed)."""
    configured = sha256_json([wordnet.version, repr(config)])[:16]
    source = sha256_bytes(Path(__file__).read_bytes())[:12]
    name = f"wordnet-{wordnet.version}-examples-{configured}-{source}.json.gz"
    return default_cache_dir() / "corpora" / name


def _remove_older_copies(path: Path) -> None:
    """Delete the copies of ``path``'s configuration saved by other versions of this module."""
    stem = path.name.rsplit("-", 1)[0]
    for other in path.parent.glob(f"{stem}-*.json.gz"):
        if other != path:
            other.unlink(missing_ok=True)


def split_examples(name: str) -> tuple[str, bool]:
    """``(corpus name, whether WordNet's examples are added)`` of a training corpus name:
    ``"semcor+examples"`` -> ``("semcor", True)``, ``"semcor"`` -> ``("semcor", False)``; a
    name that is an existing path is that file, whatever it ends with."""
    if (
        name.endswith(EXAMPLES_SUFFIX)
        and len(name) > len(EXAMPLES_SUFFIX)
        and not Path(name).exists()
    ):
        return name.removesuffix(EXAMPLES_SUFFIX), True
    return name, False


def with_examples(corpus: Corpus, examples: Corpus | None = None) -> Corpus:
    """``corpus`` followed by WordNet's usage examples as one training corpus named
    ``<name>+examples``, hashed over both (cache keys and reports tell it from ``corpus``).

    Args:
        corpus: a sense-tagged corpus (SemCor, a ``*.data.xml``).
        examples: the examples to add (default: :func:`example_corpus` with every POS, 47,184
            sentences).

    Raises:
        InputError: a sentence id of ``examples`` is also one of ``corpus``'s (the examples'
            ids start with ``wn.``).
    """
    examples = examples if examples is not None else example_corpus()
    ids = {s.id for s in corpus.sentences}
    clash = next((s.id for s in examples.sentences if s.id in ids), None)
    if clash is not None:
        raise InputError(
            f"corpus '{corpus.name}' already has a sentence with id {clash!r}, which is the id of "
            "a WordNet example: it cannot take WordNet's examples"
        )
    return Corpus(
        corpus.name + EXAMPLES_SUFFIX,
        corpus.sentences + examples.sentences,
        corpus.source,
        sha256_json([corpus.sha256, examples.sha256]),
        corpus.n_unknown_gold,
        corpus.n_skipped + examples.n_skipped,
    )
