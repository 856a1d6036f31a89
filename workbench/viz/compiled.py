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

Example::

    umap = import_umap()
    umap.UMAP(random_state=0).fit(points)   # the first process compiles; the next loads
"""

from __future__ import annotations

import threading
import warnings
from types import ModuleType
from typing import Any

_LOCK = threading.Lock()
_UMAP: ModuleType | None = None  # set once the import has finished


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
