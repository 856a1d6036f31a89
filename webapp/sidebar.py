"""The sidebar: the model, device, subword pooling and layers every page uses (restored from a
link first), and the loaded model's facts at the end of a run.

Example::

    settings = sidebar()     # in app.py, before the page runs
    ...
    sidebar_facts()          # after it
"""

from __future__ import annotations

import streamlit as st

from webapp.loaded_model import loaded_encoder, model_layer_count
from webapp.offered_models import MAX_NAME, NOT_OFFERED, check_offered, is_offered
from webapp.settings import DEFAULT_LAYERS, Settings, current, layer_options
from webapp.text import plain
from webapp.urlstate import Param, restore
from workbench.encoding.pooling import POOLINGS
from workbench.errors import WorkbenchError

PACKAGED_LABEL = "all-MiniLM-L6-v2 (packaged)"
DEVICES = ("auto", "cpu", "cuda", "mps")


class OfferedModels:
    """The models this server offers, as a :class:`~webapp.urlstate.Param`'s choices."""

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and is_offered(name)


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
    shows the model's facts, before the page when the model is loaded already (a page may stop
    early), else at the end of the run.
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
    # the default through Session State only: a link's value (restored above) beside a
    # default ``index`` made Streamlit warn that the widget got both
    st.session_state.setdefault("pooling", Settings.pooling)
    pooling = side.selectbox(
        "Subword pooling", POOLINGS, key="pooling",
        help="How a word split into several subword tokens gets one vector.",
    )  # fmt: skip
    device = None if device == "auto" else device
    try:
        model = check_offered(model)
        n_layers = model_layer_count(model)
        if n_layers is None:  # a hub id: the config comes with the model
            n_layers = loaded_encoder(model, device, pooling).n_layers
    except (WorkbenchError, OSError, ValueError) as exc:
        _model_error(exc, device, pooling)
        model, n_layers = None, model_layer_count(None)
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


def sidebar_facts() -> None:
    """Fill the sidebar's facts box with the current model's facts (loads it if needed)."""
    s = current()
    box = st.session_state.get("facts_box") or st.sidebar.empty()
    try:
        enc = loaded_encoder(s.model, s.device, s.pooling)
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
