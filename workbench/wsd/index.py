"""The sense index: one centroid per WordNet sense key, searched only among a lemma's candidates.

A :class:`SenseIndex` is fitted on occurrence vectors ``(n_occurrences, dim)`` (one layer spec
of one encoder) and their gold sense keys: each key's centroid is the mean of its occurrences
(an occurrence with several gold keys counts for each), optionally after a correction
(z-score standardization, ...) fitted on those same vectors. Senses without a corpus centroid
can get one by LMMS propagation (:mod:`workbench.wsd.vectors`), and gloss vectors can be
combined with the corpus centroids, or stand alone (``gloss="only"``: every sense represented
the same way, by its gloss vector; the WordNet-only index). The L2-normalised rows live in a
FAISS inner-product index, sorted by (lemma, POS), so the candidates of an instance are one
contiguous range of rows: prediction searches that range only (``IDSelectorRange``), never all
senses. On a GPU without FAISS's GPU build the same search runs in torch on the GPU
(:mod:`workbench.wsd.search`).

Example::

    index = SenseIndex(SenseIndexConfig(layers="last4-sum")).fit(
        vectors, keys_per_occurrence, info=EncoderInfo.of(enc))
    preds = index.predict(query_vectors, lemmas, poses, backoff=wordnet.first_sense)
    preds[0].key, preds[0].score, preds[0].runner_up, preds[0].source
    save_index(index, "semcor.index")  # workbench.wsd.store
    load_index("semcor.index", EncoderInfo.of(enc))  # refused if enc is not the index's
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from dataclasses import asdict
from typing import Any, Literal

import numpy as np

from workbench.encoding.device import gpu_possible
from workbench.encoding.pooling import LayerSpec
from workbench.errors import DataError, InputError, MismatchError
from workbench.geometry.correction import Correction
from workbench.geometry.corrections import make_correction
from workbench.lexicon.wordnet import key_lemma_pos
from workbench.wsd.config import CandidateScores, EncoderInfo, SenseIndexConfig, TrainingInfo
from workbench.wsd.search import TorchRangeSearch
from workbench.wsd.vectors import (
    SenseGraph,
    combine_rows,
    normalize_rows,
    propagate,
    sense_centroids,
)

#: How a row of the index got its vector (``origin_`` codes).
ORIGINS: tuple[str, ...] = ("centroid", "synset", "hypernym", "lexname", "gloss")


def _spec_id(spec, n_hidden: int) -> tuple:
    """What a layer spec computes: resolved layers, operation and weights."""
    parsed = LayerSpec.parse(spec)
    layers = parsed.resolve(n_hidden)
    op = parsed.op if len(layers) > 1 or parsed.weights is not None else "one"
    return layers, op, parsed.weights


def _faiss():
    try:
        import faiss
    except ImportError as exc:
        raise DataError(
            "FAISS is not installed: pip install faiss-cpu, or search the sense index with "
            "torch (SenseIndex(search='torch'))"
        ) from exc
    return faiss


def _cuda_available() -> bool:
    """Whether torch sees a CUDA device (torch imported: only where one may be)."""
    import torch

    return bool(torch.cuda.is_available())


def _faiss_gpus() -> int | None:
    """GPUs FAISS can use (0 for a CPU-only build); None when FAISS is not installed."""
    try:
        faiss = _faiss()
    except DataError:
        return None
    get = getattr(faiss, "get_num_gpus", None)
    return int(get()) if get is not None else 0


class SenseIndex:
    """Sense centroids of one encoder and layer spec, in a FAISS inner-product index.

    Args:
        config: how the index is built (:class:`SenseIndexConfig`).
        device: ``auto`` searches on a GPU when there is one; ``cpu`` never does.
        search: the search engine: ``faiss`` (an ``IndexFlatIP``, on the GPU when ``device``
            allows it and FAISS has a GPU build, falling back to the CPU if the GPU index
            refuses range selectors), ``torch`` (exact inner products in torch:
            :class:`~workbench.wsd.search.TorchRangeSearch`, on cuda when ``device`` allows it
            and torch sees a GPU, else on the CPU), or ``auto``: FAISS on the GPU, else torch on
            the GPU, else FAISS on the CPU; torch wherever FAISS is not installed. All give the
            same neighbours. FAISS is needed only where it searches.

    Learned attributes (after :meth:`fit` or :meth:`load`):
        keys_: sense key of each row, sorted by (lemma, POS, key).
        vectors_: ``(n_rows, D)`` float32 unit rows (``D`` = dim, or 2*dim with glosses).
        origin_: ``(n_rows,)`` int8, index into :data:`ORIGINS`.
        counts_: ``(n_rows,)`` int64 training occurrences of each key (0 if none).
        groups_: ``(lemma, POS)`` -> ``(start, stop)`` row range of its candidates.
        correction_: the fitted correction or None.
        encoder_: :class:`EncoderInfo`; training_: :class:`TrainingInfo`.
        search_: the engine and device the searches ran on (``faiss:cpu``, ``faiss:gpu``,
            ``torch:cuda``, ``torch:cpu``), set by the first search.
    """

    def __init__(
        self,
        config: SenseIndexConfig | None = None,
        device: Literal["auto", "cpu"] = "auto",
        search: Literal["auto", "faiss", "torch"] = "auto",
    ) -> None:
        self.config = config or SenseIndexConfig()
        self.device = device  # auto: a GPU index when FAISS sees a GPU
        self.search = search
        self._faiss_index = None
        self._torch_search: TorchRangeSearch | None = None

    # ------------------------------------------------------------------ fitting

    def fit(
        self,
        vectors: np.ndarray,
        keys: Sequence[Sequence[str]],
        *,
        info: EncoderInfo,
        training: TrainingInfo | None = None,
        graph: SenseGraph | None = None,
        gloss: tuple[Sequence[str], np.ndarray] | None = None,
        targets: Sequence[str] | None = None,
    ) -> SenseIndex:
        """Compute the centroids (and propagated / gloss rows) and build the index.

        Args:
            vectors: ``(n_occurrences, dim)`` occurrence vectors at ``config.layers``.
            keys: gold sense keys of each occurrence.
            info: identity of the encoder that made the vectors.
            training: where the occurrences come from.
            graph: WordNet structure, required when ``config.propagate`` is not ``none``.
            gloss: ``(keys, (n, dim) vectors)`` gloss vectors at the same layer spec, required
                when ``config.gloss`` is ``concat`` or ``only`` (then the rows are these gloss
                vectors alone and ``vectors``/``keys`` are not used: pass ``(0, dim)``/``[]``).
            targets: restrict propagation to these sense keys (default: every key of graph).

        Returns:
            self.
        """
        cfg = self.config
        vectors = np.asarray(vectors, dtype=np.float32)
        if vectors.ndim != 2 or vectors.shape[1] != info.dim:
            raise InputError(f"vectors must be (n, {info.dim}), got {vectors.shape}")
        if cfg.propagate != "none" and graph is None:
            raise InputError("propagation needs the WordNet sense graph (graph=...)")
        if cfg.gloss != "none" and gloss is None:
            raise InputError("gloss combination needs gloss vectors (gloss=(keys, vectors))")
        post = None if cfg.correction == "none" else make_correction(cfg.correction)
        if cfg.gloss == "only" and gloss is not None:  # every row a gloss vector, no centroids
            gkeys, gvecs = gloss
            gvecs = np.asarray(gvecs, dtype=np.float32)
            if gvecs.shape != (len(gkeys), info.dim):
                raise InputError(f"gloss vectors must be ({len(gkeys)}, {info.dim}), got "
                                 f"{gvecs.shape}")  # fmt: skip
            code = np.int8(ORIGINS.index("gloss"))
            zeros = np.zeros(len(gkeys), dtype=np.int64)
            self.set_rows(tuple(gkeys), normalize_rows(gvecs), np.full(len(gkeys), code), zeros)
            self.correction_ = post  # None: refused by the config
            self.encoder_ = info
            self.training_ = training or TrainingInfo()
            return self
        if post is not None:
            source = training or TrainingInfo()
            if len(vectors) < 2:  # the correction's own words were "X: need at least two"
                raise InputError(
                    f"a {cfg.correction} correction is fitted on the training vectors, and "
                    f"{source.corpus or 'the training corpus'} gives {len(vectors)}: it needs "
                    "at least 2 (choose correction none, or a larger training corpus)"
                )
            prov = source.provenance(info, cfg.layers)
            vectors = np.asarray(
                post.fit(vectors, provenance=prov).transform(vectors), dtype=np.float32
            )
        ckeys, cvecs, counts = sense_centroids(vectors, keys)
        training = training or TrainingInfo(n_occurrences=len(vectors))
        return self._finish(ckeys, cvecs, counts, post, info, training, graph, gloss, targets)

    def fit_sums(
        self,
        keys: Sequence[str],
        sums: np.ndarray,
        counts: np.ndarray,
        *,
        info: EncoderInfo,
        correction: Correction | None = None,
        training: TrainingInfo | None = None,
        graph: SenseGraph | None = None,
        gloss: tuple[Sequence[str], np.ndarray] | None = None,
        targets: Sequence[str] | None = None,
    ) -> SenseIndex:
        """Build the index from per-sense sums of occurrence vectors (reduced over the shards of
        a corpus too large for one :meth:`fit`): each centroid is ``sum / count``.

        The correction (``config.correction``) comes fitted on the raw occurrence vectors
        (e.g. :meth:`~workbench.geometry.corrections.Standardizer.partial_fit` over the shards);
        every correction is affine, so it transforms the centroids, which equals the centroids
        of the transformed vectors that :meth:`fit` takes (to float32 rounding). Propagation and
        gloss rows then follow as in :meth:`fit`.

        Args:
            keys: ``(n_keys,)`` distinct sense keys.
            sums: ``(n_keys, dim)`` sum of the occurrence vectors of each key (float64 best).
            counts: ``(n_keys,)`` occurrences of each key (>= 1).
            info, training, graph, gloss, targets: as for :meth:`fit`.
            correction: fitted as ``config.correction`` names (None for ``none``).

        Returns:
            self.
        """
        cfg = self.config
        sums = np.asarray(sums, dtype=np.float64)
        counts = np.asarray(counts, dtype=np.int64)
        if sums.ndim != 2 or sums.shape != (len(keys), info.dim) or counts.shape != (len(keys),):
            raise InputError(f"sums must be ({len(keys)}, {info.dim}) with one count per key, "
                             f"got {sums.shape} and {counts.shape}")  # fmt: skip
        if len(keys) == 0 or (counts < 1).any() or len(set(keys)) != len(keys):
            raise InputError("fit_sums needs distinct keys, each with at least one occurrence")
        if cfg.gloss == "only":
            raise InputError("gloss='only' builds no centroids: use fit with the gloss vectors")
        if cfg.propagate != "none" and graph is None:
            raise InputError("propagation needs the WordNet sense graph (graph=...)")
        if cfg.gloss != "none" and gloss is None:
            raise InputError("gloss combination needs gloss vectors (gloss=(keys, vectors))")
        name = correction.name if correction is not None else "none"
        if name != cfg.correction:
            raise InputError(f"the index's config says correction={cfg.correction!r}; the "
                             f"correction given is {name!r}")  # fmt: skip
        order = sorted(range(len(keys)), key=lambda i: keys[i])
        centroids = (sums[order] / counts[order, None]).astype(np.float32)
        if correction is not None:
            centroids = np.asarray(correction.transform(centroids), np.float32)
        training = training or TrainingInfo(n_occurrences=int(counts.sum()))
        return self._finish(tuple(keys[i] for i in order), centroids, counts[order],
                            correction, info, training, graph, gloss, targets)  # fmt: skip

    def _finish(self, ckeys, cvecs, counts, post, info, training, graph, gloss, targets):
        """Propagation and gloss rows after the centroids, then the rows of the index."""
        cfg = self.config
        origin = np.zeros(len(ckeys), dtype=np.int8)
        if cfg.propagate != "none" and graph is not None:  # graph None: refused above
            prop = propagate(graph, ckeys, cvecs, cfg.propagate, targets)
            ckeys = ckeys + prop.keys
            cvecs = np.concatenate([cvecs, prop.vectors])
            origin = np.concatenate([origin, prop.levels])
            counts = np.concatenate([counts, np.zeros(len(prop.keys), dtype=counts.dtype)])
        if cfg.gloss == "concat" and gloss is not None:  # gloss None: refused above
            gkeys, gvecs = gloss
            gvecs = np.asarray(gvecs, dtype=np.float32)
            if post is not None:
                gvecs = np.asarray(post.transform(gvecs), dtype=np.float32)
            all_keys, rows, gloss_only = combine_rows(ckeys, cvecs, gkeys, gvecs, cfg.gloss_weight)
            at = {k: i for i, k in enumerate(ckeys)}
            pos = np.array([at.get(k, -1) for k in all_keys], dtype=np.int64)
            # a gloss-only row has no corpus row to take its origin and count from (and there
            # may be no corpus row at all: a lemma whose senses have no example)
            has = pos >= 0
            new_origin = np.full(len(all_keys), ORIGINS.index("gloss"), dtype=np.int8)
            new_origin[has] = origin[pos[has]]
            new_counts = np.zeros(len(all_keys), dtype=np.int64)
            new_counts[has] = counts[pos[has]]
            origin, counts, ckeys = new_origin, new_counts, tuple(all_keys)
        else:
            rows = normalize_rows(cvecs)
        self.set_rows(ckeys, rows, origin.astype(np.int8), counts.astype(np.int64))
        self.correction_ = post
        self.encoder_ = info
        self.training_ = training
        return self

    def set_rows(
        self,
        keys: Sequence[str] | np.ndarray,
        rows: np.ndarray,
        origin: np.ndarray,
        counts: np.ndarray,
    ) -> None:
        """Store the rows sorted by (lemma, POS, key); each candidate set is one row range."""
        names = np.array(keys, dtype=str).reshape(-1)
        groups = np.array(["\t".join(key_lemma_pos(k)) for k in names.tolist()], dtype=str)
        order = np.lexsort((names, groups)) if len(names) else np.zeros(0, np.int64)
        names, groups = names[order], groups[order]
        self.keys_ = tuple(names.tolist())
        self.vectors_ = np.ascontiguousarray(rows[order], dtype=np.float32)
        self.origin_ = np.asarray(origin)[order]
        self.counts_ = np.asarray(counts)[order]
        none = np.zeros(0, np.int64)
        starts = np.flatnonzero(np.r_[True, groups[1:] != groups[:-1]]) if len(names) else none
        stops = np.r_[starts[1:], len(names)].astype(int) if len(names) else none
        self.groups_ = {
            tuple(groups[a].split("\t")): (int(a), int(b)) for a, b in zip(starts, stops)
        }
        self._row_of = {k: i for i, k in enumerate(self.keys_)}
        self._faiss_index = None
        self._torch_search = None

    # ------------------------------------------------------------------ facts

    def __len__(self) -> int:
        return len(self.keys_)

    @property
    def dim(self) -> int:
        """Width of the index rows (``2 * encoder dim`` with gloss concatenation)."""
        return int(self.vectors_.shape[1])

    @property
    def has_centroids(self) -> bool:
        """Whether any row is the centroid of training occurrences (a gloss index, such as a
        trained bi-encoder's, has none)."""
        return bool((self.origin_ == ORIGINS.index("centroid")).any())

    def origin_of(self, key: str) -> str | None:
        """How the row of ``key`` was made (``ORIGINS``), None without a row."""
        row = self._row_of.get(key)
        return None if row is None else ORIGINS[self.origin_[row]]

    def count_of(self, key: str) -> int:
        """Training occurrences of ``key`` (0 if none or no row)."""
        row = self._row_of.get(key)
        return 0 if row is None else int(self.counts_[row])

    def candidate_rows(self, lemma: str, pos: str) -> tuple[int, int]:
        """Row range ``[start, stop)`` of the candidates of ``(lemma, pos)`` (empty: (0, 0))."""
        return self.groups_.get((lemma.lower(), pos), (0, 0))

    def summary(self) -> dict:
        """Counts of rows by origin and the full configuration (JSON-able)."""
        counts = np.bincount(self.origin_, minlength=len(ORIGINS))
        return {
            "config": asdict(self.config),
            "encoder": asdict(self.encoder_),
            "training": asdict(self.training_),
            "rows": len(self),
            "rows_by_origin": {o: int(c) for o, c in zip(ORIGINS, counts)},
            "dim": self.dim,
        }

    # ------------------------------------------------------------------ search

    def transform_queries(self, vectors: np.ndarray) -> np.ndarray:
        """Occurrence vectors ``(n, dim)`` -> unit query rows ``(n, D)`` in the index's space
        (correction, L2 normalisation, duplication for gloss concatenation)."""
        vectors = np.asarray(vectors, dtype=np.float32)
        if vectors.ndim != 2 or vectors.shape[1] != self.encoder_.dim:
            raise MismatchError(
                f"query vectors have shape {vectors.shape}; this index holds "
                f"{self.encoder_.dim}-dim vectors of {self.encoder_.name}"
            )
        if self.correction_ is not None:
            vectors = np.asarray(self.correction_.transform(vectors), dtype=np.float32)
        q = normalize_rows(vectors)
        if self.config.gloss == "concat":  # gloss "only": the rows are plain unit vectors
            w = self.config.gloss_weight
            q = np.concatenate([np.sqrt(1 - w) * q, np.sqrt(w) * q], axis=1).astype(np.float32)
        return np.ascontiguousarray(q)

    @property
    def faiss_index(self) -> Any:
        """The FAISS ``IndexFlatIP`` over ``vectors_`` (built on first use): on the GPU when
        FAISS sees one and ``device`` allows it, else on the CPU."""
        if self._faiss_index is None:
            faiss = _faiss()
            index = faiss.IndexFlatIP(self.dim)
            index.add(self.vectors_)
            self._cpu_index, self.device_ = index, "cpu"
            if self.device != "cpu" and (_faiss_gpus() or 0) > 0:
                try:
                    res = faiss.StandardGpuResources()
                    index = faiss.index_cpu_to_gpu(res, 0, index)
                    self._gpu_resources, self.device_ = res, "gpu"
                except (RuntimeError, AttributeError) as exc:  # pragma: no cover - GPU only
                    warnings.warn(f"no FAISS GPU index ({exc}); using the CPU", stacklevel=2)
            self._faiss_index = index
        return self._faiss_index

    def _search_c(self, n, q, k, d, i, params) -> None:
        """One C-level search; a GPU index that refuses ID selectors falls back to the CPU."""
        faiss = _faiss()
        args = (n, faiss.swig_ptr(q), k, faiss.swig_ptr(d), faiss.swig_ptr(i), params)
        try:
            self.faiss_index.search_c(*args)
        except RuntimeError as exc:  # pragma: no cover - GPU only
            if self.device_ != "gpu":
                raise
            warnings.warn(f"FAISS GPU search with a range selector failed ({exc}); using the CPU",
                          stacklevel=3)  # fmt: skip
            self._faiss_index, self.device_ = self._cpu_index, "cpu"
            self._cpu_index.search_c(*args)

    def _torch_device(self) -> str | None:
        """Where torch searches (None: FAISS does): per ``search`` and ``device``."""
        if self.search == "faiss":
            return None
        gpu = self.device != "cpu" and gpu_possible() and _cuda_available()
        if self.search == "torch":
            return "cuda" if gpu else "cpu"
        n_gpus = _faiss_gpus()  # auto: FAISS on a GPU first, then torch on one, then FAISS
        if n_gpus is None:  # no FAISS installed: torch, wherever
            return "cuda" if gpu else "cpu"
        return "cuda" if gpu and n_gpus == 0 else None

    def search_groups(
        self, queries: np.ndarray, groups: Sequence[tuple[int, int, np.ndarray]], k: int = 2
    ) -> tuple[np.ndarray, np.ndarray]:
        """Many range searches in one call: for each ``(start, stop, rows_of_queries)``, the
        ``k`` best index rows in ``[start, stop)`` for those queries.

        FAISS: one ``IDSelectorRange`` is reused (its bounds set per group) and FAISS's C
        search is called directly, so a group costs its search, not a wrapper's setup
        (docs/benchmarks.md, "WSD"). torch: all queries at once, in chunks
        (:class:`TorchRangeSearch`).

        Returns:
            ``(scores (n, k) float32, rows (n, k) int64)`` for all ``n`` queries (``-1``/NaN
            where a query was in no group or its range has fewer than ``k`` rows).
        """
        if self._torch_search is None and (device := self._torch_device()) is not None:
            self._torch_search = TorchRangeSearch(self.vectors_, device)
        if self._torch_search is not None:
            self.search_ = f"torch:{self._torch_search.device}"
            starts = np.zeros(len(queries), dtype=np.int64)
            stops = np.zeros(len(queries), dtype=np.int64)
            for start, stop, members in groups:
                starts[members], stops[members] = start, stop
            return self._torch_search.search(queries, starts, stops, k)
        faiss = _faiss()
        queries = np.ascontiguousarray(queries, dtype=np.float32)
        scores = np.full((len(queries), k), np.nan, dtype=np.float32)
        rows = np.full((len(queries), k), -1, dtype=np.int64)
        selector = faiss.IDSelectorRange(0, 1)
        params = faiss.SearchParameters(sel=selector)
        for start, stop, members in groups:
            selector.imin, selector.imax = int(start), int(stop)
            q = queries[members]
            d = np.empty((len(members), k), dtype=np.float32)
            i = np.empty((len(members), k), dtype=np.int64)
            self._search_c(len(members), q, k, d, i, params)
            scores[members], rows[members] = d, i
        rows[rows < 0] = -1
        self.search_ = f"faiss:{getattr(self, 'device_', 'cpu')}"
        return scores, rows

    def candidate_scores(self, query: np.ndarray, lemma: str, pos: str) -> CandidateScores:
        """Score every candidate row of ``(lemma, pos)`` for one occurrence vector ``(dim,)``,
        best first."""
        start, stop = self.candidate_rows(lemma, pos)
        q = self.transform_queries(np.asarray(query, dtype=np.float32).reshape(1, -1))[0]
        scores = self.vectors_[start:stop] @ q
        order = np.argsort(-scores, kind="stable")
        return CandidateScores(
            keys=tuple(self.keys_[start + i] for i in order),
            scores=scores[order].astype(np.float32),
            origins=tuple(ORIGINS[self.origin_[start + i]] for i in order),
        )

    # ------------------------------------------------------------------ compatibility

    def check_encoder(self, info: EncoderInfo, layers: str | LayerSpec | None = None) -> None:
        """Raise :class:`MismatchError` unless the encoder ``info`` describes
        (``EncoderInfo.of(encoder)``) and ``layers`` are the ones this index was built with."""
        mine = self.encoder_
        for what, a, b in (
            ("fingerprint", info.fingerprint, mine.fingerprint),
            ("dimension", info.dim, mine.dim),
            ("pooling", info.pooling, mine.pooling),
            ("hidden-state count", info.n_hidden, mine.n_hidden),
        ):
            if a != b:
                raise MismatchError(
                    f"this sense index was built with {mine.name} ({what} {b}); the encoder in "
                    f"use, {info.name}, has {what} {a}. Train an index for it: workbench wsd train"
                )
        if layers is not None and _spec_id(layers, mine.n_hidden) != _spec_id(
            self.config.layers, mine.n_hidden
        ):
            raise MismatchError(
                f"this sense index holds layer spec '{self.config.layers}', not '{layers}'"
            )

    def correction_problem(self, correction: Correction) -> str | None:
        """Why ``correction`` is not the one this index's config and encoder say (another
        kind, fitted per layer or on another layer spec, width, model or pooling), in words;
        None when it agrees. A saved index's correction is checked this way on load: its
        digest covers the file, not its agreement with ``meta.json``."""
        cfg, info = self.config, self.encoder_
        if correction.name != cfg.correction:
            return f"a '{correction.name}' correction, where the config says '{cfg.correction}'"
        if correction.n_layers_ is not None:
            return (
                f"fitted per layer ({correction.n_layers_} layers), where an index's correction "
                f"is fitted on its layer spec '{cfg.layers}'"
            )
        if correction.n_features_in_ != info.dim:
            return f"fitted on {correction.n_features_in_}-dim vectors, the index's are {info.dim}"
        prov = correction.provenance_
        try:
            other = bool(prov.layer_spec) and _spec_id(prov.layer_spec, info.n_hidden) != _spec_id(
                cfg.layers, info.n_hidden
            )
        except (InputError, ValueError):
            other = True
        if other:
            return f"fitted on layers '{prov.layer_spec}', where the config says '{cfg.layers}'"
        for field, mine in (("fingerprint", info.fingerprint), ("pooling", info.pooling)):
            theirs = getattr(prov, field)
            if theirs and mine and theirs != mine:
                return f"fitted with {field} '{theirs}', where the index's encoder has '{mine}'"
        return None
