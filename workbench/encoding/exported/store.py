"""Exported models on disk: one folder per model fingerprint, dtype and opset, complete or
absent, checked before it is trusted.

``<cache>/onnx/<fingerprint>-<dtype>-opset<N>-v<FORMAT>/`` holds

* ``model.onnx``: the model's graph, inputs ``input_ids`` and ``attention_mask``
  ``(batch, seq)`` int64, one output ``hidden_states`` ``(n_layers + 1, batch, seq, dim)``;
* ``tokenizer.json``: the model's fast tokenizer exactly as ``transformers`` set it up;
* ``export.json``, written last: the model's facts the encoder needs without loading it
  (layers, width, input limit, special tokens, parameters), what was checked at export time
  (the probe's largest difference against the torch model, and the tolerance), and the SHA-256
  of the two files above.

A folder is written under a temporary name and renamed whole (:func:`write_export`); reading it
(:func:`read_export`) checks the record's identity against what was asked (another model, dtype,
opset or format is never read) and both files' digests, so a truncated or tampered export is
refused, removed and made again. A model whose export was refused (its probe disagreed with
torch) has ``refused.json`` in place of the folder, so every later process goes straight to
torch and says why (:func:`read_refusal`).

Example::

    folder = export_folder("f412054b280245dd", "float32", 17)
    record = read_export(folder, "f412054b280245dd", "float32", 17)   # None: absent
    record.n_layers, record.dim                                         # (6, 384)
"""

from __future__ import annotations

import importlib.metadata
import json
import os
from dataclasses import asdict, dataclass, fields
from pathlib import Path
from typing import Any

from workbench.encoding.digests import file_sha256
from workbench.encoding.models import DIGESTS, default_cache_dir
from workbench.errors import CacheError, DataError, LimitError
from workbench.fileio import atomic_path, remove_path, sha256_file, temporary_path
from workbench.limits import read_json

#: The layout of an export folder; a change makes every earlier export absent.
FORMAT = 1
#: The ONNX opset exports are made with.
OPSET = 17
MODEL_FILE = "model.onnx"
TOKENIZER_FILE = "tokenizer.json"
RECORD_FILE = "export.json"
REFUSAL_FILE = "refused.json"


@dataclass(frozen=True)
class ModelFacts:
    """What the encoder reads off the torch model and an export keeps, so that the model answers
    without being loaded.

    Attributes:
        fingerprint: the model's content fingerprint.
        n_layers, dim: hidden layers and width; the graph gives ``n_layers + 1`` states.
        max_length: the longest input the model takes (special tokens included).
        head, tail, pad: the special token ids around every window, and the padding id.
        unk: the unknown token's id (None: the tokenizer has none).
        model_max_length: the tokenizer's own input limit.
        architecture, parameters: the torch model's class name and parameter count.
    """

    fingerprint: str
    n_layers: int
    dim: int
    max_length: int
    head: tuple[int, ...]
    tail: tuple[int, ...]
    pad: int
    unk: int | None
    model_max_length: int
    architecture: str
    parameters: int


@dataclass(frozen=True)
class ExportRecord(ModelFacts):
    """What ``export.json`` says: the model's facts (:class:`ModelFacts`), the export's identity
    and the checks.

    Attributes:
        dtype, opset, format: what the export is (with the fingerprint, its folder's name).
        probe_error, tolerance: the probe's largest difference against torch, relative to
            the largest value of each hidden state, and the most that was accepted.
        model_sha256, tokenizer_sha256: the two files' digests.
        versions: torch, transformers, onnx and onnxruntime at export time.
    """

    dtype: str
    opset: int
    format: int
    probe_error: float
    tolerance: float
    model_sha256: str
    tokenizer_sha256: str
    versions: dict[str, str]

    @classmethod
    def from_dict(cls, data: Any) -> ExportRecord:
        """Read a record; raises :class:`CacheError` for anything that is not one."""
        names = {f.name for f in fields(cls)}
        if not isinstance(data, dict) or not names <= set(data):
            raise CacheError("not an export record (fields missing)")
        try:
            values = {k: data[k] for k in names}
            values["head"] = tuple(int(x) for x in values["head"])
            values["tail"] = tuple(int(x) for x in values["tail"])
            for key in ("opset", "format", "n_layers", "dim", "max_length", "pad", "parameters"):
                values[key] = int(values[key])
            values["model_max_length"] = int(min(float(values["model_max_length"]), 1e9))
            values["unk"] = None if values["unk"] is None else int(values["unk"])
            values["probe_error"] = float(values["probe_error"])
            values["tolerance"] = float(values["tolerance"])
            values["versions"] = {str(k): str(v) for k, v in dict(values["versions"]).items()}
        except (TypeError, ValueError) as exc:
            raise CacheError(f"not an export record ({exc})") from exc
        record = cls(**values)
        if min(record.n_layers, record.dim, record.max_length) < 1 or record.pad < 0:
            raise CacheError("not an export record (sizes out of range)")
        return record


def versions() -> dict[str, str]:
    """The versions of the packages an export depends on (read without importing them)."""
    out = {}
    for name in ("torch", "transformers", "onnx", "onnxruntime"):
        try:
            out[name] = importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            out[name] = "absent"
    return out


def exports_dir() -> Path:
    """Where exports live: ``<cache>/onnx``."""
    return default_cache_dir() / "onnx"


def export_folder(fingerprint: str, dtype: str = "float32", opset: int = OPSET) -> Path:
    """The folder of the export of model ``fingerprint`` in ``dtype`` at ``opset``."""
    if not fingerprint.isalnum():
        raise CacheError(f"'{fingerprint}' is not a model fingerprint")
    return exports_dir() / f"{fingerprint}-{dtype}-opset{opset}-v{FORMAT}"


def read_export(folder: Path, fingerprint: str, dtype: str, opset: int) -> ExportRecord | None:
    """The export in ``folder`` if it is complete, of what was asked, and its files are intact;
    None when there is none (no ``export.json``: absent, or still being written elsewhere).

    Raises:
        CacheError: the folder holds an export of something else, or a file is missing,
            truncated or changed since it was recorded (the caller removes it and makes it
            again).
        LimitError: ``export.json`` is past the JSON limit (``WORKBENCH_LIMIT_JSON_BYTES``):
            refused for this run, the export kept.
    """
    record_path = folder / RECORD_FILE
    if not record_path.is_file():
        return None
    try:
        data = read_json(record_path)
    except LimitError:
        raise  # a lowered limit: refused for this run, never taken for damage
    except DataError as exc:
        raise CacheError(str(exc)) from exc
    record = ExportRecord.from_dict(data)
    asked = (fingerprint, dtype, opset, FORMAT)
    found = (record.fingerprint, record.dtype, record.opset, record.format)
    if found != asked:
        raise CacheError(f"{folder} holds the export of {found}, not of {asked}")
    for name, digest in (
        (MODEL_FILE, record.model_sha256),
        (TOKENIZER_FILE, record.tokenizer_sha256),
    ):
        path = folder / name
        try:
            same = path.is_file() and file_sha256(path, default_cache_dir() / DIGESTS) == digest
        except OSError:
            same = False
        if not same:
            raise CacheError(f"{path} is missing or is not the file its export recorded")
    return record


def write_export(
    folder: Path, record: ExportRecord, model_file: Path, tokenizer_text: str
) -> ExportRecord:
    """Put an export in place whole: ``model_file`` (moved) and the tokenizer beside it in a
    temporary folder, then ``export.json`` (with both digests), then the folder renamed to
    ``folder``. Where another process finished the same export first, its folder is kept.

    Returns:
        the record as written (digests filled in).
    """
    folder.parent.mkdir(parents=True, exist_ok=True)
    tmp = temporary_path(folder)
    try:
        tmp.mkdir()
        os.replace(model_file, tmp / MODEL_FILE)
        (tmp / TOKENIZER_FILE).write_text(tokenizer_text, encoding="utf-8")
        done = ExportRecord(
            **{
                **asdict(record),
                "model_sha256": sha256_file(tmp / MODEL_FILE),
                "tokenizer_sha256": sha256_file(tmp / TOKENIZER_FILE),
            }
        )
        (tmp / RECORD_FILE).write_text(json.dumps(asdict(done), indent=1), encoding="utf-8")
        put_in_place(tmp, folder)
    finally:
        remove_path(tmp)
    return done


def put_in_place(staged: Path, folder: Path) -> None:
    """Rename the finished export ``staged`` to ``folder``. Where another process put a finished
    export there first, that one stays; a folder there without its record (never a state of a
    writer, who renames whole folders) is removed first."""
    try:
        os.rename(staged, folder)
    except OSError:
        if (folder / RECORD_FILE).is_file():
            return
        remove_path(folder)
        os.rename(staged, folder)


def refusal_path(fingerprint: str, dtype: str = "float32", opset: int = OPSET) -> Path:
    """Where the refusal of model ``fingerprint``'s export is recorded."""
    folder = export_folder(fingerprint, dtype, opset)
    return folder.with_name(f"{folder.name}.{REFUSAL_FILE}")


def write_refusal(
    fingerprint: str, dtype: str, opset: int, reason: str, versions: dict[str, str]
) -> None:
    """Record that this model's export was refused, why, and with which package ``versions``
    (another torch, transformers or ONNX Runtime tries again)."""
    with atomic_path(refusal_path(fingerprint, dtype, opset)) as tmp:
        tmp.write_text(json.dumps({"reason": reason, "versions": versions}), encoding="utf-8")


def read_refusal(
    fingerprint: str, versions: dict[str, str], dtype: str = "float32", opset: int = OPSET
) -> str | None:
    """Why this model's export was refused with these package ``versions``, or None when it
    was not (or was with other versions, or the record cannot be read: then try again)."""
    path = refusal_path(fingerprint, dtype, opset)
    if not path.is_file():
        return None
    try:
        data = read_json(path, error=CacheError)
    except CacheError:
        return None
    if not isinstance(data, dict) or data.get("versions") != versions:
        return None
    return str(data.get("reason", "unrecorded"))


@dataclass(frozen=True)
class ExportEntry:
    """One export folder (or refusal) found in the cache, for ``workbench cache list``.

    Attributes:
        name: the folder's (or refusal file's) name.
        bytes: its size on disk.
        record: the export's record where ``export.json`` reads as one (files not re-hashed).
        problem: what is wrong with it, or why the export was refused ("" for a good one).
    """

    name: str
    bytes: int
    record: ExportRecord | None
    problem: str = ""


def list_exports() -> list[ExportEntry]:
    """Every export folder and refusal under :func:`exports_dir`, by name; a folder whose
    record cannot be read is listed with the problem (nothing is removed or hashed here)."""
    root = exports_dir()
    if not root.is_dir():
        return []
    found = []
    for path in sorted(root.iterdir()):
        if path.name.startswith("."):  # an export being made, or a stale temporary
            continue
        if path.is_file() and path.name.endswith(REFUSAL_FILE):
            try:
                data = read_json(path, error=CacheError)
                reason = str(data.get("reason", "unrecorded")) if isinstance(data, dict) else ""
            except CacheError as exc:
                reason = str(exc)
            found.append(ExportEntry(path.name, path.stat().st_size, None, f"refused: {reason}"))
            continue
        if not path.is_dir() or path.is_symlink():
            continue
        size = sum(p.stat().st_size for p in path.iterdir() if p.is_file())
        try:
            record = ExportRecord.from_dict(read_json(path / RECORD_FILE, error=CacheError))
        except (CacheError, OSError) as exc:
            found.append(ExportEntry(path.name, size, None, f"no readable record ({exc})"))
            continue
        found.append(ExportEntry(path.name, size, record))
    return found
