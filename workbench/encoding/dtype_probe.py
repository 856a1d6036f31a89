"""Which dtype computes faster on this CPU, bfloat16 or float32: measured, decided, remembered.

:func:`probe_cpu_dtype` times torch's matrix product of a model's own size (a batch of token
rows times the model's hidden x intermediate weight) in float32 and in bfloat16, interleaved,
within a fraction of a second, and keeps the record in ``<cache>/machine/dtype_probe.json``
under a key naming the CPU (its model name and flags), torch's version, the thread count and the
shape, so each machine measures once per model size. :func:`decide_dtype` is the decision: a
pure function of the two measured times (bfloat16 only where it is faster by more than
:data:`BF16_MARGIN`; float32 is the more precise, so it wins ties).

Example::

    probe = probe_cpu_dtype(ProbeShape(hidden=384, intermediate=1536))
    probe.chosen            # "float32" or "bfloat16"
    probe.reason            # "bfloat16's matrix product ran 31.20x slower than float32's"
"""

from __future__ import annotations

import functools
import json
import os
import platform
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from workbench.encoding.models import default_cache_dir
from workbench.fileio import atomic_path, sha256_json

#: bfloat16 is chosen only where its product takes less than 1 / (1 + BF16_MARGIN) of
#: float32's time: a smaller gain is within the probe's noise and costs precision.
BF16_MARGIN = 0.05
#: Seconds the probe spends timing, after one warm-up product per dtype.
PROBE_BUDGET_S = 0.3
#: A first timing this lopsided is decided without repeats: noise does not reverse it.
DECISIVE_RATIO = 4.0
#: Largest cache file read back (bytes); a larger one is measured over.
MAX_RECORD_BYTES = 1 << 20
PROBE_FILE = Path("machine") / "dtype_probe.json"


@dataclass(frozen=True)
class ProbeShape:
    """The matrix product the probe times: ``(tokens, hidden) @ (hidden, intermediate)``, a
    feed-forward layer of the model on a batch of token rows."""

    hidden: int = 384  # the model's hidden size (the packaged all-MiniLM-L6-v2's by default)
    intermediate: int = 1536  # its feed-forward size
    tokens: int = 2048  # rows of the largest product timed (fewer where one is slow)

    @classmethod
    def of(cls, config: Any) -> ProbeShape:
        """The shape of a HuggingFace model ``config`` (``hidden_size``, ``intermediate_size``;
        four times the hidden size where the config names no feed-forward size)."""
        hidden = int(getattr(config, "hidden_size", 0) or cls.hidden)
        intermediate = int(getattr(config, "intermediate_size", 0) or 4 * hidden)
        return cls(hidden=hidden, intermediate=intermediate)


@dataclass(frozen=True)
class DtypeProbe:
    """One probe's record: what was timed, the best time of each dtype, and the choice."""

    chosen: str  # "float32" or "bfloat16"
    reason: str  # one line: the measured ratio and the rule
    seconds: dict[str, float]  # best time of one product per dtype
    rows: int  # token rows of the products timed
    shape: ProbeShape
    threads: int  # torch's intra-op threads during the probe
    cpu: str  # the CPU's model name
    torch: str  # torch's version
    measured_at: str  # ISO time (UTC)
    probe_s: float  # wall time of the whole probe, warm-up included
    load_average: float | None  # the 1-minute load average when measured
    remembered: bool = False  # True when read back from the cache file, not measured now

    def gflops(self, dtype: str) -> float:
        """GFLOP/s of ``dtype``'s best product."""
        flops = 2.0 * self.rows * self.shape.hidden * self.shape.intermediate
        return flops / self.seconds[dtype] / 1e9


def decide_dtype(
    float32_s: float, bfloat16_s: float, margin: float = BF16_MARGIN
) -> tuple[str, str]:
    """The faster dtype of two measured times of the same product, and why.

    bfloat16 where ``bfloat16_s * (1 + margin) < float32_s``; float32 otherwise (slower,
    equal, or faster by less than the margin: float32 is the more precise).

    Returns:
        ``(dtype, reason)``, ``dtype`` being ``"bfloat16"`` or ``"float32"``.

    Raises:
        ValueError: a time that is not positive and finite.
    """
    for name, value in (("float32", float32_s), ("bfloat16", bfloat16_s)):
        if not (value > 0 and value < float("inf")):
            raise ValueError(f"the {name} time must be positive and finite, not {value!r}")
    ratio = float32_s / bfloat16_s
    if bfloat16_s * (1 + margin) < float32_s:
        return "bfloat16", f"bfloat16's matrix product ran {ratio:.2f}x faster than float32's"
    if bfloat16_s > float32_s:
        return "float32", f"bfloat16's matrix product ran {1 / ratio:.2f}x slower than float32's"
    return "float32", (
        f"bfloat16's matrix product ran only {ratio:.2f}x faster than float32's (below the "
        f"{1 + margin:.2f}x it needs; float32 is the more precise)"
    )


def cpu_identity() -> dict[str, str]:
    """What names this CPU in the probe's key: its model name and a hash of its flags (read
    from ``/proc/cpuinfo`` where there is one, else ``platform``'s description)."""
    name, flags = platform.processor() or platform.machine(), ""
    try:
        text = Path("/proc/cpuinfo").read_text(errors="replace")[:MAX_RECORD_BYTES]
    except OSError:
        text = ""
    for line in text.splitlines():
        key, _, value = line.partition(":")
        if key.strip() == "model name" and value.strip():
            name = value.strip()
        elif key.strip() in ("flags", "Features") and not flags:
            flags = " ".join(sorted(value.split()))
    return {"cpu": name, "flags": sha256_json(flags)[:16], "platform": platform.platform()}


def time_products(
    shape: ProbeShape,
    budget_s: float = PROBE_BUDGET_S,
    clock: Callable[[], float] = time.perf_counter,
) -> tuple[dict[str, float], int]:
    """The best time of one ``(rows, hidden) @ (hidden, intermediate)`` product per dtype, and
    ``rows``.

    Starts at 128 rows and doubles them (up to ``shape.tokens``) while the slower dtype's
    product stays under a twentieth of ``budget_s``, each size warmed up once; then, unless
    one dtype took over :data:`DECISIVE_RATIO` times the other's time, alternates the two
    dtypes until ``budget_s`` is spent (at least two timings each).
    """
    import torch

    def product(rows: int) -> dict[str, Callable[[], object]]:
        gen = torch.Generator().manual_seed(0)
        a = torch.randn(rows, shape.hidden, generator=gen)
        b = torch.randn(shape.hidden, shape.intermediate, generator=gen)
        out: dict[str, Callable[[], object]] = {}
        for name, dtype in (("float32", torch.float32), ("bfloat16", torch.bfloat16)):
            x, w = a.to(dtype), b.to(dtype)
            out[name] = functools.partial(torch.matmul, x, w)
        return out

    def once(fn: Callable[[], object]) -> float:
        start = clock()
        fn()
        return clock() - start

    rows = min(128, shape.tokens)
    with torch.inference_mode():
        while True:
            fns = product(rows)
            for fn in fns.values():
                fn()  # warm-up: the kernel's first call sets itself up
            best = {name: once(fn) for name, fn in fns.items()}
            if rows * 2 > shape.tokens or max(best.values()) * 2 > budget_s / 20:
                break
            rows *= 2
        start = clock()
        timings = 1
        decisive = max(best.values()) > DECISIVE_RATIO * min(best.values())
        while not decisive and (timings < 2 or clock() - start < budget_s):
            for name, fn in fns.items():
                best[name] = min(best[name], once(fn))
            timings += 1
    return best, rows


def _read_records(path: Path) -> dict[str, Any]:
    try:
        if path.stat().st_size > MAX_RECORD_BYTES:
            return {}
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    entries = data.get("entries") if isinstance(data, dict) else None
    return entries if isinstance(entries, dict) else {}


def _from_record(record: object) -> DtypeProbe | None:
    """The probe in a remembered record, None where it is not a whole, sane one."""
    if not isinstance(record, dict):
        return None
    try:
        shape = ProbeShape(**record["shape"])
        seconds = {k: float(record["seconds"][k]) for k in ("float32", "bfloat16")}
        chosen, reason = decide_dtype(seconds["float32"], seconds["bfloat16"])
        fields = {
            k: record[k] for k in ("rows", "threads", "cpu", "torch", "measured_at", "probe_s")
        }
        load = record.get("load_average")
        load = None if load is None else float(load)
        return DtypeProbe(
            chosen, reason, seconds, shape=shape, load_average=load, remembered=True, **fields
        )
    except (KeyError, TypeError, ValueError):
        return None


def probe_key(shape: ProbeShape, threads: int) -> str:
    """The remembered probe's key: the CPU, torch's version, the threads and the shape."""
    import torch

    return sha256_json(
        {
            "cpu": cpu_identity(),
            "torch": torch.__version__,
            "threads": threads,
            "shape": asdict(shape),
        }
    )[:20]


def probe_path() -> Path:
    """Where the probes are remembered: ``<cache>/machine/dtype_probe.json``."""
    return default_cache_dir() / PROBE_FILE


def probe_cpu_dtype(shape: ProbeShape | None = None, remeasure: bool = False) -> DtypeProbe:
    """This CPU's faster dtype for products of ``shape`` (default: the packaged model's): the
    remembered probe of this CPU, torch version, thread count and shape, else a new one
    (:func:`time_products`, :func:`decide_dtype`), remembered in :func:`probe_path` where the
    cache is writable. ``remeasure`` measures anew and replaces what was remembered."""
    import torch

    shape = shape or ProbeShape()
    threads = torch.get_num_threads()
    key = probe_key(shape, threads)
    path = probe_path()
    if not remeasure:
        found = _from_record(_read_records(path).get(key))
        if found is not None:
            return found
    start = time.perf_counter()
    seconds, rows = time_products(shape)
    chosen, reason = decide_dtype(seconds["float32"], seconds["bfloat16"])
    probe = DtypeProbe(
        chosen, reason, seconds, rows=rows, shape=shape, threads=threads,
        cpu=cpu_identity()["cpu"], torch=torch.__version__,
        measured_at=datetime.now(timezone.utc).isoformat(timespec="seconds"),
        probe_s=time.perf_counter() - start,
        load_average=os.getloadavg()[0] if hasattr(os, "getloadavg") else None,
    )  # fmt: skip
    entries = _read_records(path)
    record = asdict(probe)
    del record["chosen"], record["reason"], record["remembered"]  # decided again when read
    entries[key] = record
    try:
        with atomic_path(path) as tmp:
            tmp.write_text(json.dumps({"entries": entries}, indent=1) + "\n", encoding="utf-8")
    except OSError:
        pass  # a read-only cache: measured again by the next process
    return probe
