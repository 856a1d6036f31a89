"""What the app keeps between reruns: the sidebar settings, the model, the memo, error display.

Pages import this module and :mod:`webapp.caches` (WordNet, corpora, encodings, projections,
indexes) and never cache anything themselves:

* ``st.cache_resource``: the model (once per process and model/device), WordNet, corpora.
* ``st.cache_data``: projections and reports, keyed by what made their input plus their config.
* Encodings go through the library's on-disk cache (``encode_cached``) and, once loaded, stay in
  a small in-process memo (:func:`memo`), so a rerun after moving an unrelated widget recomputes
  nothing. Long encodings draw a progress bar; changing an input reruns the script, which stops
  the running work at its next progress update.

User errors (:class:`~workbench.errors.WorkbenchError`) become ``st.error`` messages through
:func:`user_errors`; a page never shows a traceback.
"""

from __future__ import annotations

import contextlib
import copy
import json
import logging
import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable, Iterator
from dataclasses import dataclass
from pathlib import Path

import streamlit as st

import workbench
from webapp.offered_models import MAX_NAME, NOT_OFFERED, check_offered, is_offered
from webapp.text import plain
from webapp.urlstate import Param, restore
from workbench.encoding.models import resolve_model
from workbench.encoding.pooling import POOLINGS
from workbench.errors import ModelLoadError, WorkbenchError
from workbench.viz.export import ViewSettings
from workbench.viz.projection import ProjectionConfig

PACKAGED_LABEL = "all-MiniLM-L6-v2 (packaged)"
DEFAULT_LAYERS = "last4-sum"
log = logging.getLogger("workbench.app")


@dataclass(frozen=True)
class Settings:
    """The sidebar's choices; every cache key that depends on the model starts with ``key``."""

    model: str | None = None  # None: the packaged model; else a HF id or a local directory
    device: str | None = None  # None: the best available
    pooling: str = "mean"  # subword -> word pooling
    layers: str = DEFAULT_LAYERS  # LayerSpec string: "6", "-1", "last4-sum", ...

    @property
    def key(self) -> tuple:
        return (self.model, self.device, self.pooling)


# --------------------------------------------------------------------------- errors


@contextlib.contextmanager
def user_errors(where: object = None) -> Iterator[None]:
    """Show a raised error as a message instead of a traceback, then stop the page.

    ``WorkbenchError`` (the user's input) is shown as is; anything else is logged with its
    traceback on the server and shown as a one-line message.
    """
    area = where or st
    try:
        yield
    except WorkbenchError as exc:
        area.error(plain(exc), icon=":material/warning:")
        st.stop()
    except Exception as exc:  # noqa: BLE001 - the page must not show a traceback
        log.exception("unexpected error in the app")
        area.error(
            f"Something went wrong: {type(exc).__name__}: {plain(exc)}. "
            "Try other settings; the server log has the details.",
            icon=":material/error:",
        )
        st.stop()


# --------------------------------------------------------------------------- memo


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


def with_progress(text: str, work: Callable[[Callable[[float], None]], object]):
    """Run ``work(progress)`` under a progress bar that is removed afterwards."""
    bar = st.progress(0.0, text=text)
    try:
        return work(lambda fraction: bar.progress(min(max(float(fraction), 0.0), 1.0), text=text))
    finally:
        bar.empty()


# --------------------------------------------------------------------------- model


@st.cache_resource(show_spinner="Loading the model…", max_entries=3)
def _load_encoder(model: str | None, device: str | None):
    # through the lazy public API: torch is imported here, in the preload thread, not when the
    # app starts (the page draws meanwhile)
    return workbench.Encoder(model=model, device=device)


@st.cache_resource(max_entries=6)
def _encoder_with_pooling(model: str | None, device: str | None, pooling: str):
    base = _load_encoder(model, device)
    if base.pooling == pooling:
        return base
    enc = copy.copy(base)  # shares the loaded weights; only the default pooling differs
    enc.pooling = pooling
    return enc


class OfferedModels:
    """The models this server offers, as a :class:`~webapp.urlstate.Param`'s choices."""

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and is_offered(name)


def current() -> Settings:
    """The settings chosen in the sidebar (defaults before the sidebar ran)."""
    return st.session_state.get("settings", Settings())


def encoder_for(settings: Settings):
    """The loaded encoder of ``settings`` (raises as loading does; the server's preload)."""
    return _encoder_with_pooling(settings.model, settings.device, settings.pooling)


def encoder(settings: Settings | None = None):
    """The loaded encoder of ``settings`` (default: the sidebar's); errors stop the page."""
    s = settings or current()
    with user_errors():
        check_offered(s.model)
        return encoder_for(s)


DEVICES = ("auto", "cpu", "cuda", "mps")


def layer_options(n_layers: int) -> list[str]:
    """Layer specs offered in the sidebar for a model with ``n_layers`` layers: the sum and
    the mean of the last four hidden states where it has four, then each layer."""
    last4 = ["last4-sum", "last4-mean"] if n_layers + 1 >= 4 else []
    return [*last4, *[str(i) for i in range(n_layers, -1, -1)]]


@st.cache_resource(max_entries=8)
def _n_layers(model: str | None) -> int | None:
    """Layer count from a local model's ``config.json`` (no torch import, no weights); None
    for a hub id or a config without ``num_hidden_layers``."""
    source = resolve_model(model)
    if not source.is_local:
        return None
    try:
        config = json.loads((Path(source.location) / "config.json").read_text())
    except (OSError, ValueError) as exc:
        raise ModelLoadError(f"{source.location} has no readable config.json: {exc}") from exc
    n = config.get("num_hidden_layers")
    return int(n) if isinstance(n, int) else None


def short(text: str, width: int = 80) -> str:
    """``text`` cut to ``width`` characters (a visitor's long input is never echoed whole)."""
    return text if len(text) <= width else text[: width - 1] + "…"


def _model_error(exc: Exception, device: str | None, pooling: str) -> None:
    """The model cannot be used: say so in the sidebar and in the page, use the packaged one."""
    text = f"{plain(exc)}\n\nClear the model field to use the packaged model."
    st.sidebar.error(text, icon=":material/warning:")
    st.error(f"The sidebar's model cannot be used: {plain(exc)} The page shows the packaged model "
             "meanwhile; clear the model field to go on with it.",
             icon=":material/warning:")  # fmt: skip
    return None


#: The sidebar's settings in the URL (see :mod:`webapp.urlstate`); pages add theirs.
SIDEBAR_PARAMS = (
    Param("model", "model", choices=OfferedModels(), refusal=NOT_OFFERED),
    Param("device", "device", choices=DEVICES),
    Param("pooling", "pooling", choices=POOLINGS),
    Param("layers", "layers"),
)


def sidebar() -> Settings:
    """Draw the sidebar's settings (model, device, pooling, layers); store and return them.

    A link's settings (:data:`SIDEBAR_PARAMS`) are restored first. The model itself is loaded
    by the first page that needs it, so the page starts drawing at once; :func:`sidebar_facts`
    shows the model's facts at the end of the run.
    """
    restore(SIDEBAR_PARAMS)
    side = st.sidebar
    side.header("Model")
    model = side.text_input(
        "Model", key="model", placeholder=PACKAGED_LABEL,
        max_chars=MAX_NAME,
        help="Empty: the packaged all-MiniLM-L6-v2. Or a model this server offers: a fetched "
        "model by name (all-mpnet-base-v2), a fine-tuned run of this app, a Hugging Face id in "
        "the local cache, or one its owner lists.",
    ).strip() or None  # fmt: skip
    device = side.selectbox(
        "Device", DEVICES, key="device",
        help="auto: a GPU (cuda or mps) when there is one, else the CPU.",
    )  # fmt: skip
    pooling = side.selectbox(
        "Subword pooling", POOLINGS, index=POOLINGS.index(Settings.pooling), key="pooling",
        help="How a word split into several subword tokens gets one vector.",
    )  # fmt: skip
    device = None if device == "auto" else device
    try:
        model = check_offered(model)
        n_layers = _n_layers(model)
        if n_layers is None:  # a hub id: the config comes with the model
            n_layers = _encoder_with_pooling(model, device, pooling).n_layers
    except (WorkbenchError, OSError, ValueError) as exc:
        _model_error(exc, device, pooling)
        model, n_layers = None, _n_layers(None)
    options = layer_options(n_layers)
    if st.session_state.get("layers") not in options:
        st.session_state["layers"] = DEFAULT_LAYERS if DEFAULT_LAYERS in options else options[0]
    layers = side.selectbox(
        "Layers", options, key="layers",
        help="Which hidden states make a word's vector: one layer (0 = embedding output) or "
        "the sum / mean of the last four.",
    )  # fmt: skip
    st.session_state["facts_box"] = side.empty()
    settings = Settings(model, device, pooling, layers)
    st.session_state["settings"] = settings
    return settings


def view_settings(
    view: str,
    layer: str,
    correction: str = "none",
    reference: str = "",
    data: dict | None = None,
    projection: ProjectionConfig | None = None,
) -> ViewSettings:
    """The settings an export of a view made with the sidebar's model carries (model,
    fingerprint, pooling and dtype from the loaded encoder)."""
    enc = encoder()
    return ViewSettings(
        view=view, model=str(enc.name), fingerprint=str(enc.fingerprint), pooling=enc.pooling,
        layer=str(layer), correction=correction,
        reference=reference if correction != "none" else "", projection=projection,
        seed=projection.random_state if projection is not None else None, data=dict(data or {}),
        dtype=enc.dtype_name,
    )  # fmt: skip


def sidebar_facts() -> None:
    """Fill the sidebar's facts box with the current model's facts (loads it if needed)."""
    s = current()
    box = st.session_state.get("facts_box") or st.sidebar.empty()
    try:
        enc = _encoder_with_pooling(s.model, s.device, s.pooling)
    except WorkbenchError as exc:
        box.error(plain(exc), icon=":material/warning:")
        return
    facts = enc.describe()
    box.markdown(
        f"**{plain(facts['model'])}**  \n"
        f"{plain(facts['architecture'])} · {facts['layers']} layers · {facts['dim']} dims  \n"
        f"{facts['parameters'] / 1e6:.1f} M parameters · max {facts['max_length']} tokens  \n"
        f"{facts['device']} · {facts['dtype']} · weights `{facts['fingerprint'][:12]}`"
    )
