"""Saving and loading a :class:`~workbench.wsd.index.SenseIndex` as a directory.

Layout: ``meta.json`` (format version, config, encoder identity, training provenance, counts),
``senses.npz`` (sense keys, L2-normalised rows, how each row got its vector, occurrence counts)
and, for an index with a post-processor, that post-processor's own ``.npz`` + ``.json``. Writes
go to a temporary directory renamed into place, so a reader never sees half an index.

A model directory may carry its own index in ``<model dir>/sense_index`` (:data:`MODEL_INDEX`):
a WSD bi-encoder (:mod:`workbench.finetune.wsd`) saves there the gloss vectors of its trained
gloss encoder, and :func:`model_index` finds them for the encoder loaded from that directory.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
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
#: Where a model directory keeps the sense index that belongs to it.
MODEL_INDEX = "sense_index"


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


def load_index(
    path: str | os.PathLike,
    encoder: Encoder | LayerwiseEmbeddings | EncoderInfo | None = None,
    layers: str | None = None,
) -> SenseIndex:
    """Read an index written by :func:`save_index`; refuse it (MismatchError) if ``encoder`` or
    ``layers`` differ from the ones it was built with."""
    path = Path(path)
    try:
        meta = json.loads((path / "meta.json").read_text(encoding="utf-8"))
        with np.load(path / "senses.npz", allow_pickle=False) as data:
            arrays = {k: data[k] for k in ("keys", "vectors", "origin", "counts")}
    except (OSError, KeyError, ValueError) as exc:
        raise DataError(f"{path} is not a workbench sense index ({exc})") from exc
    if meta.get("format") != FORMAT_VERSION:
        raise DataError(f"{path} has index format {meta.get('format')}, not {FORMAT_VERSION}")
    training = meta["training"]
    training["restricted_to"] = tuple(training.get("restricted_to", ()))
    index = SenseIndex(SenseIndexConfig(**meta["config"]))
    index.encoder_ = EncoderInfo(**meta["encoder"])
    index.training_ = TrainingInfo(**training)
    index.postprocessor_ = None
    if index.config.postprocess != "none":
        index.postprocessor_ = load_postprocessor(path / "postprocessor")
    keys = tuple(arrays["keys"].tolist())
    index.set_rows(keys, arrays["vectors"], arrays["origin"], arrays["counts"])
    if encoder is not None:
        index.check_encoder(encoder, layers)
    return index


def model_index(encoder: Encoder) -> SenseIndex | None:
    """The sense index saved in the encoder's own model directory (a trained WSD bi-encoder's
    gloss index, ``<model dir>/sense_index``), checked against the encoder; None without one.

    Raises:
        MismatchError: the index there was built with other weights or another pooling.
    """
    path = model_index_path(encoder.source.location if encoder.source.is_local else None)
    return None if path is None else load_index(path, encoder=encoder)


def model_index_path(model: str | os.PathLike | None) -> Path | None:
    """``<model>/sense_index`` when ``model`` is a model directory that holds a sense index
    (checked without loading anything), else None."""
    if model is None:
        return None
    path = Path(model).expanduser() / MODEL_INDEX
    return path if (path / "meta.json").is_file() else None
