"""The machine a benchmark ran on, recorded in its JSON by the bench scripts."""

from __future__ import annotations

import os
import platform
from dataclasses import asdict
from importlib.metadata import version
from pathlib import Path
from typing import Any

import torch

from workbench.encoding.dtype_probe import probe_cpu_dtype

#: The flags recorded: the wide vector and matrix instructions that bfloat16 speed depends on.
WIDE_FLAGS = ("avx512", "amx", "avx_vnni", "avx2", "fma")


def machine_facts() -> dict[str, Any]:
    """Platform, CPU model and count, its wide-vector flags, torch and transformers versions,
    torch's threads, CPU capability, the dtype probe's record (which dtype ``auto`` takes on this
    CPU, and the timings it chose by), the load average when called, and the GPU when there
    is one."""
    facts: dict[str, Any] = {
        "platform": platform.platform(),
        "cpu": platform.processor() or platform.machine(),
        "cpus": os.cpu_count(),
        "torch": torch.__version__,
        "transformers": version("transformers"),
        "torch_threads": torch.get_num_threads(),
        "cpu_capability": torch.backends.cpu.get_cpu_capability(),
        "dtype_probe": asdict(probe_cpu_dtype()),
        "cpu_wide_flags": [],
        "load_average": os.getloadavg() if hasattr(os, "getloadavg") else None,
    }
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                facts["cpu"] = line.split(":", 1)[1].strip()
            if line.startswith("flags"):
                flags = line.split(":", 1)[1].split()
                facts["cpu_wide_flags"] = [f for f in flags if f.startswith(WIDE_FLAGS)]
                break
    except OSError:
        pass
    if torch.cuda.is_available():
        facts["gpu"] = torch.cuda.get_device_name()
    return facts
