"""A map of a whole corpus: every word occurrence at one layer (or layer combination) and
correction, projected to 2-D, with a table of what each point is (word, lemma, POS, sense and
supersense where the corpus knows them, its sentence).

The plain path: encode the sentences in chunks keeping only the layers the spec needs, correct
(a correction fitted per layer on a seeded sample of the corpus's own words) and combine the
layers, then project. Up to ``fit_sample`` words are projected by UMAP directly; past that, UMAP
is fitted on a seeded sample of ``fit_sample`` words and every other word is placed at the
distance-weighted mean of its ``place_k`` nearest sampled words (found by FAISS in a PCA space
of ``place_dims`` dimensions), which is what keeps a corpus of hundreds of thousands of words
within a CPU's reach (docs/benchmarks.md, "App").

The coordinates are computed once per model (fingerprint and dtype), corpus (content hash),
layer spec, correction and settings, and stored in the workbench's cache dir
(``<cache>/corpus-maps/<key>.npz``); every later call loads them.

Example::

    cmap = corpus_map(Encoder(), load_reference_corpus("semcor"), CorpusMapConfig(layer="6"))
    cmap.coords.shape        # (778587, 2)
    cmap.table.head()        # word, lemma, pos, sense, supersense, sentence, x, y
"""

from __future__ import annotations

import os
import time
import zipfile
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from workbench import __version__
from workbench.corpora.readers import Corpus
from workbench.corpora.tagging import tag_corpus
from workbench.encoding.cache import encode_cached
from workbench.encoding.models import default_cache_dir
from workbench.encoding.pooling import LayerSpec, combine_layers
from workbench.errors import DataError, InputError
from workbench.fileio import atomic_path, sha256_json
from workbench.geometry.corrections import make_correction
from workbench.limits import check_npz, non_finite
from workbench.viz.projection import ProjectionConfig, Projector

if TYPE_CHECKING:
    import pandas as pd

    from workbench.encoding.encoder import Encoder
    from workbench.lexicon.wordnet import WordNet

#: ``progress(fraction, stage)``: called as the map is made (fraction 0-1 of all the work).
MapProgress = Callable[[float, str], None]


@dataclass(frozen=True)
class CorpusMapConfig:
    """How a corpus map is made (every field is part of its cache key)."""

    layer: str = "last4-sum"  # layer spec: "6", "-1", "last4-sum", ...
    correction: str = "none"  # geometry.corrections name, fitted on the corpus's own words
    max_sentences: int = 0  # the corpus's first N sentences; 0 = every sentence
    fit_sample: int = 20_000  # words projected by UMAP; the rest are placed by their neighbours
    correction_sample: int = 50_000  # words the correction is fitted on (seeded sample)
    place_k: int = 10  # nearest sampled words that place a word
    place_dims: int = 50  # PCA dimensions of the neighbour search
    n_neighbors: int = 15  # UMAP
    min_dist: float = 0.1  # UMAP
    chunk_sentences: int = 2_000  # sentences encoded at a time
    seed: int = 0  # sample, UMAP and PCA seed


@dataclass
class CorpusMap:
    """A corpus's word occurrences in 2-D.

    Attributes:
        coords: ``(n_words, 2)`` float32, in corpus order (sentence by sentence).
        table: one row per word: ``word``, ``lemma``, ``pos``, ``sense`` (gold key or ""),
            ``supersense`` (WordNet lexicographer class of the sense, or ""), ``sentence``
            (index), ``position`` (index in the sentence), ``x``, ``y``.
        sentences: the corpus's sentences as words (for showing a point's context).
        config: how it was made; ``seconds``: time to make it (0 when loaded).
        info: model, corpus, counts, how the points were projected.
    """

    coords: np.ndarray
    table: pd.DataFrame
    sentences: list[tuple[str, ...]]
    config: CorpusMapConfig
    seconds: float = 0.0
    info: dict[str, Any] = field(default_factory=dict)

    _texts: dict[int, list[str]] = field(default_factory=dict, repr=False)

    def __len__(self) -> int:
        return len(self.coords)

    def texts(self, width: int = 6) -> list[str]:
        """Every word's context (:meth:`context` with ``width`` words each side), made once
        and kept (a map's text column for a renderer that shows it)."""
        if width not in self._texts:
            self._texts[width] = [self.context(i, width) for i in range(len(self))]
        return self._texts[width]

    def search(self, text: str) -> np.ndarray:
        """Row indices whose word or lemma equals ``text`` (case-insensitive)."""
        needle = text.strip().lower()
        if not needle:
            return np.zeros(0, dtype=np.int64)
        words = self.table["word"].str.lower().to_numpy()
        lemmas = self.table["lemma"].str.lower().to_numpy()
        return np.flatnonzero((words == needle) | (lemmas == needle))

    def sentence_tags(self) -> list[list[str]]:
        """The table's POS column as one list per sentence (what a sense predictor reads
        beside :attr:`sentences`)."""
        pos = self.table["pos"].tolist()
        starts = np.cumsum([0, *(len(s) for s in self.sentences)])
        return [pos[a:b] for a, b in zip(starts[:-1], starts[1:])]

    def with_senses(self, senses: Sequence[str], supersenses: Sequence[str]) -> CorpusMap:
        """A copy whose table's ``sense`` and ``supersense`` are ``senses`` and ``supersenses``
        (one per word, e.g. a WSD system's predictions; ``info["senses"]`` says
        ``"predicted"``).

        Raises:
            InputError: not one label per word.
        """
        if len(senses) != len(self) or len(supersenses) != len(self):
            raise InputError(f"one sense and one supersense per word: {len(self):,} of each")
        table = self.table.assign(sense=list(senses), supersense=list(supersenses))
        return CorpusMap(self.coords, table, self.sentences, self.config, self.seconds,
                         {**self.info, "senses": "predicted"})  # fmt: skip

    def context(self, row: int, width: int = 12) -> str:
        """The sentence of ``row`` around its word, the word in ``[brackets]``."""
        s, i = int(self.table["sentence"].iat[row]), int(self.table["position"].iat[row])
        words = self.sentences[s]
        left, right = max(0, i - width), min(len(words), i + width + 1)
        out = [*words[left:i], f"[{words[i]}]", *words[i + 1 : right]]
        return ("… " if left else "") + " ".join(out) + (" …" if right < len(words) else "")


def corpus_table(corpus: Corpus, wordnet: WordNet | None = None) -> pd.DataFrame:
    """One row per word of ``corpus``: word, lemma, pos, sense, supersense, sentence, position.

    ``sense`` is the first gold key of an annotated word; ``supersense`` its WordNet
    lexicographer class (``noun.artifact``), looked up in ``wordnet`` when given.
    """
    import pandas as pd

    words, lemmas, pos, senses, sent, position = [], [], [], [], [], []
    for s, sentence in enumerate(corpus.sentences):
        keys = {inst.index: inst.keys[0] for inst in sentence.instances if inst.keys}
        for i, word in enumerate(sentence.words):
            words.append(word)
            lemmas.append(sentence.lemmas[i] if i < len(sentence.lemmas) else word.lower())
            pos.append(sentence.pos[i] if i < len(sentence.pos) else "")
            senses.append(keys.get(i, ""))
            sent.append(s)
            position.append(i)
    lexname: dict[str, str] = {"": ""}
    if wordnet is not None:
        for key in dict.fromkeys(senses):
            if key not in lexname:
                try:
                    lexname[key] = wordnet.lexname(wordnet.synset(key))
                except Exception:  # noqa: BLE001 - a key WordNet lacks has no supersense
                    lexname[key] = ""
    table = pd.DataFrame(
        {
            "word": words,
            "lemma": lemmas,
            "pos": pos,
            "sense": senses,
            "supersense": [lexname.get(k, "") for k in senses],
            "sentence": np.asarray(sent, dtype=np.int32),
            "position": np.asarray(position, dtype=np.int32),
        }
    )
    return table


def corpus_vectors(
    encoder: Encoder,
    sentences: Sequence[Sequence[str]],
    config: CorpusMapConfig,
    progress: MapProgress | None = None,
) -> np.ndarray:
    """``(n_words, dim)`` float32 vectors of every word at ``config.layer`` after
    ``config.correction``, encoded ``config.chunk_sentences`` at a time (each chunk through
    the on-disk cache, keeping only the layers the spec needs)."""
    n_hidden = encoder.n_layers + 1
    spec = LayerSpec.parse(config.layer)
    layers = sorted({i % n_hidden for i in spec.resolve(n_hidden)})
    chunks: list[np.ndarray] = []
    step = max(1, config.chunk_sentences)
    for start in range(0, len(sentences), step):
        part = [list(s) for s in sentences[start : start + step]]
        emb = encode_cached(encoder, part, layers=layers, progress=False)
        chunks.append(np.asarray(emb.vectors, dtype=np.float16))  # (n, len(layers), dim)
        if progress is not None:
            progress(min(start + step, len(sentences)) / len(sentences), "Encoding the words…")
    if not chunks:
        raise InputError("the corpus has no sentences")
    stacked = np.concatenate(chunks)  # (n_words, len(layers), dim) float16
    post = None
    if config.correction != "none":
        rng = np.random.default_rng(config.seed)
        n_fit = min(len(stacked), config.correction_sample)
        fit_rows = np.sort(rng.choice(len(stacked), n_fit, replace=False))
        post = make_correction(config.correction).fit(stacked[fit_rows].astype(np.float32))
    out = np.empty((len(stacked), stacked.shape[2]), dtype=np.float32)
    block = 50_000
    for start in range(0, len(stacked), block):
        x = stacked[start : start + block].astype(np.float32)
        if post is not None:
            x = post.transform(x)
        out[start : start + block] = combine_layers(x, layers, spec, n_hidden)
    return out


def place_by_neighbours(
    vectors: np.ndarray,
    sample: np.ndarray,
    sample_coords: np.ndarray,
    k: int = 10,
    dims: int = 50,
    seed: int = 0,
) -> np.ndarray:
    """``(n, 2)`` coordinates for every row of ``vectors`` ``(n, dim)``: the rows in ``sample``
    (indices) keep ``sample_coords``; every other row goes to the distance-weighted mean of its
    ``k`` nearest sampled rows, searched by FAISS among cosine-normalised PCA projections."""
    import faiss
    from sklearn.decomposition import PCA

    x = np.asarray(vectors, dtype=np.float32)
    dims = min(dims, x.shape[1], len(sample))
    pca = PCA(n_components=dims, random_state=seed).fit(x[sample])
    reduced = np.empty((len(x), dims), dtype=np.float32)
    for start in range(0, len(x), 100_000):
        reduced[start : start + 100_000] = pca.transform(x[start : start + 100_000])
    reduced /= np.linalg.norm(reduced, axis=1, keepdims=True).clip(1e-12)
    index = faiss.IndexFlatIP(dims)
    index.add(np.ascontiguousarray(reduced[sample]))
    coords = np.empty((len(x), 2), dtype=np.float32)
    rest = np.setdiff1d(np.arange(len(x)), sample)
    k = min(k, len(sample))
    for start in range(0, len(rest), 50_000):
        rows = rest[start : start + 50_000]
        sims, found = index.search(np.ascontiguousarray(reduced[rows]), k)
        weights = 1.0 / (1.0 - sims + 1e-3)  # nearer (higher cosine) weighs more
        weights /= weights.sum(axis=1, keepdims=True)
        coords[rows] = np.einsum("nk,nkd->nd", weights, sample_coords[found])
    coords[sample] = sample_coords
    return coords


def project_corpus(
    vectors: np.ndarray, config: CorpusMapConfig, progress: MapProgress | None = None
) -> tuple[np.ndarray, dict[str, Any]]:
    """``(n, 2)`` coordinates of ``vectors`` and how they were made: UMAP on every word up to
    ``config.fit_sample`` words, else UMAP on a seeded sample and the rest placed by
    :func:`place_by_neighbours`."""
    n = len(vectors)
    projection = ProjectionConfig(method="umap", n_components=2, n_neighbors=config.n_neighbors,
                                  min_dist=config.min_dist, random_state=config.seed)  # fmt: skip
    if progress is not None:
        progress(0.0, f"Projecting {min(n, config.fit_sample):,} words with UMAP…")
    t = time.perf_counter()
    if n <= config.fit_sample:
        coords = Projector(projection).fit_transform(vectors).astype(np.float32)
        return coords, {"method": "umap", "fitted": n, "umap_seconds": time.perf_counter() - t}
    rng = np.random.default_rng(config.seed)
    sample = np.sort(rng.choice(n, config.fit_sample, replace=False))
    sample_coords = Projector(projection).fit_transform(vectors[sample]).astype(np.float32)
    umap_seconds = time.perf_counter() - t
    if progress is not None:
        progress(0.8, f"Placing the other {n - len(sample):,} words by their neighbours…")
    t = time.perf_counter()
    coords = place_by_neighbours(vectors, sample, sample_coords, config.place_k,
                                 config.place_dims, config.seed)  # fmt: skip
    info = {"method": "umap on a sample, the rest placed by nearest neighbours",
            "fitted": int(len(sample)), "umap_seconds": umap_seconds,
            "place_seconds": time.perf_counter() - t}  # fmt: skip
    return coords, info


def map_key(encoder: Encoder, corpus: Corpus, config: CorpusMapConfig) -> str:
    """The cache key of a map: model identity and dtype, corpus content, config, version."""
    return sha256_json({
        "fingerprint": encoder.fingerprint, "dtype": encoder.dtype_name,
        "pooling": encoder.pooling, "corpus": corpus.sha256 or corpus.name,
        "n_sentences": len(corpus.sentences), "config": asdict(config), "version": __version__,
    })[:24]  # fmt: skip


def maps_dir() -> Path:
    """Where corpus maps are stored: ``<cache>/corpus-maps``."""
    return default_cache_dir() / "corpus-maps"


def corpus_map(
    encoder: Encoder,
    corpus: Corpus,
    config: CorpusMapConfig | None = None,
    wordnet: WordNet | None = None,
    progress: MapProgress | None = None,
    cache_dir: str | os.PathLike[str] | None = None,
) -> CorpusMap:
    """The map of every word of ``corpus`` (its first ``config.max_sentences``), loaded from the
    cache dir when it was made before, else made (:func:`corpus_vectors`, then
    :func:`project_corpus`) and stored there.

    Raises:
        InputError: the corpus has no words, or the layer spec does not fit the model.
    """
    config = config or CorpusMapConfig()
    if config.max_sentences:
        corpus = corpus.head(config.max_sentences)
    n_words = sum(len(s.words) for s in corpus.sentences)
    if n_words < 3:
        raise InputError("a corpus map needs at least 3 words")
    table = corpus_table(tag_corpus(corpus, wordnet) if wordnet is not None else corpus, wordnet)
    sentences = [tuple(s.words) for s in corpus.sentences]
    path = Path(cache_dir or maps_dir()) / f"{map_key(encoder, corpus, config)}.npz"
    info = {"model": encoder.name, "corpus": corpus.name, "n_words": n_words,
            "n_sentences": len(sentences)}  # fmt: skip
    if path.is_file():
        try:
            check_npz(path)  # sizes first: a damaged file is made again
            with np.load(path, allow_pickle=False) as stored:
                coords = np.asarray(stored["coords"], dtype=np.float32)
                method = str(stored["method"])
            if coords.shape == (n_words, 2) and not non_finite(coords):
                table["x"], table["y"] = coords[:, 0], coords[:, 1]
                return CorpusMap(coords, table, sentences, config, 0.0,
                                 {**info, "method": method, "cached": True})  # fmt: skip
        except (OSError, ValueError, KeyError, EOFError, zipfile.BadZipFile, DataError):
            pass  # a damaged file: made again below
    t = time.perf_counter()

    def encoding(fraction: float, stage: str) -> None:
        if progress is not None:
            progress(0.7 * fraction, stage)

    def projecting(fraction: float, stage: str) -> None:
        if progress is not None:
            progress(0.7 + 0.3 * fraction, stage)

    vectors = corpus_vectors(encoder, sentences, config, encoding)
    coords, how = project_corpus(vectors, config, projecting)
    path.parent.mkdir(parents=True, exist_ok=True)
    with atomic_path(path, suffix=".npz") as tmp:
        with open(tmp, "wb") as fh:
            np.savez(fh, coords=coords, method=np.asarray(how["method"]))
    table["x"], table["y"] = coords[:, 0], coords[:, 1]
    seconds = time.perf_counter() - t
    return CorpusMap(coords, table, sentences, config, seconds,
                     {**info, **how, "cached": False})  # fmt: skip
