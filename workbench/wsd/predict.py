"""Word sense disambiguation of corpus instances with a :class:`~workbench.wsd.index.SenseIndex`.

The instances of a corpus are encoded once, all hidden states of the instance words only
(:func:`encode_instances`, through the on-disk cache); any layer spec, raw or corrected,
is then array work. :func:`predict` takes, for each instance, the nearest centroid among the
candidates of its lemma and POS (one FAISS range search per (lemma, POS) group), and backs off
to WordNet's first sense when no candidate has a vector.

Example::

    train = encode_instances(enc, load_dataset("semcor"))
    test = encode_instances(enc, load_dataset("ALL"))
    index = train_index(train, SenseIndexConfig(layers="last4-sum"), EncoderInfo.of(enc))
    preds = predict(index, test.vectors("last4-sum"), test.lemmas, test.pos, wn.first_sense)
    score(test.gold(), answers(test.ids, preds)).f1
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

import numpy as np

from workbench.corpora.readers import Corpus, Instance
from workbench.encoding.cache import encode_cached
from workbench.encoding.embeddings import LayerwiseEmbeddings
from workbench.encoding.rows import Progress
from workbench.errors import InputError
from workbench.lexicon.wordnet import POS_TAGS, WordNet, load_wordnet
from workbench.wsd.config import EncoderInfo, SenseIndexConfig, TrainingInfo
from workbench.wsd.index import ORIGINS, SenseIndex
from workbench.wsd.sources import gloss_vectors, sense_graph
from workbench.wsd.vectors import LEVELS, SenseGraph

if TYPE_CHECKING:
    from workbench.encoding.encoder import Encoder

Backoff = Callable[[str, str], "str | None"]
Source = Literal["centroid", "propagated", "gloss", "backoff", "none"]


@dataclass(frozen=True)
class Prediction:
    """One disambiguated instance.

    Attributes:
        key: the chosen sense key (None: the lemma has no WordNet senses for this POS).
        score: cosine of the query with the chosen row (NaN for a back-off).
        runner_up, runner_up_score: the second-best candidate (None / NaN if there is none).
        source: ``centroid``, ``propagated``, ``gloss`` (how the chosen row was made),
            ``backoff`` (no candidate has a row: WordNet's first sense) or ``none``.
        detail: the propagation step (synset, hypernym, lexname) or the back-off reason.
        n_candidates: candidate rows searched.
    """

    key: str | None
    score: float
    runner_up: str | None
    runner_up_score: float
    source: Source
    detail: str = ""
    n_candidates: int = 0


@dataclass(frozen=True)
class InstanceSet:
    """The sense-annotated instances of a corpus and the hidden states of their words.

    Attributes:
        corpus: the corpus name (``semcor``, ``ALL``, ...).
        sha256: checksum of the corpus source files ("" if unknown).
        n_sentences: sentences of the corpus.
        ids, lemmas, pos: per instance, in corpus order.
        keys: gold sense keys per instance (may be empty).
        embeddings: all hidden states of the instance words, ``(n_rows, n_hidden, dim)``.
        rows: ``(n_instances,)`` int64, the row of each instance in ``embeddings``.
    """

    corpus: str
    sha256: str
    n_sentences: int
    ids: tuple[str, ...]
    lemmas: tuple[str, ...]
    pos: tuple[str, ...]
    keys: tuple[tuple[str, ...], ...]
    embeddings: LayerwiseEmbeddings
    rows: np.ndarray

    def __len__(self) -> int:
        return len(self.ids)

    def vectors(self, layers: str) -> np.ndarray:
        """``(n_instances, dim)`` float32 vectors at a layer spec."""
        return self.embeddings.select(layers)[self.rows]

    def gold(self) -> dict[str, tuple[str, ...]]:
        """Instance id -> gold keys (instances with gold only)."""
        return {i: k for i, k in zip(self.ids, self.keys) if k}

    def pos_of(self) -> dict[str, str]:
        return dict(zip(self.ids, self.pos))

    def training_info(self, restricted_to: Sequence[str] = ()) -> TrainingInfo:
        n = sum(1 for k in self.keys if k)
        return TrainingInfo(self.corpus, self.sha256, self.n_sentences, n, tuple(restricted_to))


#: The most sentences on each side an instance may be read with (``context`` of
#: :func:`encode_instances`): three sentences each way already passes most encoders' length.
MAX_CONTEXT = 3


def document_of(sentence_id: str) -> str | None:
    """The document of a framework sentence id (``senseval2.d000`` of
    ``senseval2.d000.s001``), None for an id of another form (no document known)."""
    head, _, last = sentence_id.rpartition(".")
    return head if head and last[:1] == "s" and last[1:].isdigit() else None


def instance_sequences(
    corpus: Corpus, context: int = 0
) -> tuple[list[list[str]], list[list[int]], list[tuple[int, int, Instance]]]:
    """The word sequences that :func:`encode_instances` encodes for ``corpus``: one per sentence
    with instances, that sentence's words with up to ``context`` sentences of the same document
    before and after it (none where the ids name no document).

    Returns:
        ``(sequences, keep, meta)``: the words of each sequence, the sorted positions of its
        instance words, and ``(sequence, position, instance)`` per instance in corpus order.

    Example::

        seqs, keep, meta = instance_sequences(load_dataset("semeval2007"), context=1)
    """
    if not 0 <= context <= MAX_CONTEXT:
        raise InputError(
            f"context must be 0 to {MAX_CONTEXT} sentences on each side, not {context}"
        )
    sentences = corpus.sentences
    sequences: list[list[str]] = []
    keep: list[list[int]] = []
    meta: list[tuple[int, int, Instance]] = []
    for i, sentence in enumerate(sentences):
        if not sentence.instances:
            continue
        doc = document_of(sentence.id) if context else None
        same = [] if doc is None else [
            j for j in range(max(0, i - context), min(len(sentences), i + context + 1))
            if j != i and document_of(sentences[j].id) == doc
        ]  # fmt: skip
        before = [w for j in same if j < i for w in sentences[j].words]
        after = [w for j in same if j > i for w in sentences[j].words]
        offset = len(before)
        sequences.append([*before, *sentence.words, *after])
        keep.append(sorted({offset + inst.index for inst in sentence.instances}))
        meta += [(len(sequences) - 1, offset + inst.index, inst) for inst in sentence.instances]
    return sequences, keep, meta


def encode_instances(
    encoder: Encoder,
    corpus: Corpus,
    progress: Progress = None,
    cache: bool = True,
    store_dtype: str = "float32",
    context: int = 0,
) -> InstanceSet:
    """Encode every hidden state of the instance words of ``corpus`` (sentences without an
    instance are skipped), through :func:`workbench.encoding.cache.encode_cached` unless ``cache``
    is False; ``context``: read each instance's sentence with that many sentences of its
    document on each side (:func:`instance_sequences`), its words' vectors taken where they
    stand in that sequence."""
    sentences, keep, meta = instance_sequences(corpus, context)
    if not meta:
        raise InputError(f"corpus '{corpus.name}' has no sense-annotated instances")
    if cache:
        emb = encode_cached(
            encoder, sentences, keep=keep, progress=progress, store_dtype=store_dtype
        )
    else:
        emb = encoder.encode(sentences, keep=keep, progress=progress, store_dtype=store_dtype)
    where = {
        (int(s), int(w)): r for r, (s, w) in enumerate(zip(emb.sentence_index, emb.word_index))
    }
    rows = np.array([where[(s, position)] for s, position, _ in meta], dtype=np.int64)
    insts = [inst for _, _, inst in meta]
    return InstanceSet(
        corpus=corpus.name,
        sha256=getattr(corpus, "sha256", "") or "",
        n_sentences=len(corpus.sentences),
        ids=tuple(i.id for i in insts),
        lemmas=tuple(i.lemma for i in insts),
        pos=tuple(i.pos for i in insts),
        keys=tuple(tuple(i.keys) for i in insts),
        embeddings=emb,
        rows=rows,
    )


def train_index(
    training: InstanceSet,
    config: SenseIndexConfig,
    info: EncoderInfo,
    graph: SenseGraph | None = None,
    gloss: tuple[Sequence[str], np.ndarray] | None = None,
    targets: Sequence[str] | None = None,
) -> SenseIndex:
    """Fit a :class:`SenseIndex` on the annotated instances of ``training``.

    Args:
        training: encoded instances with gold keys.
        config: layer spec, correction, propagation, gloss combination.
        info: identity of the encoder of ``training`` (``EncoderInfo.of(encoder)``).
        graph: WordNet structure (needed for propagation).
        gloss: ``(keys, vectors)`` at ``config.layers`` (needed for ``gloss="concat"``).
        targets: restrict propagation to these keys.
    """
    tagged = np.array([bool(k) for k in training.keys])
    if not tagged.any():
        raise InputError(f"corpus '{training.corpus}' has no gold sense keys to train on")
    vectors = training.vectors(config.layers)[tagged]
    keys = [k for k in training.keys if k]
    return SenseIndex(config).fit(
        vectors,
        keys,
        info=info,
        training=training.training_info(),
        graph=graph,
        gloss=gloss,
        targets=targets,
    )


def _groups(lemmas: Sequence[str], pos: Sequence[str]) -> dict[tuple[str, str], list[int]]:
    groups: dict[tuple[str, str], list[int]] = {}
    for i, (lemma, p) in enumerate(zip(lemmas, pos)):
        groups.setdefault((lemma.lower(), p), []).append(i)
    return groups


def _faiss_threads(n: int | None) -> int | None:
    """Set FAISS's OpenMP threads to ``n`` (None: leave them); the number before. None without
    FAISS installed (the index then searches with torch)."""
    try:
        import faiss
    except ImportError:
        return None
    previous = faiss.omp_get_max_threads()
    if n is not None:
        faiss.omp_set_num_threads(n)
    return previous


def predict(
    index: SenseIndex,
    vectors: np.ndarray,
    lemmas: Sequence[str],
    pos: Sequence[str],
    backoff: Backoff | None = None,
    threads: int | None = 1,
) -> list[Prediction]:
    """1-NN among the candidates of each instance's ``(lemma, pos)``.

    Args:
        index: a fitted sense index.
        vectors: ``(n, dim)`` occurrence vectors at ``index.config.layers`` (raw: the index
            applies its own correction).
        lemmas, pos: per instance, its lemma and universal POS.
        backoff: ``(lemma, pos) -> key`` used when no candidate has a row (WordNet's first
            sense: ``wordnet.first_sense``); None leaves such instances unanswered.
        threads: FAISS threads during the search (1: the measured setting), None: unchanged.

    Returns:
        One :class:`Prediction` per instance.
    """
    if not len(vectors) == len(lemmas) == len(pos):
        raise InputError(f"{len(vectors)} vectors, {len(lemmas)} lemmas, {len(pos)} POS tags")
    queries = index.transform_queries(vectors)
    out: list[Prediction | None] = [None] * len(lemmas)
    searched, n_cand = [], np.zeros(len(lemmas), dtype=np.int64)
    for (lemma, p), idx in _groups(lemmas, pos).items():
        start, stop = index.candidate_rows(lemma, p)
        if stop > start:
            searched.append((start, stop, np.asarray(idx, dtype=np.int64)))
            n_cand[idx] = stop - start
            continue
        key = backoff(lemma, p) if backoff is not None and p in POS_TAGS else None
        pred = Prediction(
            key, np.nan, None, np.nan, "backoff" if key else "none",
            "first sense" if key else "no candidates", 0,
        )  # fmt: skip
        for i in idx:
            out[i] = pred
    previous = _faiss_threads(threads)
    try:
        scores, rows = index.search_groups(queries, searched, k=2)
    finally:
        _faiss_threads(previous)
    keys = index.keys_
    # (source, detail) of each origin: a propagation level is "propagated" with the level as detail
    sources = [("propagated", o) if o in LEVELS else (o, "") for o in ORIGINS]
    origin = index.origin_[np.maximum(rows[:, 0], 0)].tolist()
    for i, (r0, r1), (s0, s1), o, n in zip(
        range(len(out)), rows.tolist(), scores.tolist(), origin, n_cand.tolist()
    ):
        if r0 < 0:
            continue
        out[i] = Prediction(
            keys[r0], s0, keys[r1] if r1 >= 0 else None, s1 if r1 >= 0 else float("nan"),
            sources[o][0], sources[o][1], n,
        )  # fmt: skip
    return out  # type: ignore[return-value]


def answers(ids: Sequence[str], predictions: Sequence[Prediction]) -> dict[str, str]:
    """Instance id -> predicted key (unanswered instances left out), for scoring / writing."""
    return {i: p.key for i, p in zip(ids, predictions) if p.key is not None}


def sources(ids: Sequence[str], predictions: Sequence[Prediction]) -> dict[str, str]:
    """Instance id -> how its answer was made (``centroid``, ``propagated``, ...)."""
    return {i: p.source for i, p in zip(ids, predictions)}


def build_index(
    encoder: Encoder,
    training: InstanceSet,
    config: SenseIndexConfig,
    wordnet: WordNet | None = None,
    progress: Progress = None,
) -> SenseIndex:
    """:func:`train_index` with the WordNet inputs the config asks for: the propagation graph
    and the LMMS gloss vectors of every WordNet sense (encoded once, cached on disk)."""
    graph = gloss = None
    if config.propagate != "none":
        graph = sense_graph(wordnet or load_wordnet())
    if config.gloss != "none":
        gloss = gloss_vectors(
            encoder,
            wordnet or load_wordnet(),
            config.layers,
            pooling=config.gloss_pooling,
            progress=progress,
        )
    return train_index(training, config, EncoderInfo.of(encoder), graph=graph, gloss=gloss)
