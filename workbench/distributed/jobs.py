"""The sharded extraction job: plan the inputs, resume what is done, encode the rest on Ray
Data, record the result in the manifest.

:func:`embed_shards` is ``workbench embed INPUT... --engine ray --out DIR`` from Python:

1. check the inputs exist and ``DIR`` is new, empty, or a shard directory made with the same
   settings (another model, layers, pooling, dtype, ... is refused: MismatchError);
2. load the encoder once on the driver (CPU) for its identity: fingerprint, layers, width;
3. cut every input into parts of ``shard_size`` items (:mod:`workbench.distributed.inputs`);
   an input that cannot be read is reported at the end, the others go on;
4. keep the shards already complete (record present, files verified against their SHA-256,
   made from the same input content); delete damaged or stale ones and temporaries;
5. send the other parts through ``ray.data.from_items(parts).map_batches(ShardWorker, ...)``,
   a pool of actors each holding one encoder (one GPU each on a GPU cluster), each writing its
   shards into ``DIR``; print progress for the whole job (shards, rows, rows/s, ETA);
6. write ``manifest.json``: complete when every item of every input is in a verified shard.

A killed worker's part is retried by Ray Data on a new actor (its half-written file is deleted
when the job ends); a killed driver loses the parts in flight only: a rerun with the same
arguments picks up from the shards on disk. Only one job writes to a directory at a time (an
advisory lock on ``DIR/.lock``).

Example::

    result = embed_shards(["wiki-000.txt", "wiki-001.txt"], "shards/",
                          ShardConfig(model="bert-base-uncased", dtype="float16"),
                          ClusterConfig(address="auto"))
    result.manifest.rows, result.computed, result.skipped
"""

from __future__ import annotations

import fcntl
import os
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from workbench.distributed.cluster import Pool, ray_session, reach, remote_address, size_pool
from workbench.distributed.config import ClusterConfig, ShardConfig
from workbench.distributed.inputs import InputPlan, Part, input_kind, plan_input
from workbench.distributed.progress import JobProgress, printer
from workbench.distributed.shards import (
    MANIFEST,
    Manifest,
    ShardRecord,
    Verify,
    check_settings,
    read_manifest,
    read_record,
    remove_shard,
    remove_temporaries,
    shard_names_on_disk,
    shard_paths,
    verify_shard,
    write_manifest,
)
from workbench.distributed.worker import ShardWorker, config_to_json, make_encoder
from workbench.encoding.encoder import Encoder
from workbench.errors import DataError, InputError, MismatchError
from workbench.fileio import input_problem, real_path

ProgressArg = bool | Callable[[JobProgress], None]
LOCK = ".lock"


@dataclass(frozen=True)
class JobResult:
    """What a run of :func:`embed_shards` did.

    Attributes:
        directory: the output directory; manifest: its manifest after the run.
        computed: shards written in this run; skipped: complete and verified before it;
        failed: parts that failed in this run; workers: actors used (0 if none was needed);
        seconds: wall time of the run.
    """

    directory: Path
    manifest: Manifest
    computed: int
    skipped: int
    failed: int
    workers: int
    seconds: float


def job_settings(encoder: Encoder, config: ShardConfig) -> dict[str, Any]:
    """Everything that changes the shards, as stored in the manifest (JSON values)."""
    return {
        "model": encoder.name,
        "fingerprint": encoder.fingerprint,
        "n_hidden": encoder.n_hidden,
        "dim": encoder.dim,
        "layers": list(encoder.check_layers(config.layers)),
        "pooling": config.pooling,
        "dtype": config.dtype,
        "keep": config.keep,
        "shard_size": config.shard_size,
        "text_column": config.text_column,
        "compute_dtype": config.compute_dtype,
        "max_length": encoder.max_length,
        "stride": config.stride,
    }


def check_inputs(inputs: Sequence[str | os.PathLike[str]]) -> list[Path]:
    """The inputs as absolute paths.

    Raises:
        InputError: no input, an input that does not exist or is not a file, one given twice.
    """
    if not inputs:
        raise InputError("give at least one input file")
    paths = [real_path(p) for p in inputs]
    for given in inputs:
        problem = input_problem(given)
        if problem is not None:
            raise InputError(f"input {given} {problem}")
    seen: set[Path] = set()
    for path in paths:
        if path in seen:
            raise InputError(f"input {path} is given twice")
        seen.add(path)
    return paths


def check_directory(directory: Path) -> Manifest | None:
    """The manifest of an existing shard directory, None for a new or empty one.

    Raises:
        InputError: ``directory`` is a file, or a non-empty directory without a manifest (its
            files are not ours to overwrite).
        DataError: a manifest that cannot be read.
    """
    if directory.exists() and not directory.is_dir():
        raise InputError(f"--out {directory} is a file; give a directory for the shards")
    manifest = read_manifest(directory) if directory.is_dir() else None
    if manifest is None and directory.is_dir():
        others = [p.name for p in directory.iterdir() if p.name != LOCK]
        if others:
            raise InputError(
                f"--out {directory} is not empty and holds no {MANIFEST} "
                f"({', '.join(sorted(others)[:3])}, ...): give a new or empty directory"
            )
    return manifest


@contextmanager
def directory_lock(directory: Path) -> Iterator[None]:
    """Hold an exclusive advisory lock on ``directory`` (released when the process ends).

    Raises:
        InputError: another job holds it.
    """
    with open(directory / LOCK, "a") as fh:
        try:
            fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise InputError(f"another job is writing to {directory}; wait for it to end") from None
        try:
            yield
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)


def _plan(paths: list[Path], config: ShardConfig) -> tuple[list[InputPlan | None], list[str]]:
    plans: list[InputPlan | None] = []
    problems = []
    for i, path in enumerate(paths):
        try:
            plans.append(plan_input(path, i, config.shard_size, config.text_column))
        except DataError as exc:
            plans.append(None)
            problems.append(str(exc))
    return plans, problems


def _input_entries(paths: list[Path], plans: list[InputPlan | None]) -> tuple[dict, ...]:
    return tuple(
        {"path": str(path), "kind": input_kind(path), "sha256": p.sha256 if p else "",
         "items": p.n_items if p else 0}
        for path, p in zip(paths, plans)
    )  # fmt: skip


def _same_part(record: ShardRecord | None, part: Part) -> bool:
    return (
        record is not None
        and (record.input, record.start, record.stop) == (part.input, part.start, part.stop)
        and record.input_sha256 == part.input_sha256
    )


def _resume(
    directory: Path, parts: list[Part], verify: Verify
) -> tuple[dict[str, ShardRecord], list[Part]]:
    """Split the parts into complete, verified shards and parts still to compute (deleting
    the files of damaged or stale shards)."""
    records = {p.name: read_record(shard_paths(directory, p.name).record) for p in parts}
    candidates = [p for p in parts if _same_part(records[p.name], p)]

    def check(part: Part) -> str:
        record = records[part.name]
        return verify_shard(directory, record, verify) if record is not None else "no record"

    with ThreadPoolExecutor(max_workers=4) as pool:  # hashing is I/O and C code: threads overlap
        problems = dict(zip((p.name for p in candidates), pool.map(check, candidates)))
    done: dict[str, ShardRecord] = {}
    todo = []
    for part in parts:
        record = records[part.name]
        if part.name in problems and not problems[part.name] and record is not None:
            done[part.name] = record
            continue
        if problems.get(part.name):
            print(f"embed: shard {part.name}: {problems[part.name]}; recomputing", file=sys.stderr)
        remove_shard(directory, part.name)
        todo.append(part)
    return done, todo


def _run_parts(
    todo: list[Part],
    directory: Path,
    config: ShardConfig,
    fingerprint: str,
    cluster: ClusterConfig,
    report: Callable[[JobProgress], None] | None,
) -> tuple[list[str], int]:
    """Encode ``todo`` on Ray Data; the error of every failed part, and the actors used."""
    failures: list[str] = []
    with ray_session(cluster) as ray:
        pool: Pool = size_pool(ray, cluster, len(todo))
        if report is not None:
            kind = f"{pool.gpus:g} GPU" if pool.gpus else f"{pool.cpus} CPU"
            print(f"embed: {len(todo)} shards to compute on {pool.workers} workers "
                  f"({kind} each)", file=sys.stderr, flush=True)  # fmt: skip
        context = ray.data.DataContext.get_current()
        context.enable_progress_bars = False  # our own line covers the whole job
        items = [{"part": part.to_json()} for part in todo]
        dataset = ray.data.from_items(items, override_num_blocks=len(items))
        results = dataset.map_batches(
            ShardWorker,
            batch_size=1,
            compute=ray.data.ActorPoolStrategy(size=pool.workers, max_tasks_in_flight_per_actor=1),
            num_cpus=pool.cpus,
            num_gpus=pool.gpus or None,
            fn_constructor_kwargs={
                "config": config_to_json(config),
                "directory": str(directory),
                "fingerprint": fingerprint,
                "device": pool.device,
                "threads": pool.cpus,
            },
        )
        status = JobProgress(len(todo), sum(p.n_items for p in todo))
        for row in results.iter_rows():
            status.add(int(row["items"]), int(row["rows"]), bool(row["ok"]))
            if not row["ok"]:
                failures.append(str(row["error"]))
            if report is not None:
                report(status)
    return failures, pool.workers


def embed_shards(
    inputs: Sequence[str | os.PathLike[str]],
    out: str | os.PathLike[str],
    config: ShardConfig | None = None,
    cluster: ClusterConfig | None = None,
    *,
    verify: Verify = "sha256",
    progress: ProgressArg = True,
) -> JobResult:
    """Encode ``inputs`` into shards in ``out`` on Ray (see the module docstring).

    Args:
        inputs: text files (one sentence per line), framework ``*.data.xml`` files, JSONL or
            Parquet files with a ``config.text_column`` (:mod:`workbench.distributed.inputs`).
        out: the output directory (new, empty, or one this job wrote before).
        config: what to compute (:class:`ShardConfig`).
        cluster: where to run (:class:`ClusterConfig`): a local Ray by default.
        verify: how existing shards are checked before they are kept: ``sha256`` (every byte)
            or ``size`` (file sizes only: fast on terabytes).
        progress: print the job's progress to stderr (True), or call this with a
            :class:`JobProgress` after each shard.

    Returns:
        A :class:`JobResult`.

    Raises:
        InputError: missing inputs, an ``out`` that is not ours, Ray missing or unreachable.
        MismatchError: ``out`` holds shards of another model or other settings or inputs.
        DataError: after the run, when inputs or parts failed (file and line named); every
            shard that did complete is kept and recorded, and a rerun does only the rest.
    """
    started = time.perf_counter()
    config = config or ShardConfig()
    cluster = cluster or ClusterConfig()
    paths = check_inputs(inputs)
    directory = real_path(out)
    existing = check_directory(directory)
    if remote_address(cluster.address):  # an unreachable cluster is said before anything is made
        reach(str(cluster.address), cluster.connect_timeout)
    encoder = make_encoder(config, device="cpu")  # identity only; the workers load their own
    settings = job_settings(encoder, config)
    del encoder
    if existing is not None:
        check_settings(directory, existing.settings, settings)
        before = [entry["path"] for entry in existing.inputs]
        if before != [str(p) for p in paths]:
            raise MismatchError(
                f"{directory} holds shards of other inputs ({len(before)} files: "
                f"{', '.join(Path(p).name for p in before[:3])}...): use another --out directory"
            )
    made = [d for d in (directory, *directory.parents) if not os.path.lexists(d)]
    directory.mkdir(parents=True, exist_ok=True)
    try:
        return _run_job(paths, directory, config, cluster, verify, progress, settings, started)
    except BaseException:
        if existing is None and not shard_names_on_disk(directory):
            _unmake(directory, made)  # a new job that did nothing leaves nothing behind
        raise


def _unmake(directory: Path, made: list[Path]) -> None:
    """Delete what a new job that completed no shard made: its manifest, its lock, the
    folders it created (the deepest first, each only if empty)."""
    for name in (MANIFEST, LOCK):
        (directory / name).unlink(missing_ok=True)
    remove_temporaries(directory)
    for folder in made:
        try:
            folder.rmdir()
        except OSError:
            break


def _run_job(
    paths: list[Path],
    directory: Path,
    config: ShardConfig,
    cluster: ClusterConfig,
    verify: Verify,
    progress: ProgressArg,
    settings: dict[str, Any],
    started: float,
) -> JobResult:
    """The locked part of :func:`embed_shards`: plan, resume, run, record."""
    report = printer() if progress is True else (progress or None)
    with directory_lock(directory):
        plans, problems = _plan(paths, config)
        entries = _input_entries(paths, plans)
        parts = [part for plan in plans if plan is not None for part in plan.parts]
        remove_temporaries(directory)
        planned = {p.name for p in parts}
        live = {f"{i:05d}" for i, plan in enumerate(plans) if plan is not None}
        for name in shard_names_on_disk(directory) - planned:
            if name.split("-")[0] in live:  # a shard of a readable input that no longer has it
                remove_shard(directory, name)
        done, todo = _resume(directory, parts, verify)
        write_manifest(directory, Manifest(settings, entries, _ordered(parts, done), False,
                                           tuple(problems)))  # fmt: skip
        if report is not None and done:
            print(f"embed: {len(done)} of {len(parts)} shards complete and verified already",
                  file=sys.stderr, flush=True)  # fmt: skip
        failures: list[str] = []
        workers = 0
        if todo:
            failures, workers = _run_parts(
                todo, directory, config, settings["fingerprint"], cluster, report
            )
            remove_temporaries(directory)  # of workers killed mid-write (retried elsewhere)
        final = {p.name: read_record(shard_paths(directory, p.name).record) for p in parts}
        records = {n: r for n, r in final.items() if r is not None}
        complete = not problems and not failures and len(records) == len(parts)
        manifest = Manifest(settings, entries, _ordered(parts, records), complete,
                            tuple(problems + failures))  # fmt: skip
        write_manifest(directory, manifest)
    result = JobResult(
        directory, manifest, len(todo) - len(failures), len(done), len(failures), workers,
        time.perf_counter() - started,
    )  # fmt: skip
    if manifest.problems:
        shown = "; ".join(manifest.problems[:3])
        more = f" (and {len(manifest.problems) - 3} more)" if len(manifest.problems) > 3 else ""
        raise DataError(
            f"{shown}{more}. {len(records)} of {len(parts)} shards are complete and kept in "
            f"{directory}; fix the input and rerun the same command to do the rest"
        )
    return result


def _ordered(parts: list[Part], records: dict[str, ShardRecord]) -> tuple[ShardRecord, ...]:
    return tuple(records[p.name] for p in parts if p.name in records)
