"""One worker of a sharded job: an :class:`~workbench.encoding.encoder.Encoder` that turns parts
into shards.

:class:`ShardWorker` is the callable class Ray Data runs as a pool of actors
(``map_batches(ShardWorker, compute=ActorPoolStrategy(size=n), num_gpus=...)``): its
``__init__`` loads one encoder (on the actor's GPU when it has one), its ``__call__`` takes a
batch of parts (as JSON) and writes one shard per part with :func:`encode_part`. A part that
fails does not fail the job: its result row carries the error, naming the input file and line,
and the other parts go on. Nothing here imports Ray, so :func:`encode_part` runs (and is tested)
in a plain process too.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Sequence
from dataclasses import asdict
from typing import Any

import numpy as np

from workbench.corpora.readers import Sentence
from workbench.distributed.config import ShardConfig
from workbench.distributed.inputs import Part, read_part
from workbench.distributed.shards import (
    ROW_SCHEMA,
    ShardRecord,
    row_table,
    shard_paths,
    write_record,
    write_table,
)
from workbench.encoding.alignment import normalize_input
from workbench.encoding.encoder import Encoder
from workbench.errors import DataError, InputError, WorkbenchError
from workbench.fileio import atomic_path, sha256_file

#: The columns of a worker's result batch (one row per part).
RESULT_COLUMNS = ("shard", "ok", "error", "rows", "sentences", "items", "seconds")


def config_to_json(config: ShardConfig) -> str:
    """A :class:`ShardConfig` as JSON (what travels to the actors)."""
    return json.dumps(asdict(config))


def config_from_json(text: str) -> ShardConfig:
    data = json.loads(text)
    if data.get("layers") is not None:
        data["layers"] = tuple(data["layers"])
    return ShardConfig(**data)


def make_encoder(config: ShardConfig, device: str | None = None) -> Encoder:
    """The encoder a job's settings describe."""
    return Encoder(
        model=config.model,
        device=device,
        dtype=config.compute_dtype,
        pooling=config.pooling,
        max_batch_tokens=config.max_batch_tokens,
        max_length=config.max_length,
        stride=config.stride,
    )


def _item_place(part: Part, item: int) -> str:
    """``path:line`` (text, JSONL), ``path: row R`` (Parquet), ``path: sentence N`` (XML)."""
    if part.kind in ("text", "jsonl"):
        return f"{part.path}:{item + 1}"
    return f"{part.path}: {'row' if part.kind == 'parquet' else 'sentence'} {item}"


def _culprit(part: Part, sentences: Sequence[tuple[int, Sentence]], exc: Exception) -> str:
    """The error of a failed encode, placed at the input line of the first sentence the encoder
    refuses on its own (else at the whole part)."""
    for item, sentence in sentences:
        try:
            normalize_input([list(sentence.words)])
        except InputError as bad:
            return f"{_item_place(part, item)}: {bad}"
    return f"{part.path} ({part.describe()}): {exc}"


def encode_part(encoder: Encoder, part: Part, config: ShardConfig, directory: str) -> ShardRecord:
    """Read a part, encode its sentences, write its shard (vectors, row table, record).

    The vectors stream into a temporary ``.npy`` beside the shard (``Encoder.encode(out=...)``);
    every file is renamed into place once whole, the record last.

    Raises:
        DataError: the part's input cannot be read or the encoder refuses a sentence; the
            message names the input file and line (or row, or XML sentence).
    """
    started = time.perf_counter()
    sentences = read_part(part, config.text_column)
    if config.keep == "instances":
        keep = [sorted({i.index for i in s.instances}) for _, s in sentences]
    else:
        keep = [list(range(len(s.words))) for _, s in sentences]
    encoded = [i for i, positions in enumerate(keep) if positions]  # sentences with rows
    layers = encoder.check_layers(config.layers)
    paths = shard_paths(directory, part.name)
    with atomic_path(paths.vectors, suffix=".npy") as tmp:
        if encoded:
            try:
                emb = encoder.encode(
                    [list(sentences[i][1].words) for i in encoded],
                    layers=layers,
                    keep=[keep[i] for i in encoded] if config.keep != "all" else None,
                    out=tmp,
                    store_dtype=config.dtype,
                    progress=False,
                )
            except WorkbenchError as exc:
                raise DataError(_culprit(part, sentences, exc)) from exc
            emb.sentence_index = np.asarray(encoded, dtype=np.int64)[emb.sentence_index]
            notes = tuple(emb.notes)
            shape = tuple(int(v) for v in emb.vectors.shape)
        else:  # nothing to encode (blank lines only, no instances): an empty shard
            shape = (0, len(layers), encoder.dim)
            np.save(tmp, np.zeros(shape, dtype=config.dtype))
            emb, notes = None, ()
        vectors_sha256 = sha256_file(tmp)
    if emb is not None:
        table = row_table(part.name, part.input, sentences, emb)
    else:
        table = ROW_SCHEMA.empty_table()
    write_table(paths.table, table)
    record = ShardRecord(
        name=part.name,
        input=part.input,
        start=part.start,
        stop=part.stop,
        input_sha256=part.input_sha256,
        rows=int(shape[0]),
        sentences=len(sentences),
        shape=(int(shape[0]), int(shape[1]), int(shape[2])),
        vectors_sha256=vectors_sha256,
        table_sha256=sha256_file(paths.table),
        vectors_bytes=paths.vectors.stat().st_size,
        table_bytes=paths.table.stat().st_size,
        device=str(encoder.device),
        compute_dtype=encoder.dtype_name,
        seconds=round(time.perf_counter() - started, 3),
        notes=notes,
    )
    write_record(paths.record, record)
    return record


class ShardWorker:
    """A Ray Data actor holding one encoder (see the module docstring).

    Args:
        config: the job's :class:`ShardConfig` as JSON (:func:`config_to_json`).
        directory: the output directory (reachable from every node at this path).
        fingerprint: the model fingerprint the driver saw; an actor whose model differs
            (another copy of the files on its node) refuses every part.
        device: torch device (None: cuda when the actor has a GPU, else cpu).
        threads: CPU threads of ONNX Runtime or torch (the CPUs Ray reserved for the actor).
    """

    def __init__(
        self,
        config: str,
        directory: str,
        fingerprint: str,
        device: str | None = None,
        threads: int = 1,
    ) -> None:
        self.config = config_from_json(config)
        self.directory = directory
        self.failure = ""
        try:
            os.environ["WORKBENCH_THREADS"] = str(max(1, int(threads)))  # ONNX Runtime's
            self.encoder: Encoder | None = make_encoder(self.config, device)
            if self.encoder.backend.name == "torch":
                import torch

                torch.set_num_threads(max(1, int(threads)))
            if self.encoder.fingerprint != fingerprint:
                self.failure = (
                    f"the worker's model has fingerprint {self.encoder.fingerprint}, the job's "
                    f"{fingerprint}: every node needs the same model files"
                )
        except WorkbenchError as exc:
            self.encoder, self.failure = None, f"the worker cannot load the model: {exc}"

    def __call__(self, batch: dict[str, Any]) -> dict[str, list[Any]]:
        """Turn each part of ``batch["part"]`` into a shard; one result row per part."""
        rows = [self.run(Part.from_json(str(text))) for text in batch["part"]]
        return {c: [r[c] for r in rows] for c in RESULT_COLUMNS}

    def run(self, part: Part) -> dict[str, Any]:
        """One part -> its result row (``ok`` False and ``error`` set when it failed)."""
        started = time.perf_counter()
        result: dict[str, Any] = {"shard": part.name, "items": part.n_items}
        try:
            if self.failure or self.encoder is None:
                raise DataError(self.failure)
            record = encode_part(self.encoder, part, self.config, self.directory)
            result.update(ok=True, error="", rows=record.rows, sentences=record.sentences)
        except WorkbenchError as exc:
            result.update(ok=False, error=f"shard {part.name}: {exc}", rows=0, sentences=0)
        except Exception as exc:  # any failure of one part is reported, not fatal to the job
            where = f"{part.path} ({part.describe()})"
            message = f"shard {part.name}: {where}: {type(exc).__name__}: {exc}"
            result.update(ok=False, error=message, rows=0, sentences=0)
        result["seconds"] = time.perf_counter() - started
        return result
