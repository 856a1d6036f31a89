"""What is built from shards: standardization statistics, a sense index, per-layer geometry.

Each reduction is a map over shards and an exact merge on the driver:

* :func:`fit_standardizer`: per shard, the :class:`~workbench.geometry.corrections.Moments`
  (count, mean, variance per layer and dimension, read in chunks from the memory map); merged,
  they are those of the whole corpus, and the
  :class:`~workbench.geometry.corrections.Standardizer` takes them through ``partial_fit_moments``;
* :func:`fit_sense_index`: per shard, the sum and count of the vectors of every gold sense key
  (rows whose ``keys`` are not empty, at the index's layer spec), plus their moments for a
  z-scored index; summed, they give the same centroids as ``SenseIndex.fit`` on all occurrences
  (:meth:`~workbench.wsd.index.SenseIndex.fit_sums`);
* :func:`sample_geometry`: the per-layer analysis of ``workbench geometry`` (anisotropy,
  similarities, rogue dimensions, each correction) on the sentences of a seeded sample of
  shards, in memory: a sample is small, so Ray would only add start-up time.

The map runs in this process (``engine="local"``, streaming one shard at a time) or as one Ray
task per shard (``engine="ray"``), which pays once the shards are many and on several nodes'
disks; the results are the same up to float64 rounding (the merge order differs).

Example::

    shards = ShardedEmbeddings("shards/")
    z = fit_standardizer(shards, engine="ray")           # per layer, like fit_embeddings
    index = fit_sense_index(shards, SenseIndexConfig(layers="last4-sum", correction="zscore"))
    result = sample_geometry(shards, n_shards=8)         # GeometryResult, as workbench geometry
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any, Literal, TypeVar

import numpy as np
import pyarrow.parquet as pq
from scipy import sparse

from workbench.distributed.cluster import ray_session
from workbench.distributed.config import ClusterConfig
from workbench.distributed.reader import ShardedEmbeddings
from workbench.distributed.shards import shard_paths
from workbench.encoding.pooling import combine_layers
from workbench.errors import InputError
from workbench.fileio import sha256_json
from workbench.geometry.analysis import GeometryConfig, GeometryResult, analyze_layers
from workbench.geometry.correction import Provenance
from workbench.geometry.corrections import Moments, Standardizer
from workbench.wsd.config import EncoderInfo, SenseIndexConfig, TrainingInfo
from workbench.wsd.index import SenseIndex
from workbench.wsd.vectors import SenseGraph

Engine = Literal["local", "ray"]
_T = TypeVar("_T")
CHUNK_BYTES = 1 << 27  # float64 bytes of one chunk of rows while computing moments (128 MiB)


def map_shards(
    fn: Callable[..., _T],
    shards: ShardedEmbeddings,
    args: Sequence[Any] = (),
    engine: Engine = "local",
    cluster: ClusterConfig | None = None,
) -> Iterator[_T]:
    """Yield ``fn(vectors_path, table_path, *args)`` for every shard: in shard order in this
    process, or in completion order as Ray tasks (``fn`` must then be a module-level function).
    """
    if engine not in ("local", "ray"):
        raise InputError(f"engine must be 'local' or 'ray', not {engine!r}")
    files = [shard_paths(shards.directory, name) for name in shards.names]
    if engine == "local":
        for paths in files:
            yield fn(str(paths.vectors), str(paths.table), *args)
        return
    with ray_session(cluster or ClusterConfig()) as ray:
        task = ray.remote(num_cpus=1)(fn)
        pending = [task.remote(str(p.vectors), str(p.table), *args) for p in files]
        while pending:
            ready, pending = ray.wait(pending, num_returns=1)
            yield ray.get(ready[0])


def _rows_of(vectors_path: str) -> np.ndarray:
    """A shard's vectors as a read-only memory map (an empty shard, which cannot be mapped,
    read whole)."""
    try:
        return np.load(vectors_path, mmap_mode="r")
    except ValueError:
        return np.load(vectors_path)


def shard_moments(
    vectors_path: str, table_path: str, slots: Sequence[int], chunk_rows: int
) -> Moments:
    """The moments of one shard's vectors at the layer ``slots`` (``(len(slots), dim)``)."""
    vectors = _rows_of(vectors_path)
    total = Moments(
        0, np.zeros((len(slots), vectors.shape[2])), np.zeros((len(slots), vectors.shape[2]))
    )
    for start in range(0, vectors.shape[0], chunk_rows):
        total = total.merge(Moments.of(vectors[start : start + chunk_rows][:, list(slots), :]))
    return total  # fmt: skip


def _slots(shards: ShardedEmbeddings, layers: Sequence[int] | None) -> list[int]:
    if layers is None:
        return list(range(len(shards.layers)))
    missing = [layer for layer in layers if layer not in shards.layers]
    if missing:
        raise InputError(f"layers {missing} are not in the shards (kept: {list(shards.layers)})")
    return [shards.layers.index(layer) for layer in layers]


def corpus_hash(shards: ShardedEmbeddings) -> str:
    """One digest of the inputs the shards were made from (their names and contents)."""
    return sha256_json([(Path(e["path"]).name, e["sha256"]) for e in shards.manifest.inputs])


def fit_standardizer(
    shards: ShardedEmbeddings,
    layers: Sequence[int] | None = None,
    zero_variance: Literal["center", "zero", "error"] = "center",
    engine: Engine = "local",
    cluster: ClusterConfig | None = None,
) -> Standardizer:
    """A per-layer :class:`~workbench.geometry.corrections.Standardizer` fitted on every row of
    the shards, as ``Standardizer().fit_embeddings(emb)`` would on all of them in memory.

    Args:
        shards: the shards.
        layers: hidden states to fit (default: every kept one), in this order.
        zero_variance: the Standardizer's policy for constant dimensions.
        engine: ``local`` or ``ray`` (see :func:`map_shards`).
        cluster: where ``ray`` runs (default: a local Ray, or the session already open).
    """
    slots = _slots(shards, layers)
    chunk = max(2, CHUNK_BYTES // (8 * len(slots) * shards.dim))
    total = Moments(0, np.zeros((len(slots), shards.dim)), np.zeros((len(slots), shards.dim)))
    for moments in map_shards(shard_moments, shards, (slots, chunk), engine, cluster):
        total = total.merge(moments)
    if total.n < 2:
        raise InputError(
            f"{shards.directory}: need at least two rows to standardize, got {total.n}"
        )
    provenance = Provenance(
        model_name=shards.model_name,
        fingerprint=shards.fingerprint,
        layers=tuple(shards.layers[s] for s in slots),
        pooling=shards.pooling,
        corpus=shards.directory.name,
        corpus_hash=corpus_hash(shards),
        n_sentences=shards.n_sentences,
    )
    return Standardizer(zero_variance).partial_fit_moments(total, provenance=provenance)


def shard_sense_sums(
    vectors_path: str,
    table_path: str,
    available: Sequence[int],
    spec: str,
    n_hidden: int,
    moments: bool,
) -> tuple[list[str], np.ndarray, np.ndarray, Moments | None]:
    """Per gold sense key of one shard: the float64 sum ``(n_keys, dim)`` and count of the
    vectors at layer ``spec`` of the rows carrying it, keys sorted; with ``moments``, also the
    moments of those rows' vectors (one per row, as the correction of ``fit`` sees them)."""
    table = pq.read_table(table_path, columns=["row", "keys"])
    keys = table.column("keys").to_pylist()
    tagged = [i for i, k in enumerate(keys) if k]
    rows = table.column("row").to_numpy()[tagged]
    vectors = _rows_of(vectors_path)
    x = combine_layers(vectors[np.sort(rows)], available, spec, n_hidden)
    x = x[np.argsort(np.argsort(rows))]  # back to the table's order (read sorted for the mmap)
    key_lists = [keys[i].split() for i in tagged]
    names = sorted({k for ks in key_lists for k in ks})
    col = {k: j for j, k in enumerate(names)}
    member = [col[k] for ks in key_lists for k in ks]
    occurrence = [i for i, ks in enumerate(key_lists) for _ in ks]
    matrix = sparse.csr_matrix(
        (np.ones(len(member)), (member, occurrence)), shape=(len(names), len(x))
    )
    sums = np.asarray(matrix @ x.astype(np.float64)).reshape(len(names), x.shape[1])
    counts = np.bincount(np.asarray(member, dtype=np.int64), minlength=len(names))
    return names, sums, counts, (Moments.of(x) if moments and len(x) else None)


def fit_sense_index(
    shards: ShardedEmbeddings,
    config: SenseIndexConfig | None = None,
    *,
    graph: SenseGraph | None = None,
    gloss: tuple[Sequence[str], np.ndarray] | None = None,
    targets: Sequence[str] | None = None,
    training: TrainingInfo | None = None,
    engine: Engine = "local",
    cluster: ClusterConfig | None = None,
) -> SenseIndex:
    """A :class:`~workbench.wsd.index.SenseIndex` from the sense-tagged rows of the shards
    (rows whose ``keys`` column is not empty, e.g. from framework XML such as SemCor): the same
    centroids as ``SenseIndex(config).fit`` on those rows' vectors in memory.

    Args:
        shards: the shards (their layers must cover ``config.layers``).
        config: the index's configuration; ``correction`` is ``none`` or ``zscore`` (the
            others need the full covariance, not moments).
        graph, gloss, targets: as for :meth:`~workbench.wsd.index.SenseIndex.fit`.
        training: where the occurrences come from (default: the shard directory's inputs).
        engine, cluster: see :func:`map_shards`.

    Raises:
        InputError: another correction, layers the shards lack, no sense-tagged row.
    """
    config = config or SenseIndexConfig()
    if config.correction not in ("none", "zscore"):
        raise InputError(
            f"an index from shards takes correction 'none' or 'zscore', not "
            f"{config.correction!r} (it needs the covariance, not the moments)"
        )
    zscore = config.correction == "zscore"
    sums: dict[str, np.ndarray] = {}
    counts: dict[str, int] = {}
    total = Moments(0, np.zeros(shards.dim), np.zeros(shards.dim))
    args = (shards.layers, config.layers, shards.n_hidden, zscore)
    for names, part_sums, part_counts, moments in map_shards(
        shard_sense_sums, shards, args, engine, cluster
    ):
        for name, row, count in zip(names, part_sums, part_counts.tolist()):
            sums[name] = sums[name] + row if name in sums else row
            counts[name] = counts.get(name, 0) + count
        if moments is not None:
            total = total.merge(moments)
    if not sums:
        raise InputError(f"{shards.directory}: no row carries a sense key (keys column empty)")
    keys = sorted(sums)
    info = EncoderInfo(
        shards.model_name, shards.fingerprint, shards.dim, shards.n_hidden, shards.pooling,
        shards.compute_dtype,
    )  # fmt: skip
    source = training or TrainingInfo(
        corpus=shards.directory.name,
        sha256=corpus_hash(shards),
        n_sentences=shards.n_sentences,
        n_occurrences=int(sum(counts.values())),
    )
    post = None
    if zscore:
        provenance = source.provenance(info, config.layers)
        post = Standardizer().partial_fit_moments(total, provenance=provenance)
    return SenseIndex(config).fit_sums(
        keys,
        np.stack([sums[k] for k in keys]),
        np.array([counts[k] for k in keys]),
        info=info,
        correction=post,
        training=source,
        graph=graph,
        gloss=gloss,
        targets=targets,
    )


def sample_geometry(
    shards: ShardedEmbeddings,
    n_shards: int | None = 8,
    max_rows: int = 50_000,
    config: GeometryConfig | None = None,
    random_state: int = 0,
    progress: Callable[[int, int], None] | None = None,
) -> GeometryResult:
    """``workbench geometry``'s per-layer analysis on a seeded sample of the shards.

    Args:
        shards: the shards.
        n_shards: shards drawn at random (None: all of them).
        max_rows: at most this many rows, as whole sentences drawn at random from those shards.
        config: the analysis's :class:`~workbench.geometry.analysis.GeometryConfig`.
        random_state: seeds the draws (and the analysis, unless ``config`` is given).
        progress: called ``(done, total)`` after each (layer, correction).

    Returns:
        The :class:`~workbench.geometry.analysis.GeometryResult` over the sampled rows.
    """
    rng = np.random.default_rng(random_state)
    records = [r for r in shards.records if r.rows > 0]
    if not records:
        raise InputError(f"{shards.directory}: the shards hold no rows")
    take = len(records) if n_shards is None else min(max(1, n_shards), len(records))
    chosen = sorted(rng.choice(len(records), size=take, replace=False).tolist())
    vectors, words, contexts = [], [], []
    offset = 0  # sentence numbers run on across the chosen shards, in shard order
    for position in chosen:
        emb = shards.shard(records[position].name)
        vectors.append(np.asarray(emb.vectors, dtype=np.float32))
        words += emb.words
        contexts.append(emb.sentence_index + offset)
        offset += records[position].sentences
    x = np.concatenate(vectors)
    ctx = np.concatenate(contexts)
    if len(x) > max_rows:  # whole sentences, drawn at random, up to max_rows rows
        sentences, sizes = np.unique(ctx, return_counts=True)
        order = rng.permutation(len(sentences))
        n_keep = int(np.searchsorted(np.cumsum(sizes[order]), max_rows, side="right"))
        mask = np.isin(ctx, sentences[order[: max(2, n_keep)]])
        x, ctx, words = x[mask], ctx[mask], [w for w, m in zip(words, mask.tolist()) if m]
    config = config or GeometryConfig(random_state=random_state)
    return analyze_layers(x, words, ctx, shards.layers, config, progress)
