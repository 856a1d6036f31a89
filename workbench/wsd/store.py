"""Saving and loading a :class:`~workbench.wsd.index.SenseIndex` as a directory.

Layout: ``meta.json`` (format version, config, encoder identity, training provenance, counts),
``senses.npz`` (sense keys, L2-normalised rows, how each row got its vector, occurrence counts)
and, for an index with a post-processor, that post-processor's own ``.npz`` + ``.json``. Writes
go to a temporary directory renamed into place, so a reader never sees half an index.
"""

from __future__ import annotations

import dataclasses
import json
import os
import shutil
import tempfile
import zipfile
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from workbench.errors import DataError
from workbench.geometry.corrections import load_postprocessor
from workbench.wsd.config import EncoderInfo, SenseIndexConfig, TrainingInfo
from workbench.wsd.index import SenseIndex

if TYPE_CHECKING:
    from workbench.encoding.embeddings import LayerwiseEmbeddings
    from workbench.encoding.encoder import Encoder

FORMAT_VERSION = 1


def save_index(index: SenseIndex, path: str | os.PathLike) -> Path:
    """Write the index to directory ``path`` (``meta.json``, ``senses.npz`` and the
    post-processor's own files), atomically."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(dir=path.parent, prefix=f".{path.name}."))
    try:
        np.savez(
            tmp / "senses.npz",
            keys=np.array(index.keys_, dtype=str),
            vectors=index.vectors_,
            origin=index.origin_,
            counts=index.counts_,
        )
        if index.postprocessor_ is not None:
            index.postprocessor_.save(tmp / "postprocessor")
        meta = {"format": FORMAT_VERSION, **index.summary()}
        (tmp / "meta.json").write_text(json.dumps(meta, indent=2) + "\n", encoding="utf-8")
        if path.exists():
            shutil.rmtree(path)
        os.replace(tmp, path)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
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
        meta = json.loads((path / "meta.json").read_text(encoding="utf-8"))
        with np.load(path / "senses.npz", allow_pickle=False) as data:
            read = {k: data[k] for k in arrays}  # an npz member is read only when asked for
        if not isinstance(meta, dict):
            raise ValueError(f"meta.json holds a {type(meta).__name__}, not an object")
        if meta.get("format") != FORMAT_VERSION:
            raise DataError(f"{path} has index format {meta.get('format')}, not {FORMAT_VERSION}")
        training = dict(meta["training"])
        training["restricted_to"] = tuple(training.get("restricted_to", ()))
        return meta, TrainingInfo(**training), read
    except (OSError, KeyError, ValueError, TypeError, EOFError, zipfile.BadZipFile) as exc:
        raise DataError(f"{path} is not a workbench sense index ({exc})") from exc


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
    path: str | os.PathLike,
    encoder: Encoder | LayerwiseEmbeddings | EncoderInfo | None = None,
    layers: str | None = None,
) -> SenseIndex:
    """Read an index written by :func:`save_index`; refuse it (MismatchError) if ``encoder`` or
    ``layers`` differ from the ones it was built with."""
    path = Path(path)
    meta, training, arrays = _read(path, ARRAYS)
    try:
        index = SenseIndex(SenseIndexConfig(**meta["config"]))
        index.encoder_ = EncoderInfo(**meta["encoder"])
    except (KeyError, ValueError, TypeError) as exc:
        raise DataError(f"{path} is not a workbench sense index ({exc})") from exc
    index.training_ = training
    index.postprocessor_ = None
    if index.config.postprocess != "none":
        index.postprocessor_ = load_postprocessor(path / "postprocessor")
    keys = tuple(arrays["keys"].tolist())
    index.set_rows(keys, arrays["vectors"], arrays["origin"], arrays["counts"])
    if encoder is not None:
        index.check_encoder(encoder, layers)
    return index
