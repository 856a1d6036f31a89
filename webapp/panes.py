"""The pane machinery both comparison views share (:mod:`webapp.senses_panes`,
:mod:`webapp.explore_panes`): a pane's choices (:class:`Pane`: model, layer or layer
combination, correction), its selectors (:func:`pane_widgets`), its model settings
(:func:`pane_settings`) and its settings in the URL (:func:`pane_params`, e.g.
``pane_params("senses")`` gives ``senses_a_model``, ``senses_a_layer``, ``senses_a_corr`` and the
same for pane ``b``), and the corrections in the order offered (:data:`OFFERED_CORRECTIONS`).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

import streamlit as st

import webapp.feedback
import webapp.loaded_model
import webapp.settings
import webapp.text
from webapp.offered_models import NOT_OFFERED, check_offered, is_offered, offered_models
from webapp.urlstate import Param
from workbench.geometry.corrections import CORRECTION_LABELS, CORRECTIONS

SIDEBAR_MODEL = "(the sidebar's model)"
PACKAGED = "(packaged all-MiniLM-L6-v2)"
PANES = ("a", "b")
#: Correction names in the order offered.
OFFERED_CORRECTIONS = ("none", *(c for c in CORRECTIONS if c != "none"))


class PaneModels:
    """A pane's model choices in a link: the two named choices, or a model the server offers."""

    def __contains__(self, name: object) -> bool:
        return name in (SIDEBAR_MODEL, PACKAGED) or (isinstance(name, str) and is_offered(name))


def pane_params(prefix: str) -> tuple[Param, ...]:
    """The URL settings of both panes of a page (widget keys ``<prefix>_<pane>_...``)."""
    return tuple(
        p
        for pane in PANES
        for p in (
            Param(
                f"{prefix}_{pane}_model", f"{pane}_model", choices=PaneModels(), refusal=NOT_OFFERED
            ),
            Param(f"{prefix}_{pane}_layer", f"{pane}_layer"),
            Param(f"{prefix}_{pane}_corr", f"{pane}_corr", choices=OFFERED_CORRECTIONS),
        )
    )


@dataclass(frozen=True)
class Pane:
    """One pane's choices."""

    name: str  # "a" or "b"
    model: str | None  # None: the packaged model; else a HF id or a local directory
    layer: str  # layer spec
    correction: str  # geometry.corrections name


def model_choices() -> list[str]:
    """The models offered in a pane: the sidebar's, the packaged one, and what the server offers
    (:func:`webapp.offered_models.offered_models`: fetched models such as
    all-mpnet-base-v2, the app's fine-tuned runs, newest first, and the owner's list)."""
    return [SIDEBAR_MODEL, PACKAGED, *offered_models()]


def _model_label(choice: str) -> str:
    if choice in (SIDEBAR_MODEL, PACKAGED):
        return choice
    parts = choice.rstrip("/").split("/")
    return webapp.text.short("/".join(parts[-2:]) if len(parts) > 1 else choice, 60)


def pane_settings(pane: Pane) -> webapp.settings.Settings:
    """The model settings of a pane: its model, the sidebar's device and pooling."""
    return replace(webapp.settings.current(), model=pane.model, layers=pane.layer)


def pane_widgets(
    name: str,
    area: Any,
    default_correction: str,
    prefix: str = "senses",
    default_layer: str | None = None,
) -> Pane:
    """A pane's model, layer and correction selectors (keys ``<prefix>_<name>_...``), drawn in
    ``area``; they start with ``default_correction`` and ``default_layer`` (None, or a layer the
    pane's model lacks: the sidebar's layers)."""
    sidebar = webapp.settings.current()
    choices = model_choices()
    key = f"{prefix}_{name}_model"
    typed = st.session_state.get(key)
    if typed and typed not in choices:
        choices.append(typed)
    model_choice = area.selectbox(
        "Model", choices, key=key, format_func=_model_label, accept_new_options=True,
        help="Another model this server offers can be typed too (a Hugging Face id in its local "
        "cache). A fine-tuned model here and its base model in the other pane is the "
        "before/after view.",
    )  # fmt: skip
    model = {SIDEBAR_MODEL: sidebar.model, PACKAGED: None}.get(model_choice, model_choice)
    with webapp.feedback.user_errors(area):
        model = check_offered(model)
    n_layers = webapp.loaded_model.encoder(replace(sidebar, model=model)).n_layers
    options = webapp.settings.layer_options(n_layers)
    layer_key = f"{prefix}_{name}_layer"
    if st.session_state.get(layer_key) not in options:
        start = default_layer if default_layer in options else sidebar.layers
        st.session_state[layer_key] = start if start in options else options[0]
    layer = area.selectbox("Layers", options, key=layer_key,
                           help="One hidden state, or the sum / mean of the last 4.")  # fmt: skip
    corr_key = f"{prefix}_{name}_corr"
    st.session_state.setdefault(corr_key, default_correction)
    correction = area.selectbox("Correction", OFFERED_CORRECTIONS, key=corr_key,
                                format_func=CORRECTION_LABELS.get)  # fmt: skip
    return Pane(name, model, layer, correction)
