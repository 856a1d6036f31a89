"""Values computed once and shared by every session of the server: a small thread-safe LRU per
name (:func:`memo`), so a rerun after moving an unrelated widget recomputes nothing and two
visitors asking for the same encoding compute it once.

Pages keep no cache of their own: ``st.cache_resource`` holds the model, WordNet and corpora
(:mod:`webapp.loaded_model`, :mod:`webapp.caches`), ``st.cache_data`` projections and reports,
the library's on-disk cache (``encode_cached``) the encodings, and this memo what was loaded.
"""

from __future__ import annotations

import contextlib
import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable

import streamlit as st

#: How long a page waits for a value another thread is computing (the server's preload or
#: another visitor) before it computes the value itself.
MEMO_WAIT_SECONDS = 900.0


class Memo:
    """A small thread-safe LRU of computed values (encodings), shared by all sessions.

    A key being computed by one thread is computed once: another thread asking for it meanwhile
    waits for that value (under ``waiting()``, e.g. a spinner saying so, at most
    :data:`MEMO_WAIT_SECONDS`), and computes it itself only when that computation failed, was
    stopped or ran past the deadline.

    Example::

        memo("embeddings").get(key, lambda: encode(...), waiting=lambda: st.spinner("…"))
    """

    def __init__(self, size: int) -> None:
        self.size = size
        self._data: OrderedDict = OrderedDict()
        self._pending: dict[Hashable, threading.Event] = {}
        self._lock = threading.Lock()

    def _cached(self, key: Hashable) -> tuple[bool, object]:
        with self._lock:
            if key in self._data:
                self._data.move_to_end(key)
                return True, self._data[key]
        return False, None

    def get(
        self,
        key: Hashable,
        compute: Callable[[], object],
        waiting: Callable[[], contextlib.AbstractContextManager] | None = None,
    ):
        with self._lock:
            if key in self._data:
                self._data.move_to_end(key)
                return self._data[key]
            other = self._pending.get(key)
            if other is None:
                mine = self._pending[key] = threading.Event()
        if other is not None:
            with waiting() if waiting else contextlib.nullcontext():
                other.wait(MEMO_WAIT_SECONDS)
            found, value = self._cached(key)
            return value if found else self._store(key, compute())
        try:
            return self._store(key, compute())
        finally:
            with self._lock:
                self._pending.pop(key, None)
            mine.set()

    def _store(self, key: Hashable, value: object) -> object:
        with self._lock:
            self._data[key] = value
            while len(self._data) > self.size:
                self._data.popitem(last=False)
        return value

    def __contains__(self, key: Hashable) -> bool:
        with self._lock:
            return key in self._data


@st.cache_resource
def memo(name: str, size: int = 16) -> Memo:
    """The process-wide memo called ``name``."""
    return Memo(size)
