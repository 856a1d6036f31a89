"""Where and in what precision the encoder computes: the device and the compute dtype.

:func:`choose_device` takes a device the user named (checked: it exists and is available
here) or picks cuda, else mps, else cpu. :func:`choose_dtype` resolves ``auto`` to bfloat16 on
a GPU and on a CPU that computes in bfloat16 natively (:func:`cpu_bf16_native`), float32
elsewhere, unless ``$WORKBENCH_DTYPE`` says otherwise for the whole process.

Example::

    device = choose_device(None)             # "cuda" on a GPU machine, else "mps" or "cpu"
    dtype = choose_dtype("auto", device)     # torch.bfloat16 or torch.float32
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from workbench.errors import ModelLoadError

if TYPE_CHECKING:
    import torch

DtypeName = Literal["auto", "float32", "bfloat16", "float16"]


def choose_device(device: str | None = None) -> str:
    """The device to run on: ``device`` if given, else cuda, else mps, else cpu.

    Raises:
        ModelLoadError: ``device`` is not a device name (``cpu``, ``cuda``, ``cuda:N``, ``mps``,
            or another backend torch knows), or that device is not available here.
    """
    import torch

    if device:
        dev = str(device).strip()
        try:
            kind, index = torch.device(dev).type, torch.device(dev).index
            if kind == "meta":  # tensors without data: nothing to compute on
                raise ValueError(dev)
        except (RuntimeError, ValueError, TypeError):
            raise ModelLoadError(
                f"Unknown device '{dev}': use cpu, cuda, cuda:N (a GPU's number) or mps."
            ) from None
        if kind == "cpu":
            return dev
        backend = (
            getattr(torch.backends, kind, None) if kind == "mps" else getattr(torch, kind, None)
        )
        available = getattr(backend, "is_available", None)
        if not callable(available) or not available():
            what = "CUDA" if kind == "cuda" else kind
            raise ModelLoadError(f"Device '{dev}' was asked for, but {what} is not available here.")
        count = getattr(backend, "device_count", None)
        if index is not None and callable(count) and index >= count():
            raise ModelLoadError(
                f"Device '{dev}' was asked for, but there are {count()} {kind} device(s) here "
                f"(numbered from 0)."
            )
        return dev
    if torch.cuda.is_available():
        return "cuda"
    mps = getattr(torch.backends, "mps", None)
    if mps is not None and mps.is_available():
        return "mps"
    return "cpu"


def cpu_bf16_native(cpuinfo: str | os.PathLike[str] = "/proc/cpuinfo") -> bool:
    """Whether the CPU computes in bfloat16 natively (AMX-BF16 or AVX512-BF16 in the flags of
    ``cpuinfo``; False where that file is missing, as on macOS and Windows). Without them
    torch's bfloat16 matrix products are emulated, several times slower than float32
    (docs/benchmarks.md, "bfloat16 on the CPU")."""
    try:
        flags = Path(cpuinfo).read_text(errors="replace").split()
    except OSError:
        return False
    return "amx_bf16" in flags or "avx512_bf16" in flags


#: The environment variable that sets what ``dtype="auto"`` means (``float32``, ``bfloat16``,
#: ``float16``), for every encoder of a process and its children: the app, the tests.
DTYPE_ENV = "WORKBENCH_DTYPE"


def choose_dtype(dtype: DtypeName, device: str) -> torch.dtype:
    """The compute dtype: ``auto`` is ``$WORKBENCH_DTYPE`` when set, else bfloat16 on cuda
    (where supported) and on a CPU that computes in bfloat16 natively
    (:func:`cpu_bf16_native`), float32 elsewhere.

    On such a CPU bfloat16 encodes faster than float32 and moves WSD F1 and the geometry
    table by less than the noise (measured in docs/benchmarks.md, "bfloat16 on the CPU"); float32 is
    ``dtype="float32"`` (or ``WORKBENCH_DTYPE=float32``) away, and every cache key and report
    names the dtype used.

    Raises:
        ModelLoadError: an unknown ``dtype`` or ``$WORKBENCH_DTYPE``.
    """
    import torch

    table = {"float32": torch.float32, "bfloat16": torch.bfloat16, "float16": torch.float16}
    if dtype == "auto":
        forced = os.environ.get(DTYPE_ENV, "").strip()
        if forced:
            if forced not in table:
                raise ModelLoadError(
                    f"{DTYPE_ENV}={forced!r} is not a dtype; choose one of {', '.join(table)} "
                    "(or unset it for the automatic choice)."
                )
            return table[forced]
        if device.startswith("cuda") and torch.cuda.is_bf16_supported():
            return torch.bfloat16
        if device == "cpu" and cpu_bf16_native():
            return torch.bfloat16
        return torch.float32
    if dtype not in table:
        raise ModelLoadError(f"Unknown dtype '{dtype}'; choose one of auto, {', '.join(table)}.")
    return table[dtype]
