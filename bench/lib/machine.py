"""The machine a benchmark ran on, recorded in its JSON by the bench scripts."""

from __future__ import annotations

import os
import platform
from pathlib import Path
from typing import Any

import torch

from workbench.encoding.device import cpu_bf16_native


def machine_facts() -> dict[str, Any]:
    """Platform, CPU model and count, torch version and threads, CPU capability, whether the CPU
    has native bfloat16, the load average when called, and the GPU when there is one."""
    facts: dict[str, Any] = {
        "platform": platform.platform(),
        "cpu": platform.processor() or platform.machine(),
        "cpus": os.cpu_count(),
        "torch": torch.__version__,
        "torch_threads": torch.get_num_threads(),
        "cpu_capability": torch.backends.cpu.get_cpu_capability(),
        "cpu_bf16_native": cpu_bf16_native(),
        "load_average": os.getloadavg() if hasattr(os, "getloadavg") else None,
    }
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                facts["cpu"] = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    if torch.cuda.is_available():
        facts["gpu"] = torch.cuda.get_device_name()
    return facts
