"""Where and in what precision the encoder computes: the device and the compute dtype.

:func:`choose_device` takes a device the user named (checked: it exists and is available
here) or picks cuda, else mps, else cpu. :func:`choose_dtype` resolves ``auto`` to bfloat16 on
a GPU that supports it, on a CPU to the dtype whose matrix product a short probe measured the
faster (:mod:`workbench.encoding.dtype_probe`, once per machine), float32 elsewhere, unless
``$WORKBENCH_DTYPE`` says otherwise for the whole process; :func:`explain_dtype` also says why.

Example::

    device = choose_device(None)             # "cuda" on a GPU machine, else "mps" or "cpu"
    dtype = choose_dtype("auto", device)     # torch.bfloat16 or torch.float32
    explain_dtype("auto", "cpu").reason      # "auto: float32, bfloat16's matrix product ran ..."
"""

from __future__ import annotations

import importlib.util
import os
import re
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from workbench.encoding.dtype_probe import ProbeShape, probe_cpu_dtype, probe_path
from workbench.errors import ModelLoadError

if TYPE_CHECKING:
    import torch

DtypeName = Literal["auto", "float32", "bfloat16", "float16", "int8"]
#: The compute dtypes torch takes, by name (``int8`` is ONNX Runtime's alone:
#: :mod:`workbench.encoding.exported.quantize`).
DTYPES: tuple[str, ...] = ("float32", "bfloat16", "float16")


def choose_device(device: str | None = None) -> str:
    """The device to run on: ``device`` if given, else cuda, else mps, else cpu.

    Raises:
        ModelLoadError: ``device`` is not a device name (``cpu``, ``cuda``, ``cuda:N``, ``mps``,
            or another backend torch knows), or that device is not available here.
    """
    if (device is None and not gpu_possible()) or str(device or "").strip() == "cpu":
        return "cpu"  # decided without importing torch
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


def gpu_possible() -> bool:
    """Whether this machine may have a device other than the CPU for torch, decided without
    importing torch where that is certain: torch is not installed, or is a build for the CPU
    alone (its ``version.py`` names no CUDA and no ROCm) outside macOS (where mps may be)."""
    if sys.platform == "darwin":
        return True
    spec = importlib.util.find_spec("torch")
    if spec is None or not spec.submodule_search_locations:
        return False
    version = Path(next(iter(spec.submodule_search_locations))) / "version.py"
    try:
        text = version.read_text(encoding="utf-8")
    except OSError:
        return True
    builds = re.findall(r"^(cuda|hip)\s*:[^=]*=\s*(.+)$", text, flags=re.MULTILINE)
    return not builds or any(value.strip() != "None" for _, value in builds)


def cpu_bf16_native() -> bool:
    """Whether bfloat16 is the faster dtype on this CPU, as measured by the dtype probe for
    the packaged model's size (:func:`workbench.encoding.dtype_probe.probe_cpu_dtype`,
    remembered in the cache after the first call)."""
    return probe_cpu_dtype().chosen == "bfloat16"


#: The environment variable that sets what ``dtype="auto"`` means (``float32``, ``bfloat16``,
#: ``float16``), for every encoder of a process and its children: the app, the tests.
DTYPE_ENV = "WORKBENCH_DTYPE"


@dataclass(frozen=True)
class DtypeChoice:
    """A resolved compute dtype and why it was chosen (``workbench info`` prints ``reason``)."""

    name: str  # "float32", "bfloat16" or "float16"
    reason: str  # one line


def explain_dtype(dtype: DtypeName, device: str, shape: ProbeShape | None = None) -> DtypeChoice:
    """What ``dtype`` resolves to on ``device``, and why: an explicit dtype is itself;
    ``auto`` is ``$WORKBENCH_DTYPE`` when set, else bfloat16 on cuda where supported, the
    probe's faster dtype on a CPU (:func:`~workbench.encoding.dtype_probe.probe_cpu_dtype` for
    products of ``shape``, the model's own; measured once per machine and remembered), float32
    elsewhere.

    Raises:
        ModelLoadError: an unknown ``dtype`` or ``$WORKBENCH_DTYPE``.
    """
    if dtype != "auto":
        if dtype not in DTYPES:
            raise ModelLoadError(
                f"Unknown dtype '{dtype}'; choose one of auto, {', '.join(DTYPES)}."
            )
        return DtypeChoice(dtype, "asked for")
    forced = os.environ.get(DTYPE_ENV, "").strip()
    if forced:
        if forced not in DTYPES:
            raise ModelLoadError(
                f"{DTYPE_ENV}={forced!r} is not a dtype; choose one of {', '.join(DTYPES)} "
                "(or unset it for the automatic choice)."
            )
        return DtypeChoice(forced, f"auto: {DTYPE_ENV}={forced}")
    if device.startswith("cuda"):
        import torch

        if torch.cuda.is_bf16_supported():
            return DtypeChoice("bfloat16", "auto: bfloat16, supported by this GPU")
        return DtypeChoice("float32", "auto: float32, this GPU has no bfloat16")
    if device.split(":")[0] == "cpu":
        probe = probe_cpu_dtype(shape)
        how = "remembered from" if probe.remembered else "measured now by"
        shape = probe.shape
        return DtypeChoice(
            probe.chosen,
            f"auto: {probe.chosen}, {probe.reason} ({probe.rows}x{shape.hidden}x"
            f"{shape.intermediate}: float32 {probe.gflops('float32'):.1f}, bfloat16 "
            f"{probe.gflops('bfloat16'):.1f} GFLOP/s, {probe.threads} threads; "
            f"{how} the probe of {probe.measured_at}, {probe_path()})",
        )
    return DtypeChoice("float32", f"auto: float32 on {device}")


def torch_dtype(name: str) -> torch.dtype:
    """The torch dtype of a name in :data:`DTYPES`."""
    import torch

    return {"float32": torch.float32, "bfloat16": torch.bfloat16, "float16": torch.float16}[name]


def choose_dtype(dtype: DtypeName, device: str, shape: ProbeShape | None = None) -> torch.dtype:
    """The compute dtype as a torch dtype (:func:`explain_dtype` says which and why).

    Results are float32 either way; every cache key and report names the dtype used, and
    ``dtype="float32"`` (or ``WORKBENCH_DTYPE=float32``) sets it for a run or a process.

    Raises:
        ModelLoadError: an unknown ``dtype`` or ``$WORKBENCH_DTYPE``.
    """
    return torch_dtype(explain_dtype(dtype, device, shape).name)
