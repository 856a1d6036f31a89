"""UMAP imported so that its compiled code outlives the process.

umap-learn and pynndescent decorate their numba functions with ``numba.njit()`` and most of
them without ``cache=True``, so every new process compiles them again on its first fit (every
``workbench senses`` command, every app server; docs/benchmarks.md). :func:`import_umap`
imports ``umap`` (and pynndescent with it) while ``numba.njit`` defaults to ``cache=True``:
numba then writes each compiled function to its on-disk cache (beside the package's source,
``__pycache__``, or numba's user-wide cache folder where that is not writable; ``NUMBA_CACHE_DIR``
moves it) and later processes load it instead of compiling. Numba keys every cached function by
its source file's time stamp and size, the CPU and numba's version, so a changed package or
machine compiles again; a function numba cannot cache (one using dynamic globals) is compiled
as before. Only the default of the decorator changes, and only during the import; nothing else
of numba or umap is touched.

On a new install that first compilation is long (docs/benchmarks.md). :func:`warm_elsewhere`
starts it in a process of its own (the app's server does at start, on the core its model load
leaves), and :func:`import_umap` waits for that process (at most :data:`WARM_WAIT_SECONDS`)
before importing, so this process loads what the other compiled instead of compiling it too.
Once a warm-up has ended well, a marker in the workbench's cache (per numba, umap and
pynndescent version and per Python environment) saves later starts the process.

Example::

    umap = import_umap()
    umap.UMAP(random_state=0).fit(points)   # the first process compiles; the next loads

    warm_elsewhere()                        # at a server's start: compile in another process
"""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time
import warnings
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from types import ModuleType
from typing import Any

from workbench.encoding.models import default_cache_dir
from workbench.fileio import sha256_json

_LOCK = threading.Lock()
_UMAP: ModuleType | None = None  # set once the import has finished
_WARMING: subprocess.Popen | None = None  # the warm-up process this process started
#: The longest :func:`import_umap` waits for a warm-up process before compiling itself.
WARM_WAIT_SECONDS = 120.0
#: The longest a warm-up process may run (it is then killed; the first fit compiles).
WARM_LIMIT_SECONDS = 600
#: What the warm-up process runs: UMAP imported as here, and a first fit of a few points.
WARM_CODE = (
    "import numpy as np\n"
    "from workbench.viz.projection import Projector\n"
    "Projector(n_neighbors=5, random_state=0).fit(np.random.default_rng(0).normal(size=(30, 8)))\n"
)


def _caching(njit: Any) -> Any:
    """``njit`` with ``cache=True`` unless the caller said otherwise (both decorator forms)."""

    def cached_njit(*args: Any, **kwargs: Any) -> Any:
        if len(args) == 1 and callable(args[0]) and not kwargs:  # @numba.njit
            return njit(cache=True)(args[0])
        kwargs.setdefault("cache", True)  # @numba.njit(...) or numba.njit(signature, ...)
        return njit(*args, **kwargs)

    return cached_njit


def import_umap() -> ModuleType:
    """The ``umap`` module, imported (once per process) with numba's ``njit`` caching its
    compiled code on disk (see the module's notes); thread-safe: a thread that asks while another
    is still importing waits for the whole module (``sys.modules`` holds a partly initialised
    ``umap`` during the import, so its presence there is not taken as done)."""
    global _UMAP
    if _UMAP is not None:
        return _UMAP
    with _LOCK:
        if _UMAP is not None:
            return _UMAP
        _wait_for_warm_up()
        import numba
        from numba.core.errors import NumbaWarning

        plain = numba.njit
        numba.njit = _caching(plain)
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", NumbaWarning)  # "cannot cache ...": compiled
                import umap
        finally:
            numba.njit = plain
        _UMAP = umap
        return umap


def warm_marker(cache: Path | None = None) -> Path:
    """The file whose presence says a warm-up ended well for this Python environment and these
    versions of numba, umap-learn and pynndescent (and ``NUMBA_CACHE_DIR``, where numba keeps
    what it compiled): ``<cache>/numba/umap-<digest>.warm``."""
    versions: dict[str, str | None] = {}
    for name in ("numba", "umap-learn", "pynndescent"):
        try:
            versions[name] = version(name)
        except PackageNotFoundError:
            versions[name] = None
    where = {"prefix": sys.prefix, "numba_cache": os.environ.get("NUMBA_CACHE_DIR", "")}
    digest = sha256_json({**versions, **where})[:16]
    return (cache or default_cache_dir()) / "numba" / f"umap-{digest}.warm"


def warm_elsewhere(cache: Path | None = None, code: str = WARM_CODE) -> subprocess.Popen | None:
    """Start a process that runs ``code`` (UMAP's first fit, which fills numba's on-disk cache)
    and then writes :func:`warm_marker`; :func:`import_umap` in this process waits for it.
    Returns the process, or None where the marker says the cache is warm, UMAP is already
    imported here, or the process cannot be started. The process is killed after
    :data:`WARM_LIMIT_SECONDS`. It runs at the caller's priority: at the lowest, the app's first
    page starved it and a page needing UMAP waited for it all the same (docs/benchmarks.md).

    Example: ``warm_elsewhere()`` at a server's start, then ``import_umap()`` where a page
    needs it: the page loads what the other process compiled.
    """
    global _WARMING
    marker = warm_marker(cache)
    if _UMAP is not None or marker.is_file():
        return None
    script = (
        "import signal, sys\n"
        f"if hasattr(signal, 'alarm'): signal.alarm({WARM_LIMIT_SECONDS})\n"
        f"{code}"
        "from pathlib import Path\n"
        "from workbench.fileio import atomic_path\n"
        "marker = Path(sys.argv[1])\n"
        "marker.parent.mkdir(parents=True, exist_ok=True)\n"
        "with atomic_path(marker) as tmp:\n"
        "    tmp.write_text('UMAP compiled into numba\\'s cache\\n')\n"
    )
    try:
        _WARMING = subprocess.Popen(
            [sys.executable, "-c", script, str(marker)],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        )  # fmt: skip
    except OSError:
        return None
    return _WARMING


def _wait_for_warm_up(limit: float = WARM_WAIT_SECONDS) -> None:
    """Wait (at most ``limit`` seconds) for the warm-up process :func:`warm_elsewhere` started
    in this process, if it is still running."""
    warming = _WARMING
    if warming is None:
        return
    deadline = time.monotonic() + limit
    while warming.poll() is None and time.monotonic() < deadline:
        time.sleep(0.05)
