"""Plotly figures built from plain dicts, without plotly's validating constructors.

``go.Scatter(...)``, ``make_subplots`` and ``update_layout(template="plotly_white")`` check
and coerce every property through plotly's validators: 50-200 ms for one of the app's figures on
a busy machine, most of a page's rerun. The builders here write each trace and the layout as
the plain dicts plotly itself would make of them (``{"title": {"text": ...}}``, colour scales
expanded, a template as its dict) and :func:`figure` wraps them in a ``go.Figure`` without
validating them again: the same figure (its JSON is the one the validating constructors give,
which ``tests/test_figure_dicts.py`` checks), made in a few milliseconds. Once made, the
figure validates later changes (``update_layout``, ``for_each_trace``) as any other does.

Example::

    fig = figure([{"type": "scatter", "x": [0, 1], "y": [2, 3], "name": "raw"}],
                 {"title": {"text": "Anisotropy"}, "template": named_template("plotly_white")})
"""

from __future__ import annotations

import copy
import functools
from collections.abc import Sequence
from typing import Any

import plotly.graph_objects as go
import plotly.io as pio
from plotly.subplots import make_subplots

Props = dict[str, Any]


def figure(data: Sequence[Props], layout: Props) -> go.Figure:
    """A ``go.Figure`` of traces and a layout given as plotly's own dicts (each trace with its
    ``type``), not validated: they must be what plotly's validators would make (plain values,
    titles as ``{"text": ...}``, colour scales as lists, a template from
    :func:`named_template`); the default template is applied as usual. Later changes to the
    figure are validated."""
    fig = go.Figure({"data": [_unset(t) for t in data], "layout": _unset(layout)},
                    _validate=False)  # fmt: skip
    # validation back on for whatever the caller changes next (plotly's own way of building
    # its default template: its top-level objects' flag off while building, then on again)
    fig._validate = True
    fig._layout_obj._validate = True
    for trace in fig.data:
        trace._validate = True
    return fig


def _unset(props: Props) -> Props:
    """``props`` without its ``None`` values and empty dicts, in nested dicts too (validated, a
    ``None`` unsets a property and an empty dict sets none: neither is in the figure)."""
    out = {}
    for key, value in props.items():
        if isinstance(value, dict):
            value = _unset(value)
        elif isinstance(value, list) and value and isinstance(value[0], dict):
            value = [_unset(v) for v in value]
        if value is not None and not (isinstance(value, dict) and not value):
            out[key] = value
    return out


def named_template(name: str) -> go.layout.Template:
    """The registered plotly template ``name`` (e.g. ``"plotly_white"``), for a layout's
    ``template``: what a validated ``template=name`` becomes (the figure takes a copy)."""
    return pio.templates[name]


@functools.cache
def _colorscale(name: str) -> tuple[tuple[float, str], ...]:
    return tuple((float(at), str(c)) for at, c in go.Heatmap(colorscale=name).colorscale)


def colorscale(name: str) -> list[list[Any]]:
    """A named plotly colour scale (e.g. ``"RdBu_r"``) as the ``[[0.0, "rgb(...)"], ...]``
    list a validated ``colorscale=name`` becomes."""
    return [[at, c] for at, c in _colorscale(name)]


@functools.cache
def _subplot_row(n_cols: int, horizontal_spacing: float | None, shared_yaxes: bool) -> Props:
    titles = [f"title {i}" for i in range(n_cols)]
    fig = make_subplots(rows=1, cols=n_cols, subplot_titles=titles, shared_yaxes=shared_yaxes,
                        horizontal_spacing=horizontal_spacing)  # fmt: skip
    layout = fig.to_plotly_json()["layout"]
    layout.pop("template", None)
    return layout


def subplot_row(
    titles: Sequence[str], horizontal_spacing: float | None = None, shared_yaxes: bool = False
) -> Props:
    """The layout ``make_subplots(rows=1, cols=len(titles), subplot_titles=titles, ...)``
    makes (the axes ``xaxis``, ``xaxis2``... side by side, each panel's title an annotation;
    ``horizontal_spacing`` by default make_subplots' ``0.2 / len(titles)``),
    as a dict to add to; the traces of panel ``i`` (from 1) name ``xaxis="x{i}"`` and
    ``yaxis="y{i}"`` (``"x"`` and ``"y"`` for the first). ``titles`` are plotly text."""
    layout = copy.deepcopy(_subplot_row(len(titles), horizontal_spacing, shared_yaxes))
    notes = zip(layout.pop("annotations"), titles, strict=True)
    layout["annotations"] = [{**note, "text": title} for note, title in notes if title]
    return layout


def axis_names(i: int) -> tuple[str, str]:
    """The x and y axes of panel ``i`` (from 1) of :func:`subplot_row` as a trace names them."""
    return ("x", "y") if i == 1 else (f"x{i}", f"y{i}")
