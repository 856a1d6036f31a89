"""Pure array arithmetic of sense vectors: centroids, LMMS propagation, gloss combination.

Centroids are means over occurrences (:func:`sense_centroids`); propagation runs over a
:class:`SenseGraph`, the part of WordNet it needs stored as arrays (sense key -> synset,
synset -> hypernyms, synset -> lexicographer file), so a toy neighbourhood in a test and the
full WordNet 3.0 go through the same code; :func:`combine_rows` joins corpus and gloss vectors.

Propagation (Loureiro & Jorge 2019, "LMMS"): a sense with no corpus vector gets, in order,

1. ``synset``: the mean of the vectors of the senses of its synset that have one;
2. ``hypernym``: the mean of the synset vectors (step 1) of its synset's hypernyms
   (instance hypernyms included);
3. ``lexname``: the mean of all synset vectors (steps 1-2) of its lexicographer file.

Example::

    graph = SenseGraph.build(keys, key_synsets, hypernyms, lexnames)
    prop = propagate(graph, known_keys, known_vectors, level="lexname")
    prop.keys, prop.vectors.shape, prop.levels       # new keys, (n_new, dim), 1|2|3 per key
"""

from __future__ import annotations

import functools
import os
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

import numpy as np

from workbench.errors import InputError
from workbench.fileio import atomic_path

PropagationLevel = Literal["none", "synset", "hypernym", "lexname"]
LEVELS: tuple[str, ...] = ("none", "synset", "hypernym", "lexname")


@dataclass(frozen=True)
class SenseGraph:
    """The WordNet structure propagation needs, as arrays.

    Attributes:
        keys: every sense key of the inventory.
        key_synset: ``(n_keys,)`` int64, the synset (row of ``synsets``) of each key.
        synsets: synset identifiers (e.g. ``bank.n.01`` or an offset), one per synset.
        hypernym_edges: ``(n_edges, 2)`` int64 ``(child, parent)`` synset rows.
        synset_lexname: ``(n_synsets,)`` int64, row of ``lexnames`` of each synset.
        lexnames: lexicographer file names (``noun.artifact``, ...).
    """

    keys: tuple[str, ...]
    key_synset: np.ndarray
    synsets: tuple[str, ...]
    hypernym_edges: np.ndarray
    synset_lexname: np.ndarray
    lexnames: tuple[str, ...]

    @classmethod
    def build(
        cls,
        key_synsets: Mapping[str, str],
        hypernyms: Mapping[str, Iterable[str]],
        lexname_of: Mapping[str, str],
    ) -> SenseGraph:
        """Build from plain mappings: key -> synset, synset -> hypernyms, synset -> lexname.

        Every synset named anywhere must have a lexname in ``lexname_of``.
        """
        synsets = tuple(sorted(lexname_of))
        row = {s: i for i, s in enumerate(synsets)}
        lexnames = tuple(sorted(set(lexname_of.values())))
        lex_row = {name: i for i, name in enumerate(lexnames)}
        keys = tuple(key_synsets)
        try:
            key_synset = np.array([row[key_synsets[k]] for k in keys], dtype=np.int64)
            edges = [(row[c], row[p]) for c, ps in hypernyms.items() for p in ps]
        except KeyError as exc:
            raise InputError(f"synset {exc} has no lexname in the sense graph") from None
        return cls(
            keys=keys,
            key_synset=key_synset,
            synsets=synsets,
            hypernym_edges=np.array(edges, dtype=np.int64).reshape(-1, 2),
            synset_lexname=np.array([lex_row[lexname_of[s]] for s in synsets], dtype=np.int64),
            lexnames=lexnames,
        )

    @property
    def n_synsets(self) -> int:
        return len(self.synsets)

    @functools.cached_property
    def key_row(self) -> dict[str, int]:
        """Sense key -> its position in ``keys`` (built on first use)."""
        return {k: i for i, k in enumerate(self.keys)}

    def save(self, path: str | os.PathLike) -> Path:
        """Write the graph to one ``.npz`` (atomically)."""
        path = Path(path)
        with atomic_path(path, suffix=".npz") as tmp:
            np.savez(
                tmp,
                keys=np.array(self.keys, dtype=str),
                key_synset=self.key_synset,
                synsets=np.array(self.synsets, dtype=str),
                hypernym_edges=self.hypernym_edges,
                synset_lexname=self.synset_lexname,
                lexnames=np.array(self.lexnames, dtype=str),
            )
        return path

    @classmethod
    def load(cls, path: str | os.PathLike) -> SenseGraph:
        """Read a graph written by :meth:`save`."""
        with np.load(path, allow_pickle=False) as data:
            return cls(
                keys=tuple(data["keys"].tolist()),
                key_synset=data["key_synset"],
                synsets=tuple(data["synsets"].tolist()),
                hypernym_edges=data["hypernym_edges"],
                synset_lexname=data["synset_lexname"],
                lexnames=tuple(data["lexnames"].tolist()),
            )


@dataclass(frozen=True)
class Propagated:
    """Vectors given to senses with no corpus vector.

    Attributes:
        keys: the sense keys that received a vector.
        vectors: ``(len(keys), dim)`` float32.
        levels: ``(len(keys),)`` int8: 1 synset, 2 hypernym, 3 lexname (see :data:`LEVELS`).
    """

    keys: tuple[str, ...]
    vectors: np.ndarray
    levels: np.ndarray


def _group_mean(groups: np.ndarray, vectors: np.ndarray, n_groups: int):
    """Mean of ``vectors`` ``(n, dim)`` per group id ``(n,)`` -> ``((n_groups, dim), counts)``."""
    counts = np.bincount(groups, minlength=n_groups).astype(np.float64)
    from scipy import sparse  # heavy: only where sense vectors are summed

    member = sparse.csr_matrix(
        (np.ones(len(groups), dtype=np.float32), (groups, np.arange(len(groups)))),
        shape=(n_groups, len(groups)),
    )
    sums = np.asarray(member @ vectors, dtype=np.float32)
    with np.errstate(invalid="ignore", divide="ignore"):
        means = sums / np.maximum(counts, 1)[:, None].astype(np.float32)
    return means, counts


def synset_vectors(
    graph: SenseGraph, known_rows: np.ndarray, known_vectors: np.ndarray, level: str
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Per-synset vectors of the first two propagation steps.

    Returns:
        ``(synset_vec, has_synset, hypernym_vec, has_hypernym)``: ``(n_synsets, dim)`` float32
        means and ``(n_synsets,)`` bool masks.
    """
    n_syn = graph.n_synsets
    syn_vec, syn_count = _group_mean(graph.key_synset[known_rows], known_vectors, n_syn)
    has_syn = syn_count > 0
    dim = known_vectors.shape[1]
    hyp_vec = np.zeros((n_syn, dim), dtype=np.float32)
    has_hyp = np.zeros(n_syn, dtype=bool)
    if level in ("hypernym", "lexname") and len(graph.hypernym_edges):
        child, parent = graph.hypernym_edges[:, 0], graph.hypernym_edges[:, 1]
        ok = has_syn[parent]
        from scipy import sparse  # heavy: only where sense vectors are summed

        member = sparse.csr_matrix(
            (np.ones(int(ok.sum()), dtype=np.float32), (child[ok], parent[ok])),
            shape=(n_syn, n_syn),
        )
        counts = np.bincount(child[ok], minlength=n_syn)
        has_hyp = counts > 0
        hyp_vec = np.asarray(member @ syn_vec, dtype=np.float32)
        hyp_vec[has_hyp] /= counts[has_hyp, None].astype(np.float32)
    return syn_vec, has_syn, hyp_vec, has_hyp


def propagate(
    graph: SenseGraph,
    known_keys: Sequence[str],
    known_vectors: np.ndarray,
    level: PropagationLevel = "lexname",
    targets: Iterable[str] | None = None,
) -> Propagated:
    """Give a vector to every sense key of ``graph`` (or of ``targets``) that has none.

    Args:
        graph: the sense inventory's structure.
        known_keys: keys with a corpus vector (keys absent from the graph are ignored).
        known_vectors: ``(len(known_keys), dim)`` their vectors (LMMS averages them unnormalised).
        level: the most abstract step used (``none`` returns nothing).
        targets: restrict the keys to fill (default: every key of the graph).

    Returns:
        The filled keys in graph order with their vectors and the step that filled each.
    """
    if level not in LEVELS:
        raise InputError(f"unknown propagation level '{level}'; choose one of {', '.join(LEVELS)}")
    dim = int(known_vectors.shape[1]) if known_vectors.ndim == 2 else 0
    empty = Propagated((), np.zeros((0, dim), np.float32), np.zeros(0, np.int8))
    if level == "none" or len(known_keys) == 0:
        return empty
    key_row = graph.key_row
    pairs = [(key_row[k], i) for i, k in enumerate(known_keys) if k in key_row]
    rows = np.array([p[0] for p in pairs], dtype=np.int64)
    vecs = np.asarray(known_vectors, dtype=np.float32)[[p[1] for p in pairs]]
    syn_vec, has_syn, hyp_vec, has_hyp = synset_vectors(graph, rows, vecs, level)

    known = np.zeros(len(graph.keys), dtype=bool)
    known[rows] = True
    wanted = ~known
    if targets is not None:
        mask = np.zeros(len(graph.keys), dtype=bool)
        mask[[key_row[k] for k in targets if k in key_row]] = True
        wanted &= mask
    cand = np.flatnonzero(wanted)
    syn = graph.key_synset[cand]
    lvl = np.zeros(len(cand), dtype=np.int8)
    lvl[has_syn[syn]] = 1
    out = np.zeros((len(cand), syn_vec.shape[1]), dtype=np.float32)
    out[lvl == 1] = syn_vec[syn[lvl == 1]]
    if level in ("hypernym", "lexname"):
        take = (lvl == 0) & has_hyp[syn]
        lvl[take] = 2
        out[take] = hyp_vec[syn[take]]
    if level == "lexname":
        ext = np.where(has_syn[:, None], syn_vec, hyp_vec)
        has_ext = has_syn | has_hyp
        syn_ids = np.flatnonzero(has_ext)
        lex_vec, lex_count = _group_mean(
            graph.synset_lexname[syn_ids], ext[syn_ids], len(graph.lexnames)
        )
        take = (lvl == 0) & (lex_count[graph.synset_lexname[syn]] > 0)
        lvl[take] = 3
        out[take] = lex_vec[graph.synset_lexname[syn[take]]]
    done = lvl > 0
    return Propagated(
        keys=tuple(graph.keys[i] for i in cand[done]), vectors=out[done], levels=lvl[done]
    )


def normalize_rows(x: np.ndarray) -> np.ndarray:
    """L2-normalised float32 copy of ``x`` ``(n, dim)`` (zero rows stay zero)."""
    x = np.array(x, dtype=np.float32)
    norms = np.linalg.norm(x, axis=1, keepdims=True)
    np.divide(x, norms, out=x, where=norms > 0)
    return x


def sense_centroids(
    vectors: np.ndarray, keys: Sequence[Sequence[str]]
) -> tuple[tuple[str, ...], np.ndarray, np.ndarray]:
    """Mean vector of each sense key over its occurrences.

    Args:
        vectors: ``(n_occurrences, dim)``.
        keys: gold keys of each occurrence (several keys: the occurrence counts for each).

    Returns:
        ``(keys, centroids (n_keys, dim) float32, counts (n_keys,) int64)``, keys sorted.
    """
    if len(keys) != len(vectors):
        raise InputError(f"{len(vectors)} vectors but {len(keys)} key lists")
    names = sorted({k for ks in keys for k in ks})
    col = {k: i for i, k in enumerate(names)}
    rows = [col[k] for ks in keys for k in ks]
    occ = [i for i, ks in enumerate(keys) for _ in ks]
    from scipy import sparse  # heavy: only where sense vectors are summed

    member = sparse.csr_matrix(
        (np.ones(len(rows), dtype=np.float32), (rows, occ)), shape=(len(names), len(vectors))
    )
    counts = np.bincount(np.asarray(rows, dtype=np.int64), minlength=len(names))
    sums = np.asarray(member @ np.asarray(vectors, dtype=np.float32), dtype=np.float32)
    return tuple(names), sums / np.maximum(counts, 1)[:, None], counts


def combine_rows(
    corpus_keys: Sequence[str],
    corpus_vecs: np.ndarray,
    gloss_keys: Sequence[str] | None,
    gloss_vecs: np.ndarray | None,
    weight: float,
) -> tuple[list[str], np.ndarray, np.ndarray]:
    """Concatenate normalised corpus and gloss vectors: ``[sqrt(1-w) c, sqrt(w) g]``.

    A key with only one of the two uses it for both halves. With a query ``[sqrt(1-w) q,
    sqrt(w) q]`` the inner product is ``(1-w) cos(q, c) + w cos(q, g)``.

    Returns:
        ``(keys, rows (n, 2*dim) float32 unit norm, gloss_only (n,) bool)``.
    """
    c_of = {k: i for i, k in enumerate(corpus_keys)}
    g_of = {k: i for i, k in enumerate(gloss_keys or ())}
    keys = sorted(set(c_of) | set(g_of))
    ci = np.array([c_of.get(k, -1) for k in keys], dtype=np.int64)
    gi = np.array([g_of.get(k, -1) for k in keys], dtype=np.int64)
    has_c, has_g = ci >= 0, gi >= 0
    dim = corpus_vecs.shape[1] if len(corpus_vecs) else np.asarray(gloss_vecs).shape[1]
    rows = np.empty((len(keys), 2 * dim), dtype=np.float32)
    left, right = rows[:, :dim], rows[:, dim:]
    if has_c.any():
        left[has_c] = normalize_rows(np.asarray(corpus_vecs)[ci[has_c]])
    if has_g.any():
        right[has_g] = normalize_rows(np.asarray(gloss_vecs)[gi[has_g]])
    left[~has_c] = right[~has_c]
    right[~has_g] = left[~has_g]
    left *= np.float32(np.sqrt(1 - weight))
    right *= np.float32(np.sqrt(weight))
    return keys, rows, ~has_c
