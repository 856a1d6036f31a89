"""Which backend answers for an encoder, and why: ONNX Runtime on a CPU where the model's export
exists or can be made, torch otherwise.

``auto`` (the default; ``$WORKBENCH_BACKEND`` sets it for a whole process) picks ONNX Runtime
when the model computes on the CPU in float32 with the default attention and no
``torch.compile``: from its export when one is on disk (:mod:`~workbench.encoding.exported.store`),
else by making one now (the model's first use on this machine, a newly trained model). Torch
answers on a GPU, in bfloat16 or float16, with ``compile`` or another attention kernel, for a
model whose export was refused (its probe disagreed), and where ONNX Runtime is not installed.
``onnx`` insists (an error where it cannot answer); ``torch`` never looks for an export.

``dtype="int8"`` asks for the int8 export (:mod:`~workbench.encoding.exported.quantize`, made
from the float32 one): only ONNX Runtime computes in int8, so where it cannot answer that is an
error, never a quiet fall back to another dtype.

Example::

    choice = choose_backend("auto", "cpu", "auto", source, compile=False, attention="auto")
    choice.name, choice.reason    # ('onnx', 'ONNX Runtime on the CPU, from the export in ...')
"""

from __future__ import annotations

import importlib.util
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from workbench.encoding.exported.store import (
    OPSET,
    ExportRecord,
    export_folder,
    read_export,
    read_refusal,
    versions,
)
from workbench.encoding.models import ModelSource, check_adapter, weights_fingerprint
from workbench.errors import CacheError, InputError, ModelLoadError
from workbench.fileio import remove_path

Backend = Literal["auto", "torch", "onnx"]
BACKENDS: tuple[str, ...] = ("auto", "torch", "onnx")
#: The dtypes exports are made in (int8: only ONNX Runtime computes in it).
EXPORT_DTYPES: tuple[str, ...] = ("float32", "int8")


@dataclass(frozen=True)
class BackendChoice:
    """Which backend answers, and why.

    Attributes:
        name: ``torch`` or ``onnx``.
        reason: why, in words (``workbench info`` prints it).
        fingerprint: the model's fingerprint, where it was computed.
        folder: the export's folder (``onnx`` only).
        record: the export's record; None where it is still to be made (``make``).
        notes: what happened on the way (an export refused and to be made again).
        dtype: the export's dtype (``float32`` or ``int8``; ``onnx`` only).
    """

    name: Literal["torch", "onnx"]
    reason: str
    fingerprint: str | None = None
    folder: Path | None = None
    record: ExportRecord | None = None
    notes: tuple[str, ...] = ()
    dtype: str = "float32"

    @property
    def make(self) -> bool:
        """Whether the export must be made before ONNX Runtime can answer."""
        return self.name == "onnx" and self.record is None


def requested_backend(backend: str | None) -> Backend:
    """The backend asked for: ``backend`` unless None or ``auto``, else ``$WORKBENCH_BACKEND``,
    else ``auto``.

    Raises:
        InputError: an unknown name.
    """
    name = (backend or "auto").strip().lower()
    if name == "auto":
        name = os.environ.get("WORKBENCH_BACKEND", "auto").strip().lower() or "auto"
    if name not in BACKENDS:
        raise InputError(f"Unknown backend '{name}'; choose one of {', '.join(BACKENDS)}.")
    return name  # type: ignore[return-value]


def onnxruntime_installed() -> bool:
    """Whether ONNX Runtime can be imported here (not imported to find out)."""
    return importlib.util.find_spec("onnxruntime") is not None


def choose_backend(
    backend: str | None,
    device: str,
    dtype: str,
    source: ModelSource,
    compile: bool = False,
    attention: str = "auto",
    overlapped: bool = False,
) -> BackendChoice:
    """Decide which backend answers for ``source`` on ``device`` (see the module's notes).

    Raises:
        InputError: ``onnx`` asked for where ONNX Runtime cannot answer (a GPU, another dtype,
            ``compile``, another attention kernel, no ONNX Runtime, a refused export), or
            ``int8`` where ONNX Runtime cannot answer or with ``torch``.
        ModelLoadError: an adapter directory whose weights are missing, pickled, damaged or
            for another base (:func:`~workbench.encoding.models.check_adapter`).
    """
    asked = requested_backend(backend)
    export_dtype = "int8" if dtype == "int8" else "float32"
    if export_dtype == "int8" and asked == "torch":
        raise InputError("dtype int8 runs on ONNX Runtime only; drop --backend torch (or ask "
                         "for float32, bfloat16 or float16).")  # fmt: skip
    if export_dtype == "int8":
        asked = "onnx"  # int8 or nothing: every blocker below is an error
    if asked == "torch":
        return BackendChoice("torch", "torch, as asked")
    blocker = None
    if not device.startswith("cpu"):
        blocker = f"the model runs on {device} (ONNX Runtime answers on the CPU here)"
    elif dtype not in ("auto", *EXPORT_DTYPES):
        blocker = f"the model computes in {dtype} (exports are float32 or int8)"
    elif compile:
        blocker = "torch.compile was asked for"
    elif attention != "auto":
        blocker = f"the attention kernel '{attention}' was asked for"
    elif overlapped:
        blocker = "the overlapped pipeline was asked for (it runs torch's forward pass)"
    elif not onnxruntime_installed():
        blocker = "ONNX Runtime is not installed (pip install onnxruntime)"
    if blocker is None:
        check_adapter(source)  # damaged adapters are refused on either backend
        try:
            fingerprint = weights_fingerprint(source)
        except (ModelLoadError, OSError) as exc:
            blocker = f"the model's fingerprint cannot be read without loading it ({exc})"
    what = "backend 'onnx'" if export_dtype == "float32" else "dtype int8 (ONNX Runtime only)"
    if blocker is not None:
        if asked == "onnx":
            raise InputError(f"{what} cannot answer: {blocker}.")
        return BackendChoice("torch", f"torch: {blocker}")
    refused = read_refusal(fingerprint, versions(), export_dtype) or read_refusal(
        fingerprint, versions()
    )
    if refused is not None:
        if asked == "onnx":
            raise InputError(f"{what} cannot answer: this model's export was refused: "
                             f"{refused}.")  # fmt: skip
        return BackendChoice("torch", f"torch: this model's ONNX export was refused: {refused}",
                             fingerprint)  # fmt: skip
    folder = export_folder(fingerprint, export_dtype, OPSET)
    notes: tuple[str, ...] = ()
    try:
        record = read_export(folder, fingerprint, export_dtype, OPSET)
    except CacheError as exc:
        remove_path(folder)
        record, notes = None, (f"{exc}: the export was removed and is made again",)
    kind = "int8 export" if export_dtype == "int8" else "export"
    if record is None:
        reason = f"ONNX Runtime on the CPU, from an {kind} made now (once per model)"
    else:
        reason = f"ONNX Runtime on the CPU, from the {kind} in {folder}"
    return BackendChoice("onnx", reason, fingerprint, folder, record, notes, export_dtype)
