"""Plotly figures of a layer-geometry analysis
(:class:`workbench.geometry.analysis.GeometryResult`): anisotropy by layer per correction, the
similarity measures by layer, rogue dimensions.

Example::

    result = analyze_layers(emb.vectors, emb.words, emb.sentence_index, emb.layers, config)
    anisotropy_figure(result).show()
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import numpy as np
import plotly.graph_objects as go

from workbench.errors import InputError
from workbench.figure_dicts import figure, named_template
from workbench.geometry.corrections import CORRECTION_LABELS

if TYPE_CHECKING:
    from workbench.geometry.analysis import GeometryResult


def _layout(title: str, x_title: str, y_title: str, **more: object) -> dict:
    """The figures' common layout: a title, axis titles, plotly's white template, 420 px."""
    return {"title": {"text": title}, "xaxis": {"title": {"text": x_title}},
            "yaxis": {"title": {"text": y_title}}, "template": named_template("plotly_white"),
            "height": 420, **more}  # fmt: skip


def anisotropy_figure(result: GeometryResult) -> go.Figure:
    """Anisotropy by layer, one line per correction, error bars = 1.96 standard errors."""
    data = []
    for c in result.corrections:
        ms = [result.get(c, layer).anisotropy for layer in result.layers]
        data.append({
            "type": "scatter", "x": list(result.layers), "y": [m.value for m in ms],
            "mode": "lines+markers", "name": CORRECTION_LABELS[c],
            "error_y": {"type": "data", "array": [1.96 * m.sem for m in ms], "visible": True},
        })  # fmt: skip
    zero = {"type": "line", "x0": 0, "x1": 1, "xref": "x domain", "y0": 0, "y1": 0, "yref": "y",
            "line": {"color": "#888", "width": 1, "dash": "dot"}}  # fmt: skip
    layout = _layout("Anisotropy by layer (expected cosine of random word pairs)",
                     "layer (0 = embedding output)", "expected cosine", shapes=[zero])  # fmt: skip
    return figure(data, layout)


def similarity_figure(result: GeometryResult, correction: str = "none") -> go.Figure:
    """Self-similarity, intra-sentence similarity and anisotropy by layer, raw and adjusted."""
    rows = [result.get(correction, layer) for layer in result.layers]
    series = {
        "anisotropy": [r.anisotropy.value for r in rows],
        "self-similarity": [r.self_similarity.value for r in rows],
        "self-similarity adj.": [r.self_similarity_adjusted.value for r in rows],
        "intra-sentence": [r.intra_similarity.value for r in rows],
        "intra-sentence adj.": [r.intra_similarity_adjusted.value for r in rows],
    }
    data = []
    for name, values in series.items():
        dash = "dash" if name.endswith("adj.") else "solid"
        y = [None if not math.isfinite(v) else v for v in values]
        data.append({"type": "scatter", "x": list(result.layers), "y": y, "name": name,
                     "line": {"dash": dash}})  # fmt: skip
    title = f"Similarity measures by layer ({CORRECTION_LABELS[correction]} vectors)"
    return figure(data, _layout(title, "layer", "cosine"))


def rogue_figure(result: GeometryResult, layer: int) -> go.Figure:
    """Each dimension's contribution to the expected cosine at ``layer``, per correction: one
    filled step outline per correction (each dimension a step one unit wide, centred on it, the
    silhouette of a bar chart), overlaid: one SVG path per correction for the browser to draw,
    where bars were one element per dimension (768 for two corrections of a 384-dimension
    model); hovering a dimension gives its value."""
    if layer not in result.layers:
        raise InputError(f"layer {layer} was not analysed; choose from {list(result.layers)}")
    shown = {"none", "zscore"} & set(result.corrections) or {result.corrections[0]}
    data = []
    for c in result.corrections:
        contrib = result.get(c, layer).rogue.contributions
        data.append({
            "type": "scatter", "x": np.arange(contrib.size), "y": contrib, "mode": "lines",
            "line": {"shape": "hvh", "width": 1, "simplify": False}, "fill": "tozeroy",
            "hoveron": "points",
            "name": CORRECTION_LABELS[c], "visible": True if c in shown else "legendonly",
            "opacity": 0.7,
        })  # fmt: skip
    title = (f"Rogue dimensions: contribution of each dimension to the expected cosine, "
             f"layer {layer}")  # fmt: skip
    layout = _layout(title, "dimension", "mean of u_i v_i / (|u| |v|)", hovermode="x")
    return figure(data, layout)
