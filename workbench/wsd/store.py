"""Saving and loading a :class:`~workbench.wsd.index.SenseIndex` as a directory.

Layout: ``meta.json`` (format version, config, encoder identity, training provenance, counts),
``senses.npz`` (sense keys, L2-normalised rows, how each row got its vector, occurrence counts)
and, for an index with a correction, that correction's own ``.npz`` + ``.json``. Writes
go to a temporary directory that is then swapped into place whole
(:func:`workbench.outputs.replace_directory`), so a reader never sees half an index. An index
folder is a workbench folder of kind :data:`INDEX_KIND` (:mod:`workbench.outputs`): an index is
saved into a new or empty folder, or over an index (the workbench's, holding nothing else);
any other folder is refused and left as it is.
"""

from __future__ import annotations

import dataclasses
import json
import os
import zipfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np

from workbench.errors import DataError, OutputError
from workbench.fileio import check_writable, remove_path, temporary_path
from workbench.geometry.correction import saved_paths
from workbench.geometry.corrections import load_correction
from workbench.limits import check_finite, check_npz, read_json
from workbench.outputs import (
    DirectoryState,
    claim_directory,
    mark_directory,
    record,
    replace_directory,
)
from workbench.wsd.config import EncoderInfo, SenseIndexConfig, TrainingInfo
from workbench.wsd.index import ORIGINS, SenseIndex

FORMAT_VERSION = 1


#: The kind of a sense-index folder in its ledger (:mod:`workbench.outputs`).
INDEX_KIND = "sense-index"
#: The stem of a saved index's fitted correction (``correction.npz`` + ``correction.json``).
CORRECTION_STEM = "correction"
#: Its stem in indexes saved before the workbench called it a correction: still read.
FORMER_CORRECTION_STEM = "postprocessor"
#: Every file a saved index may hold.
INDEX_FILES = (
    "meta.json", "senses.npz",
    *(f"{stem}.{ext}" for stem in (CORRECTION_STEM, FORMER_CORRECTION_STEM)
      for ext in ("npz", "json")),
)  # fmt: skip


def check_index_output(path: str | os.PathLike) -> DirectoryState:
    """Check, before any work, that an index may be saved at ``path``: a new or empty folder,
    or a sense index the workbench saved there, as its ledger says (which is replaced whole;
    a folder whose files only look like an index, or one saved before the ledgers, is not
    ours and is refused); what is there.

    Raises:
        OutputError: a file, a folder holding anything else (left as it is), or a place where
            the new index cannot be written (it is made beside ``path``, then swapped in).
    """
    state = claim_directory(path, INDEX_KIND)
    try:
        check_writable(temporary_path(Path(path)))
    except OutputError as exc:
        cause = exc.__cause__
        reason = cause.strerror if isinstance(cause, OSError) and cause.strerror else str(exc)
        raise OutputError(f"cannot write the sense index {path}: {reason}") from exc
    return state


def save_index(index: SenseIndex, path: str | os.PathLike) -> Path:
    """Write the index to directory ``path`` (``meta.json``, ``senses.npz`` and the
    correction's own files), whole: an index already there is replaced in one step, and
    a folder holding anything else is refused (:func:`check_index_output`).

    Raises:
        OutputError: ``path`` may not be replaced, or cannot be written.
    """
    path = Path(path)
    check_index_output(path)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = temporary_path(path)
        tmp.mkdir()
    except OSError as exc:
        raise OutputError(f"cannot write {path}: {exc.strerror or exc}") from exc
    try:
        np.savez(
            tmp / "senses.npz",
            keys=np.array(index.keys_, dtype=str),
            vectors=index.vectors_,
            origin=index.origin_,
            counts=index.counts_,
        )
        if index.correction_ is not None:
            index.correction_.save(tmp / CORRECTION_STEM)
        meta = {"format": FORMAT_VERSION, **index.summary()}
        (tmp / "meta.json").write_text(json.dumps(meta, indent=2) + "\n", encoding="utf-8")
        mark_directory(tmp, INDEX_KIND)
        replace_directory(tmp, path)
    except BaseException:
        remove_path(tmp)
        raise
    record(path)  # the folder it is in lists it
    return path


#: The arrays of ``senses.npz``; the vectors are by far the largest (206,949 x 384 float32,
#: 318 MB, for an index over all of WordNet).
ARRAYS = ("keys", "vectors", "origin", "counts")


@dataclasses.dataclass(frozen=True)
class IndexSenses:
    """What a saved index says about its senses, without its vectors: its training, its sense
    keys and how many training occurrences each has (0: a propagated or gloss row)."""

    training: TrainingInfo
    keys: tuple[str, ...]
    counts: np.ndarray


def _read(path: Path, arrays: tuple[str, ...]) -> tuple[dict, TrainingInfo, dict[str, np.ndarray]]:
    """``meta.json`` (checked), its training and the named arrays of an index directory."""
    try:  # a damaged file of any kind (truncated zip, meta.json of the wrong shape) is refused
        try:  # a regular file of a sane size; headers against sizes; finite numbers
            meta = read_json(path / "meta.json", "meta.json")
            check_npz(path / "senses.npz", "senses.npz")
            with np.load(path / "senses.npz", allow_pickle=False) as data:
                read = {k: data[k] for k in arrays}  # a member is read only when asked for
            for name, array in read.items():
                check_finite(array, f"senses.npz: {name}")
        except DataError as exc:
            raise ValueError(str(exc)) from exc
        if not isinstance(meta, dict):
            raise ValueError(f"meta.json holds a {type(meta).__name__}, not an object")
        if meta.get("format") != FORMAT_VERSION:
            raise DataError(f"{path} has index format {meta.get('format')}, not {FORMAT_VERSION}")
        training = dict(meta["training"])
        training["restricted_to"] = tuple(training.get("restricted_to", ()))
        return meta, TrainingInfo(**training), read
    except (OSError, KeyError, ValueError, TypeError, EOFError, zipfile.BadZipFile) as exc:
        raise DataError(f"{path} is not a workbench sense index ({exc})") from exc


def rows_problem(
    arrays: dict[str, np.ndarray],
    encoder: EncoderInfo,
    config: SenseIndexConfig,
    meta: Mapping[str, Any] | None = None,
) -> str | None:
    """Why the arrays of ``senses.npz`` cannot be the rows of an index of this encoder and
    config, in words; None when they can: one key, vector, origin and count per row, vectors
    ``(n, dim)`` (``2 * dim`` with gloss concatenation) of the encoder's width, origins of
    :data:`~workbench.wsd.index.ORIGINS`, counts whole and 0 and up, and as many rows (of each
    origin) as ``meta`` (``meta.json``: ``rows``, ``rows_by_origin``) says where it says."""
    keys, vectors = arrays["keys"], arrays["vectors"]
    origin, counts = arrays["origin"], arrays["counts"]
    if not isinstance(encoder.dim, int) or isinstance(encoder.dim, bool) or encoder.dim < 1:
        return f"its encoder's dim is {encoder.dim!r}"
    width = encoder.dim * (2 if config.gloss == "concat" else 1)
    if vectors.ndim != 2 or vectors.shape[1] != width or vectors.dtype.kind != "f":
        return f"vectors of shape {vectors.shape} ({vectors.dtype}), not (n, {width}) floats"
    n = len(vectors)
    if (
        keys.ndim != 1
        or origin.ndim != 1
        or counts.ndim != 1
        or not (len(keys) == len(origin) == len(counts) == n)
    ):
        return f"{len(keys)} keys, {len(origin)} origins and {len(counts)} counts for {n} vectors"
    if keys.dtype.kind != "U" or origin.dtype.kind not in "iu" or counts.dtype.kind not in "iu":
        return (
            f"keys, origins or counts of the wrong kind ({keys.dtype}, {origin.dtype}, "
            f"{counts.dtype})"
        )
    if n and (origin.min() < 0 or origin.max() >= len(ORIGINS)):
        return f"an origin outside 0 to {len(ORIGINS) - 1}"
    if n and counts.min() < 0:
        return f"a negative occurrence count ({int(counts.min())})"
    meta = meta or {}
    if "rows" in meta and (isinstance(meta["rows"], bool) or meta["rows"] != n):
        return f"{n} rows, where meta.json says {json.dumps(meta['rows'])[:40]}"
    declared = meta.get("rows_by_origin")
    if declared is not None:
        held = dict(zip(ORIGINS, np.bincount(origin, minlength=len(ORIGINS)).tolist()))
        if declared != held:
            return f"rows by origin {held}, where meta.json says {json.dumps(declared)[:120]}"
    return None


def load_index_senses(path: str | os.PathLike) -> IndexSenses:
    """The training, sense keys and counts of the index saved at ``path``, its vectors left
    unread.

    Raises:
        DataError: not a readable workbench sense index.
    """
    path = Path(path)
    _, training, arrays = _read(path, ("keys", "counts"))
    return IndexSenses(training, tuple(arrays["keys"].tolist()), arrays["counts"])


def load_index(
    path: str | os.PathLike, info: EncoderInfo | None = None, layers: str | None = None
) -> SenseIndex:
    """Read an index written by :func:`save_index`; refuse it (MismatchError) if the encoder
    ``info`` describes (``EncoderInfo.of(encoder)``) or ``layers`` differ from the ones it was
    built with.

    Raises:
        DataError: not a readable index; a correction that disagrees with the config (another
            kind, layer spec or encoder; one present where the config says ``none``); rows
            that do not fit ``meta.json`` (:func:`rows_problem`).
    """
    path = Path(path)
    meta, training, arrays = _read(path, ARRAYS)
    try:
        index = SenseIndex(SenseIndexConfig.from_dict(meta["config"]))
        index.encoder_ = EncoderInfo(**meta["encoder"])
    except (KeyError, ValueError, TypeError) as exc:
        raise DataError(f"{path} is not a workbench sense index ({exc})") from exc
    index.training_ = training
    index.correction_ = None
    if index.config.correction == "none":
        # rows built through a correction answer wrongly when queries go in uncorrected
        left = [name for stem in (CORRECTION_STEM, FORMER_CORRECTION_STEM)
                for name in (f"{stem}.json", f"{stem}.npz") if (path / name).exists()]  # fmt: skip
        if left:
            raise DataError(
                f"{path} holds a saved correction ({', '.join(left)}) where its meta.json says "
                "correction 'none': its rows and config disagree; train the index again "
                "(workbench wsd train)"
            )
    else:
        saved = path / CORRECTION_STEM
        if not saved.with_suffix(".json").is_file():
            saved = path / FORMER_CORRECTION_STEM
        correction = load_correction(saved)
        problem = index.correction_problem(correction)
        if problem is not None:
            raise DataError(
                f"{saved_paths(saved)[1]} does not belong to the index in {path}: {problem}; "
                "train the index again (workbench wsd train)"
            )
        index.correction_ = correction
    problem = rows_problem(arrays, index.encoder_, index.config, meta)
    if problem is not None:
        raise DataError(f"{path / 'senses.npz'} does not fit its meta.json: {problem}")
    keys = tuple(arrays["keys"].tolist())
    index.set_rows(keys, arrays["vectors"], arrays["origin"], arrays["counts"])
    if info is not None:
        index.check_encoder(info, layers)
    return index
