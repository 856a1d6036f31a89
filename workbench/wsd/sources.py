"""WordNet-derived inputs of a sense index: the propagation graph and LMMS gloss vectors.

* :func:`sense_graph` turns WordNet 3.0 into the arrays :mod:`workbench.wsd.vectors` needs
  (built once per process; docs/benchmarks.md, "WSD").
* :func:`gloss_vectors`: a vector per sense key from its WordNet gloss, LMMS style (Loureiro &
  Jorge 2019), pooled one of two ways. ``definition`` (default): the synset sentence
  ``"<all lemmas of the synset> - <definition>"`` is encoded once and its definition words are
  averaged (:func:`definition_vectors`, stored in the cache dir); the keys of a synset share
  it. ``lemma``: the per-key sentence ``"<lemma> - <all lemmas> - <definition>"``
  (:func:`gloss_sentences`) is encoded and the vector of its first word, the sense's own lemma
  (a multiword lemma is one word, ``"take place"``), is taken. On the default model the
  ``definition`` vectors help on the SemEval-2007 development set and the ``lemma`` ones do not
  (docs/results.md).

Example::

    graph = sense_graph(load_wordnet())
    keys, vecs = gloss_vectors(enc, load_wordnet(), "last4-sum", keys=["bank%1:17:01::"])
"""

from __future__ import annotations

import warnings
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from workbench.encoding.alignment import split_words
from workbench.encoding.cache import encode_cached, store_in_cache
from workbench.encoding.models import default_cache_dir
from workbench.encoding.pooling import combine_layers
from workbench.encoding.rows import Progress, progress_part
from workbench.errors import InputError
from workbench.fileio import atomic_path, sha256_bytes
from workbench.lexicon.wordnet import WordNet, load_wordnet
from workbench.wsd.biencoder import is_biencoder_dir, load_biencoder
from workbench.wsd.config import EncoderInfo, GlossPooling, cache_dtype_tag
from workbench.wsd.vectors import SenseGraph

if TYPE_CHECKING:
    from nltk.corpus.reader.wordnet import Synset

    from workbench.encoding.encoder import Encoder

GLOSS_CHUNK = 16_384  # sentences per cached encoding chunk (lemma pooling)
DEFINITION_CHUNK = 4_096  # synset sentences encoded at a time (definition pooling)
GRAPH_VERSION = 2  # bump when sense_graph_from changes what it stores (2: from the data files)
_GRAPHS: dict[int, tuple[WordNet, SenseGraph]] = {}  # per-process cache of sense_graph


def sense_graph_from(wordnet: WordNet) -> SenseGraph:
    """The :class:`SenseGraph` of ``wordnet`` built now from its data files (one pass,
    :meth:`~workbench.lexicon.wordnet.WordNet.synset_records`; no NLTK); :func:`sense_graph` is
    the stored, per-process form to use."""
    key_synsets: dict[str, str] = {}
    hypernyms: dict[str, list[str]] = {}
    lexnames: dict[str, str] = {}
    for synset in wordnet.synset_records():  # WordNet's data files in one pass, no NLTK
        lexnames[synset.name] = synset.lexname
        parents = synset.hypernyms + synset.instance_hypernyms
        if parents:
            hypernyms[synset.name] = list(parents)
        for key in synset.keys:
            key_synsets[key] = synset.name
    return SenseGraph.build(key_synsets, hypernyms, lexnames)


def sense_graph(wordnet: WordNet) -> SenseGraph:
    """WordNet's sense keys, synsets, hypernym edges (instance hypernyms included) and
    lexicographer files as a :class:`SenseGraph` (cached per process)."""
    cached = _GRAPHS.get(id(wordnet))
    if cached is None or cached[0] is not wordnet:  # WordNet is not hashable: key on identity
        cached = _GRAPHS[id(wordnet)] = (wordnet, _stored_graph(wordnet))
    return cached[1]


def _stored_graph(wordnet: WordNet) -> SenseGraph:
    """The graph from the cache dir (built and stored on first use, loaded after that)."""

    name = f"sense-graph-wordnet-{wordnet.version}-v{GRAPH_VERSION}.npz"
    path = default_cache_dir() / "wsd" / name
    if path.is_file():
        try:
            return SenseGraph.load(path)
        except (OSError, KeyError, ValueError):
            path.unlink(missing_ok=True)
    graph = sense_graph_from(wordnet)
    store_in_cache(lambda: graph.save(path), "sense graph")
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
    encoder: Encoder,
    wordnet: WordNet,
    layers: str,
    keys: Iterable[str] | None = None,
    pooling: GlossPooling = "definition",
    progress: Progress = None,
) -> tuple[tuple[str, ...], np.ndarray]:
    """Gloss vectors of sense keys at a layer spec: ``(keys, (n_keys, dim) float32)``.

    Args:
        encoder: the encoder.
        wordnet: the inventory.
        layers: the layer spec.
        keys: the sense keys (default: every key of WordNet 3.0).
        pooling: ``definition``: mean over the definition's words of the synset sentence
            ``"<lemmas> - <definition>"`` (one vector per synset, shared by its keys; see
            :func:`definition_vectors`); ``definition-examples``: the same over the synset
            text ``"<lemmas> - <definition> ; <example> ; ..."`` (definition and usage
            examples); ``lemma``: the vector of the sense's own lemma, word 0 of its LMMS
            sentence ``"<lemma> - <lemmas> - <definition>"``; ``trained``: what the gloss
            encoder of the WSD bi-encoder whose context encoder ``encoder`` is gives each sense
            (:func:`trained_gloss_vectors`), whatever ``layers`` is.
        progress: passed to the encoder.

    Raises:
        InputError: an unknown pooling, or ``trained`` for an encoder that is no bi-encoder's.
    """
    if pooling == "trained":
        return trained_gloss_vectors(encoder, keys, progress)
    if pooling in ("definition", "definition-examples"):
        graph = sense_graph(wordnet)
        rows = graph.key_row
        wanted = sorted(graph.keys) if keys is None else sorted(set(keys))
        key_syn = np.array([graph.key_synset[rows[k]] for k in wanted], dtype=np.int64)
        used = np.unique(key_syn)
        synsets = [graph.synsets[i] for i in used]
        examples = pooling == "definition-examples"
        stack = definition_vectors(encoder, wordnet, synsets, progress, examples=examples)

        per_synset = combine_layers(stack, tuple(range(stack.shape[1])), layers, stack.shape[1])
        return tuple(wanted), per_synset[np.searchsorted(used, key_syn)]
    if pooling != "lemma":
        raise InputError(
            f"gloss pooling must be definition, definition-examples or lemma, not '{pooling}'"
        )

    names, sentences = gloss_sentences(wordnet, keys)
    parts = []
    for start in range(0, len(sentences), GLOSS_CHUNK):
        chunk = sentences[start : start + GLOSS_CHUNK]
        emb = encode_cached(encoder, chunk, keep=[[0]] * len(chunk), progress=progress)
        parts.append(emb.select(layers))
    dim = int(encoder.dim)
    return names, np.concatenate(parts) if parts else np.zeros((0, dim), np.float32)


def trained_gloss_vectors(
    encoder: Encoder, keys: Iterable[str] | None = None, progress: Progress = None
) -> tuple[tuple[str, ...], np.ndarray]:
    """The gloss vectors of the trained WSD bi-encoder whose context encoder ``encoder`` is
    (:mod:`workbench.wsd.biencoder`: encoded when first needed, then cached) for ``keys``
    (default: every WordNet sense): ``(keys, (n, dim) float32)``.

    Raises:
        InputError: the encoder is not a bi-encoder's context encoder.
    """
    location = encoder.source.location if encoder.source.is_local else None
    if not is_biencoder_dir(location):
        raise InputError(
            f"gloss pooling 'trained' takes the gloss vectors of a WSD bi-encoder trained by "
            f"'workbench finetune wsd', and {encoder.source.location} is not one: pick another "
            "gloss pooling (definition, definition-examples, lemma)"
        )
    bi = load_biencoder(location, str(encoder.device), encoder.dtype_name)  # type: ignore[arg-type]
    wordnet = load_wordnet()
    wanted = sorted(wordnet.senses) if keys is None else sorted(set(keys))
    synset_of = [wordnet.synset(k) for k in wanted]
    synsets = sorted(set(synset_of))
    vectors = bi.gloss_vectors(synsets, wordnet, progress)
    row = {s: i for i, s in enumerate(synsets)}
    return tuple(wanted), vectors[np.array([row[s] for s in synset_of], dtype=np.int64)]


def synset_sentence(synset: Synset, examples: bool = False) -> tuple[list[str], int]:
    """``"<lemma>, <lemma> - <definition>"`` as words, and where the definition starts; with
    ``examples``, the synset's usage examples follow, each after a ``;``."""
    words = _gloss_words(synset)[1:]  # drop the leading "-"
    start = words.index("-") + 1
    if examples:
        for text in synset.examples():
            words += [";", *split_words(text)]
    return words, start if start < len(words) else 0


def _definitions_path(
    info: EncoderInfo, max_length: int, wordnet: WordNet, synsets: Sequence[str], examples: bool
) -> Path:
    # the sentences follow from WordNet's version, the synsets and this code's version: the
    # cache name hashes those, so a warm call never rebuilds 117k sentences
    ident = f"wordnet-{wordnet.version}|v{GRAPH_VERSION}|{max_length}|" + "\n".join(synsets)
    tag = sha256_bytes(ident)[:24]
    kind = "definitions-examples" if examples else "definitions"
    dtype = f"-{dtype_tag}" if (dtype_tag := cache_dtype_tag(info.dtype)) else ""
    name = f"{kind}-{info.fingerprint}{dtype}-{info.pooling}-{tag}.npy"
    return default_cache_dir() / "wsd" / name


def read_stored_vectors(path: Path, n: int, shape: tuple[int, ...]) -> np.ndarray | None:
    """A cached ``(n, *shape)`` float32 array (memory-mapped), or None when it is absent; one that
    cannot be read or has another shape (cut off, damaged) is reported, deleted and rebuilt."""
    if not path.is_file():
        return None
    try:
        array = np.load(path, mmap_mode="r", allow_pickle=False)
        if array.shape != (n, *shape) or array.dtype != np.float32:
            raise ValueError(f"shape {array.shape} {array.dtype}, not {(n, *shape)} float32")
    except (OSError, ValueError, EOFError) as exc:
        message = f"cached vectors {path} cannot be used ({exc}); recomputing them"
        warnings.warn(message, stacklevel=3)
        path.unlink(missing_ok=True)
        return None
    return array


def definition_vectors(
    encoder: Encoder,
    wordnet: WordNet,
    synsets: Sequence[str],
    progress: Progress = None,
    examples: bool = False,
) -> np.ndarray:
    """Per synset, the mean over its definition's words of every hidden state.

    Encodes ``"<lemmas> - <definition>"`` once per synset (with ``examples``: followed by the
    synset's usage examples, ``"; <example>"`` each) and keeps only the words after the lemmas;
    the means ``(n_synsets, n_hidden, dim)`` float32 are stored in the cache dir (any layer
    spec is then array work: a layer combination commutes with the mean over words). Once the
    vectors of every WordNet synset are stored, any subset is read from them.
    """
    info = EncoderInfo.of(encoder)
    path = _definitions_path(info, encoder.max_length, wordnet, synsets, examples)
    shape = (info.n_hidden, info.dim)
    stored = read_stored_vectors(path, len(synsets), shape)
    if stored is not None:
        return stored
    every = sense_graph(wordnet).synsets  # sorted, as gloss_vectors asks for them
    full_path = _definitions_path(info, encoder.max_length, wordnet, every, examples)
    full = read_stored_vectors(full_path, len(every), shape)
    if full is not None:
        rows = np.searchsorted(every, synsets)
        if len(rows) and rows.max() < len(every) and list(np.asarray(every)[rows]) == list(synsets):
            return np.asarray(full[rows])
    built = [synset_sentence(wordnet.reader.synset(name), examples) for name in synsets]
    sentences = [w for w, _ in built]
    keep = [list(range(start, len(w))) for w, start in built]
    out = np.zeros((len(sentences), *shape), dtype=np.float32)
    for start in range(0, len(sentences), DEFINITION_CHUNK):
        stop = min(start + DEFINITION_CHUNK, len(sentences))
        step = progress_part(progress, start / len(sentences), stop / len(sentences))
        emb = encoder.encode(sentences[start:stop], keep=keep[start:stop], progress=step)
        counts = np.bincount(emb.sentence_index, minlength=stop - start).astype(np.float32)
        flat = np.asarray(emb.vectors, dtype=np.float32).reshape(len(emb.words), -1)
        from scipy import sparse  # heavy: only where gloss vectors are combined

        member = sparse.csr_matrix(
            (np.ones(len(flat), np.float32), (emb.sentence_index, np.arange(len(flat)))),
            shape=(stop - start, len(flat)),
        )
        sums = np.asarray(member @ flat, dtype=np.float32)
        out[start:stop] = (sums / np.maximum(counts, 1)[:, None]).reshape(-1, *out.shape[1:])
    store_in_cache(lambda: _save_npy(path, out), "definition vectors")
    return out


def _save_npy(path: Path, array: np.ndarray) -> None:
    with atomic_path(path, suffix=".npy") as tmp:
        np.save(tmp, array)
