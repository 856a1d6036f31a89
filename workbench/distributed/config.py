"""What a sharded extraction job computes (:class:`ShardConfig`) and where it runs
(:class:`ClusterConfig`).

Everything in :class:`ShardConfig` except ``max_batch_tokens`` changes the shards' rows or
numbers, so it goes into the manifest (:mod:`workbench.distributed.shards`) and a rerun with
other values is refused. :class:`ClusterConfig` only decides how fast the same shards come out.

Example::

    config = ShardConfig(model="bert-base-uncased", layers=(8, 12), dtype="float16")
    cluster = ClusterConfig(address="auto", workers=4)     # the cluster of `ray start --head`
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, get_args

from workbench.bounds import COUNT, NON_NEGATIVE, POSITIVE
from workbench.encoding.device import DtypeName
from workbench.encoding.pooling import POOLINGS, Pooling
from workbench.errors import InputError

#: Which words of a sentence become rows: all of them, or only sense-annotated instances.
Keep = Literal["all", "instances"]
KEEPS: tuple[str, ...] = get_args(Keep)
#: The stored vectors' dtype.
StoreDtype = Literal["float32", "float16"]
STORE_DTYPES: tuple[str, ...] = get_args(StoreDtype)


@dataclass(frozen=True)
class ShardConfig:
    """What goes into the shards (see the module docstring)."""

    model: str | None = None  # None: the packaged all-MiniLM-L6-v2; a hub id or a local directory
    pooling: Pooling = "mean"  # subword -> word pooling: first | mean | last
    layers: tuple[int, ...] | None = None  # hidden states kept (0 = embeddings); None = all
    dtype: StoreDtype = "float32"  # stored vectors: float32, or float16 (half the bytes)
    keep: Keep = "all"  # rows: every word, or only the sense-annotated instances of XML input
    shard_size: int = 2000  # input items (text lines, JSONL lines, Parquet rows, XML sentences)
    text_column: str = "text"  # the Parquet column / JSON field holding a sentence
    compute_dtype: DtypeName = "auto"  # model dtype (auto: each worker's choose_dtype)
    max_length: int | None = None  # model input length (None: the model's own limit)
    stride: int | None = None  # subwords between window starts of long sentences (None: half)
    max_batch_tokens: int = 8192  # padded tokens per forward batch (speed only, not in manifest)

    def __post_init__(self) -> None:
        if self.pooling not in POOLINGS:
            raise InputError(f"pooling must be one of {', '.join(POOLINGS)}, not {self.pooling!r}")
        if self.dtype not in STORE_DTYPES:
            raise InputError(f"dtype must be float32 or float16, not {self.dtype!r}")
        if self.keep not in KEEPS:
            raise InputError(f"keep must be 'all' or 'instances', not {self.keep!r}")
        COUNT.check("shard_size", self.shard_size)
        COUNT.check("max_batch_tokens", self.max_batch_tokens)
        COUNT.check("max_length", self.max_length, optional=True)
        COUNT.check("stride", self.stride, optional=True)
        if not self.text_column:
            raise InputError("text_column must name a column")


@dataclass(frozen=True)
class ClusterConfig:
    """Where the job runs and with how many encoders."""

    address: str | None = None  # None: a local Ray for this job; "auto": `ray start`'s; host:port
    workers: int | None = None  # actors, one Encoder each; None: one per GPU, else one per CPU slot
    cpus_per_worker: int = 1  # CPUs reserved per actor (its torch threads on a CPU)
    gpus_per_worker: float | None = None  # None: 1 where the cluster has GPUs, else 0
    local_cpus: int | None = None  # CPUs of the local Ray started when address is None (None: all)
    device: str | None = None  # the actors' torch device (None: cuda if it has a GPU, else cpu)
    connect_timeout: float = 30.0  # seconds to reach a cluster at host:port before giving up

    def __post_init__(self) -> None:
        COUNT.check("workers", self.workers, optional=True)
        COUNT.check("cpus_per_worker", self.cpus_per_worker)
        NON_NEGATIVE.check("gpus_per_worker", self.gpus_per_worker, optional=True)
        COUNT.check("local_cpus", self.local_cpus, optional=True)
        POSITIVE.check("connect_timeout", self.connect_timeout)
