"""WordNet-derived inputs of a sense index: the propagation graph and LMMS gloss vectors.

* :func:`sense_graph` turns WordNet 3.0 into the arrays :mod:`workbench.sense_vectors` needs
  (built once per process, about 5 s).
* :func:`gloss_sentences` writes, per sense key, LMMS's gloss sentence
  ``"<lemma> - <all lemmas of the synset> - <gloss>"`` (Loureiro & Jorge 2019), and
  :func:`gloss_vectors` encodes them (through the on-disk cache, in fixed chunks) and takes
  the vector of the sense's own lemma, the sentence's first word (a multiword lemma is one
  word, ``"take place"``).
* :func:`wordnet_example_sentences` is the WordNet example corpus restricted to some lemmas.

Example::

    graph = sense_graph(load_wordnet())
    keys, vecs = gloss_vectors(enc, load_wordnet(), "last4-sum", keys=["bank%1:17:01::"])
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import numpy as np

from workbench.alignment import split_words
from workbench.corpora import Sentence
from workbench.sense_vectors import SenseGraph
from workbench.wordnet import UPOS_TO_WN, WordNet

GLOSS_CHUNK = 16_384  # sentences per cached encoding chunk
GRAPH_VERSION = 1  # bump when _graph changes what it stores
_GRAPHS: dict[int, tuple[WordNet, SenseGraph]] = {}  # per-process cache of sense_graph


def _graph(wordnet: WordNet) -> SenseGraph:
    key_synsets: dict[str, str] = {}
    hypernyms: dict[str, list[str]] = {}
    lexnames: dict[str, str] = {}
    for synset in wordnet.reader.all_synsets():
        name = synset.name()
        lexnames[name] = synset.lexname()
        parents = synset.hypernyms() + synset.instance_hypernyms()
        if parents:
            hypernyms[name] = [p.name() for p in parents]
        for lemma in synset.lemmas():
            key_synsets[lemma.key()] = name
    return SenseGraph.build(key_synsets, hypernyms, lexnames)


def sense_graph(wordnet: WordNet) -> SenseGraph:
    """WordNet's sense keys, synsets, hypernym edges (instance hypernyms included) and
    lexicographer files as a :class:`SenseGraph` (cached per process)."""
    cached = _GRAPHS.get(id(wordnet))
    if cached is None or cached[0] is not wordnet:  # WordNet is not hashable: key on identity
        cached = _GRAPHS[id(wordnet)] = (wordnet, _stored_graph(wordnet))
    return cached[1]


def _stored_graph(wordnet: WordNet) -> SenseGraph:
    """The graph from the cache dir (built and stored on first use: 5-10 s -> 0.5 s)."""
    from workbench.models import default_cache_dir

    name = f"sense-graph-wordnet-{wordnet.version}-v{GRAPH_VERSION}.npz"
    path = default_cache_dir() / "wsd" / name
    if path.is_file():
        try:
            return SenseGraph.load(path)
        except (OSError, KeyError, ValueError):
            path.unlink(missing_ok=True)
    graph = _graph(wordnet)
    graph.save(path)
    return graph


def _gloss_words(synset) -> list[str]:
    names = [lemma.name().replace("_", " ") for lemma in synset.lemmas()]
    listed: list[str] = []
    for i, name in enumerate(names):
        listed += ([","] if i else []) + [name]
    return ["-", *listed, "-", *split_words(synset.definition())]


def gloss_sentences(
    wordnet: WordNet, keys: Iterable[str] | None = None
) -> tuple[tuple[str, ...], list[list[str]]]:
    """LMMS gloss sentences, one per sense key, sorted by key.

    Args:
        wordnet: the inventory.
        keys: the sense keys wanted (default: all 206,941 of WordNet 3.0).

    Returns:
        ``(keys, sentences)``; each sentence is a word list whose word 0 is the sense's lemma
        (``["bank", "-", "bank", ",", "cant", ",", "camber", "-", "a", "slope", ...]``).
    """
    out: dict[str, list[str]] = {}
    if keys is None:
        for synset in wordnet.reader.all_synsets():
            tail = _gloss_words(synset)
            for lemma in synset.lemmas():
                out[lemma.key()] = [lemma.name().replace("_", " "), *tail]
    else:
        for key in keys:
            synset = wordnet.synset_obj(key)
            lemma = next(x for x in synset.lemmas() if x.key() == key)
            out[key] = [lemma.name().replace("_", " "), *_gloss_words(synset)]
    order = tuple(sorted(out))
    return order, [out[k] for k in order]


def gloss_vectors(
    encoder,
    wordnet: WordNet,
    layers: str,
    keys: Iterable[str] | None = None,
    progress=None,
) -> tuple[tuple[str, ...], np.ndarray]:
    """Gloss vectors of sense keys at a layer spec: ``(keys, (n_keys, dim) float32)``.

    Encodes all hidden states of each gloss sentence's first word through
    :func:`workbench.cache.encode_cached`, in chunks of :data:`GLOSS_CHUNK` sentences so that
    an interrupted run keeps the finished chunks; every later layer spec is array work.
    """
    from workbench.cache import encode_cached

    names, sentences = gloss_sentences(wordnet, keys)
    parts = []
    for start in range(0, len(sentences), GLOSS_CHUNK):
        chunk = sentences[start : start + GLOSS_CHUNK]
        emb = encode_cached(encoder, chunk, keep=[[0]] * len(chunk), progress=progress)
        parts.append(emb.select(layers))
    dim = int(encoder.dim)
    return names, np.concatenate(parts) if parts else np.zeros((0, dim), np.float32)


def lemma_synsets(wordnet: WordNet, lemmas: Sequence[tuple[str, str]]) -> list:
    """The NLTK synsets of the candidate senses of ``(lemma, POS)`` pairs, without repeats."""
    seen: dict[str, object] = {}
    for lemma, pos in lemmas:
        for key in wordnet.candidates(lemma, pos) if pos in UPOS_TO_WN else ():
            synset = wordnet.synset_obj(key)
            seen.setdefault(synset.name(), synset)
    return list(seen.values())


def wordnet_example_sentences(
    wordnet: WordNet, lemmas: Sequence[tuple[str, str]] | None = None
) -> tuple[Sentence, ...]:
    """WordNet's usage examples as sense-tagged sentences (:mod:`workbench.wordnet_examples`),
    all of them or only those of the synsets of some ``(lemma, POS)`` pairs."""
    from workbench import wordnet_examples as wx

    if lemmas is None:
        return wx.example_corpus(wordnet=wordnet).sentences
    stats = wx.ExampleStats()
    out: list[Sentence] = []
    for synset in lemma_synsets(wordnet, lemmas):
        out += list(wx._example_sentences(synset, wordnet, stats))  # adapter: no public API
    return tuple(out)
