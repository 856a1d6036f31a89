"""The model a page uses: loaded once per process and model/device (``st.cache_resource``),
shared by every session; its layer count read from a local model's config without loading it.

Example::

    enc = encoder()                         # the sidebar's model; an error stops the page
    enc = encoder_for(Settings())           # the packaged model (raises; the server's preload)
"""

from __future__ import annotations

import copy
import json
from pathlib import Path

import streamlit as st

import workbench
from webapp.feedback import user_errors
from webapp.offered_models import check_offered
from webapp.settings import Settings, current
from workbench.encoding.models import resolve_model
from workbench.errors import ModelLoadError

#: The (model, device) pairs whose encoder this process has loaded (:func:`is_loaded`).
_loaded: set[tuple[str | None, str | None]] = set()


@st.cache_resource(show_spinner="Loading the model…", max_entries=3)
def _load_encoder(model: str | None, device: str | None):
    # through the lazy public API: torch is imported here, in the preload thread, not when the
    # app starts (the page draws meanwhile)
    enc = workbench.Encoder(model=model, device=device)
    _loaded.add((model, device))
    return enc


def is_loaded(settings: Settings) -> bool:
    """Whether the model of ``settings`` is loaded in this process already (asking for it
    then costs nothing)."""
    return (settings.model, settings.device) in _loaded


@st.cache_resource(max_entries=6)
def loaded_encoder(model: str | None, device: str | None, pooling: str):
    """The encoder of ``model`` on ``device`` with ``pooling`` as its default, loaded once per
    process (a pooling other than the loaded one shares the weights); raises as loading does."""
    base = _load_encoder(model, device)
    if base.pooling == pooling:
        return base
    enc = copy.copy(base)  # shares the loaded weights; only the default pooling differs
    enc.pooling = pooling
    return enc


def encoder_for(settings: Settings):
    """The loaded encoder of ``settings`` (raises as loading does; the server's preload)."""
    return loaded_encoder(settings.model, settings.device, settings.pooling)


def encoder(settings: Settings | None = None):
    """The loaded encoder of ``settings`` (default: the sidebar's); errors stop the page."""
    s = settings or current()
    with user_errors():
        check_offered(s.model)
        return encoder_for(s)


@st.cache_resource(max_entries=8)
def model_layer_count(model: str | None) -> int | None:
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
