"""Plotly figure builders for the workbench. They return figures and never call ``show()``.

Every builder takes plain arrays with documented shapes plus parallel label lists, so the app,
the CLI's HTML reports and notebooks share them::

    from workbench.viz.plotting import sense_scatter, hover_text
    hover = [hover_text(words, i, gloss) for words, i, gloss in rows]
    fig = sense_scatter(coords, labels, hover, title="bank, layer 6")   # coords (n, 2|3)
    fig.write_html("bank.html")

Titles, legend names, panel titles and labels are taken as plain text and escaped here
(:func:`workbench.escaping.plotly_text`: plotly would draw a label's ``<a href>`` as a live
link); hover texts are plotly text, made by :func:`hover_text` (which escapes what it puts in).
"""

from __future__ import annotations

import textwrap
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import plotly.graph_objects as go
from plotly.colors import qualitative
from plotly.subplots import make_subplots

from workbench.errors import InputError
from workbench.escaping import plotly_text
from workbench.figure_dicts import axis_names, colorscale, figure, subplot_row

#: Colours for categories (senses): colour-blind-friendly first, then more.
PALETTE: tuple[str, ...] = tuple(qualitative.Safe) + tuple(qualitative.Dark24)
#: Line styles in order, for lines told apart by style within one colour (corrections, models).
DASHES: tuple[str, ...] = ("solid", "dash", "dot", "dashdot")
#: Diverging colour scale for cosine similarity.
SIMILARITY_SCALE = "RdBu_r"
_FONT = dict(size=14)


# --------------------------------------------------------------------------- text helpers


def mark_word(words: Sequence[str], index: int, left: str = "<b>[", right: str = "]</b>") -> str:
    """The sentence with word ``index`` marked, escaped for plotly (for hover text).

    >>> mark_word(["a", "bank", "<x>"], 1)
    'a <b>[bank]</b> &lt;x&gt;'
    """
    if not 0 <= index < len(words):
        raise InputError(f"word index {index} outside a sentence of {len(words)} words")
    parts = [plotly_text(w) for w in words]
    parts[index] = f"{left}{parts[index]}{right}"
    return " ".join(parts)


def wrap_html(text: str, width: int = 70) -> str:
    """Break a long line into ``<br>``-separated lines of at most ``width`` characters."""
    return "<br>".join(textwrap.wrap(text, width=width, break_long_words=False)) or text


def hover_text(words: Sequence[str], index: int, gloss: str = "", label: str = "") -> str:
    """Hover text of one occurrence: the sentence with the word marked, then label and gloss."""
    lines = [wrap_html(mark_word(words, index))]
    if label:
        lines.append(f"<i>{plotly_text(label)}</i>")
    if gloss:
        lines.append(wrap_html(plotly_text(gloss)))
    return "<br>".join(lines)


def color_map(labels: Sequence[str]) -> dict[str, str]:
    """A stable colour per distinct label, in order of first appearance."""
    unique = list(dict.fromkeys(labels))
    return {lab: PALETTE[i % len(PALETTE)] for i, lab in enumerate(unique)}


def _short(text: str, width: int = 48) -> str:
    return text if len(text) <= width else text[: width - 1] + "…"


# --------------------------------------------------------------------------- heatmaps


def similarity_heatmaps(
    panels: Sequence[tuple[str, np.ndarray]],
    row_labels: Sequence[str],
    layer_labels: Sequence[str],
    fit_scale: bool = False,
    show_values: bool = True,
) -> go.Figure:
    """Several ``(title, sim)`` heatmaps side by side on one shared colour scale.

    Each ``sim`` is ``(n_occurrences, n_layers)``; e.g. raw vs standardized. The colour scale
    is the full cosine range -1 ... 1, or with ``fit_scale`` the panels' lowest value (down to
    a tenth) ... 1: contextual vectors are anisotropic, most of their cosines lie between 0.3
    and 1, where the full scale shows one colour. Each cell is labelled with its value, in
    smaller type as layers multiply and not at all past 26 layers, nor with ``show_values=False``
    (a narrow figure, where the numbers would overlap: the hover still gives them).
    """
    if not panels:
        raise InputError("no heatmap to draw")
    n_rows, n_cols = len(row_labels), len(layer_labels)
    for title, sim in panels:
        if np.shape(sim) != (n_rows, n_cols):
            raise InputError(f"panel {title!r}: shape {np.shape(sim)} != ({n_rows}, {n_cols})")
    zrange = (-1.0, 1.0)
    if fit_scale:
        values = np.concatenate([np.asarray(sim, dtype=float).ravel() for _, sim in panels])
        if np.isfinite(values).any():
            low = float(values[np.isfinite(values)].min())
            zrange = (min(float(np.floor(low * 10) / 10), 0.9), 1.0)
    size = 14 if n_cols <= 8 else 12 if n_cols <= 13 else 10 if n_cols <= 26 else 0
    size = size if show_values else 0
    layout = subplot_row([plotly_text(t) for t, _ in panels], horizontal_spacing=0.04,
                         shared_yaxes=True)  # fmt: skip
    rows = [plotly_text(_short(r, 40)) for r in row_labels]
    columns = [plotly_text(x) for x in layer_labels]
    data = []
    for i, (_, sim) in enumerate(panels, start=1):
        xaxis, yaxis = axis_names(i)
        data.append({
            "type": "heatmap", "z": np.asarray(sim, dtype=float), "x": columns, "y": rows,
            "zmin": zrange[0], "zmax": zrange[1], "colorscale": colorscale(SIMILARITY_SCALE),
            "showscale": i == len(panels), "colorbar": {"title": {"text": "cosine"}},
            "texttemplate": "%{z:.2f}" if size else "", "textfont": {"size": size or None},
            "hovertemplate": "layer %{x}<br>%{y}<br>cosine %{z:.3f}<extra></extra>",
            "xaxis": xaxis, "yaxis": yaxis,
        })  # fmt: skip
        axis = layout["xaxis" if i == 1 else f"xaxis{i}"]
        axis.update(title={"text": "layer"}, type="category")
        layout["yaxis" if i == 1 else f"yaxis{i}"].update(autorange="reversed", type="category")
    layout.update(height=max(300, 120 + 28 * n_rows), font=dict(_FONT), margin={"t": 60})
    fig = figure(data, layout)
    return fig


# --------------------------------------------------------------------------- scatter


def label_centroids(coords: np.ndarray, labels: Sequence[str]) -> tuple[list[str], np.ndarray]:
    """Mean position of each label's points.

    Args:
        coords: ``(n_points, k)``.
        labels: ``n_points`` labels.

    Returns:
        ``(unique_labels, centroids)`` with centroids ``(n_labels, k)`` float32.
    """
    coords = np.asarray(coords, dtype=np.float32)
    labels_arr = np.asarray(labels, dtype=object)
    unique = list(dict.fromkeys(labels_arr.tolist()))
    return unique, np.stack([coords[labels_arr == lab].mean(axis=0) for lab in unique])


def _check_scatter(coords: np.ndarray, labels: Sequence[str], hover: Sequence[str]) -> np.ndarray:
    coords = np.asarray(coords, dtype=np.float32)
    if coords.ndim != 2 or coords.shape[1] not in (2, 3):
        raise InputError(f"coordinates must be (n_points, 2 or 3), got {coords.shape}")
    if not len(labels) == len(hover) == coords.shape[0]:
        raise InputError(
            f"{coords.shape[0]} points but {len(labels)} labels and {len(hover)} hover texts"
        )
    return coords


def _scatter_traces(
    coords: np.ndarray,
    labels: Sequence[str],
    hover: Sequence[str],
    colors: Mapping[str, str],
    names: Mapping[str, str],
    centroids: bool,
    legend: bool,
) -> list[dict[str, Any]]:
    """One scatter trace per label (and the centroids'), as plotly's dicts
    (:mod:`workbench.figure_dicts`)."""
    three_d = coords.shape[1] == 3
    kind = "scatter3d" if three_d else "scatter"
    labels_arr = np.asarray(labels, dtype=object)
    hover_arr = np.asarray(hover, dtype=object)
    traces = []
    for lab in dict.fromkeys(labels):
        m = labels_arr == lab
        xyz = dict(zip("xyz", coords[m].T, strict=False))
        traces.append({
            "type": kind, **xyz, "mode": "markers",
            "name": plotly_text(_short(names.get(lab, lab), 60)), "legendgroup": lab,
            "showlegend": legend,
            "marker": {"size": 5 if three_d else 9, "color": colors[lab],
                       "line": {"width": 0.5, "color": "white"}},
            "text": hover_arr[m].tolist(), "hovertemplate": "%{text}<extra></extra>",
            "customdata": np.flatnonzero(m),  # each point's row: a selection names its rows
        })  # fmt: skip
    if centroids:
        unique, cents = label_centroids(coords, labels)
        xyz = dict(zip("xyz", cents.T, strict=False))
        traces.append({
            "type": kind, **xyz, "mode": "markers", "name": "sense centroid",
            "showlegend": legend,
            "marker": {"symbol": "diamond" if three_d else "x", "size": 9 if three_d else 16,
                       "color": [colors[u] for u in unique],
                       "line": {"width": 0 if three_d else 2, "color": "black"}},
            "text": [plotly_text(names.get(u, u)) for u in unique],
            "hovertemplate": "centroid of %{text}<extra></extra>",
        })  # fmt: skip
    return traces


def sense_scatter(
    coords: np.ndarray,
    labels: Sequence[str],
    hover: Sequence[str],
    title: str = "",
    names: Mapping[str, str] | None = None,
    centroids: bool = True,
    categories: Sequence[str] | None = None,
    subtitle: str = "",
) -> go.Figure:
    """Scatter of projected occurrences coloured by (gold or predicted) sense.

    Args:
        coords: ``(n_points, 2)`` or ``(n_points, 3)`` projected coordinates.
        labels: ``n_points`` sense labels (sense keys or any strings).
        hover: ``n_points`` hover texts (see :func:`hover_text`).
        title: figure title.
        names: optional label -> legend text (e.g. ``"bank%1:17:01:: sloping land"``).
        centroids: draw each label's centroid as a large cross.
        categories: every label in colour order (default: order of appearance); pass the
            same list to two figures (gold vs predicted) to give a sense the same colour.
        subtitle: a second title line, smaller.
    """
    coords = _check_scatter(coords, labels, hover)
    colors = color_map([*(categories or []), *labels])
    traces = _scatter_traces(coords, labels, hover, colors, names or {}, centroids, True)
    heading = plotly_text(title) + (f"<br><sup>{plotly_text(subtitle)}</sup>" if subtitle else "")
    layout: dict[str, Any] = {
        "title": {"text": heading}, "font": dict(_FONT), "height": 620,
        "legend": {"title": {"text": "sense"}, "itemsizing": "constant"},
        "hoverlabel": {"align": "left"}, "margin": {"t": 60},
    }  # fmt: skip
    if coords.shape[1] == 2:
        layout["xaxis"] = {"showticklabels": False, "title": {"text": ""}}
        layout["yaxis"] = {"showticklabels": False, "title": {"text": ""}, "scaleanchor": "x",
                           "scaleratio": 1}  # fmt: skip
    else:  # the axes of a projection carry no meaning
        hidden = {"showticklabels": False, "title": {"text": ""}}
        layout["scene"] = {"xaxis": hidden, "yaxis": dict(hidden), "zaxis": dict(hidden)}
    return figure(traces, layout)


#: Height of a legend line in :func:`small_multiples` (at the figures' font size), and the most
#: height a grid takes to show its whole legend (a longer legend scrolls).
LEGEND_LINE_PX = 32
MAX_GRID_PX = 900


def small_multiples(
    coords: np.ndarray,
    labels: Sequence[str],
    hover: Sequence[str],
    titles: Sequence[str],
    n_cols: int = 4,
    names: Mapping[str, str] | None = None,
    centroids: bool = True,
    categories: Sequence[str] | None = None,
) -> go.Figure:
    """One 2-D sense scatter per layer in a grid, with one shared legend; tall enough to show
    the legend whole (up to :data:`MAX_GRID_PX`), so a word with many senses lists them all.

    Args:
        coords: ``(n_panels, n_points, 2)`` (e.g. from ``projection.project_layers``).
        labels: ``n_points`` sense labels.
        hover: ``n_points`` hover texts.
        titles: ``n_panels`` panel titles (``"layer 0"`` ...).
        n_cols: panels per row.
        names: optional label -> legend text.
        centroids: draw each label's centroid.
        categories: every label in colour order (see :func:`sense_scatter`).
    """
    coords = np.asarray(coords, dtype=np.float32)
    if coords.ndim != 3 or coords.shape[2] != 2 or coords.shape[0] != len(titles):
        raise InputError(f"expected ({len(titles)}, n_points, 2) coordinates, got {coords.shape}")
    n_cols = max(1, min(n_cols, coords.shape[0]))
    n_rows = -(-coords.shape[0] // n_cols)
    fig = make_subplots(rows=n_rows, cols=n_cols, subplot_titles=[plotly_text(t) for t in titles],
                        horizontal_spacing=0.02, vertical_spacing=0.08)  # fmt: skip
    colors = color_map([*(categories or []), *labels])
    for i, panel in enumerate(coords):
        _check_scatter(panel, labels, hover)
        for trace in _scatter_traces(panel, labels, hover, colors, names or {}, centroids, i == 0):
            fig.add_trace(trace, row=i // n_cols + 1, col=i % n_cols + 1)
    fig.update_xaxes(showticklabels=False)
    fig.update_yaxes(showticklabels=False)
    lines = 1 + len(dict.fromkeys(labels)) + centroids  # the legend's title and entries
    height = max(260 * n_rows + 80, min(LEGEND_LINE_PX * lines + 140, MAX_GRID_PX))
    fig.update_layout(height=height, font=_FONT, legend=dict(title="sense"),
                      hoverlabel=dict(align="left"), margin=dict(t=60))  # fmt: skip
    return fig


# --------------------------------------------------------------------------- bars and lines


#: The answer's colour in :func:`candidate_bars`, the other candidates', the set-aside ones'.
ANSWER_COLOUR, CANDIDATE_COLOUR, SET_ASIDE_COLOUR = "#D55E00", "#88A9C3", "#D3D3D3"


def candidate_bars(
    names: Sequence[str],
    scores: Sequence[float],
    glosses: Sequence[str] | None = None,
    chosen: str | None = None,
    title: str = "",
    x_title: str = "cosine similarity to the sense's vector",
    set_aside: Sequence[str] = (),
    set_aside_reason: str = "set aside",
) -> go.Figure:
    """Horizontal bars of candidate senses' scores: the answer first (on top, in its own colour,
    marked "★ the answer" right of its bar), then the candidates it was chosen among, best first,
    then the ones set aside before choosing (e.g. senses of another part of speech), best first,
    in grey, hatched, named in the legend with ``set_aside_reason``. So the longest bar may be
    set aside, and the chart says so.

    Args:
        names: ``n_candidates`` sense labels (sense keys).
        scores: ``n_candidates`` scores.
        glosses: optional ``n_candidates`` glosses (shown on hover and next to the key).
        chosen: the answer's label.
        title: figure title.
        x_title: x-axis title.
        set_aside: the labels of the candidates not chosen among.
        set_aside_reason: their legend entry (why they were set aside).

    Example::

        fig = candidate_bars(["bank%1:17:01::", "bank%2:..."], [0.4, 0.9], chosen="bank%1:17:01::",
                             set_aside=["bank%2:..."], set_aside_reason="verbs: the word is a noun")
        # fig.data: the answer, (no other candidates: no trace), the set-aside bars, the mark
    """
    if len(names) != len(scores) or (glosses is not None and len(glosses) != len(names)):
        raise InputError("candidate names, scores and glosses must have the same length")
    if not names:
        raise InputError("no candidate senses to draw")
    glosses = list(glosses) if glosses is not None else [""] * len(names)
    aside = set(set_aside)
    by_score = [int(i) for i in np.argsort(-np.asarray(scores, dtype=float), kind="stable")]
    groups = (
        ("the answer", [i for i in by_score if names[i] == chosen], ANSWER_COLOUR, ""),
        ("other candidates", [i for i in by_score if names[i] != chosen and names[i] not in aside],
         CANDIDATE_COLOUR, ""),
        (set_aside_reason, [i for i in by_score if names[i] != chosen and names[i] in aside],
         SET_ASIDE_COLOUR, "/"),
    )  # fmt: skip
    label = [
        plotly_text(f"{names[i]}  {_short(glosses[i], 40)}".strip()) for i in range(len(names))
    ]
    data: list[dict[str, Any]] = []
    for name, rows, colour, pattern in groups:
        if not rows:
            continue
        data.append({
            "type": "bar", "x": [float(scores[i]) for i in rows], "y": [label[i] for i in rows],
            "orientation": "h", "name": plotly_text(name),
            "marker": {"color": colour, "pattern": {"shape": pattern}},
            "text": [f"{float(scores[i]):.3f}" for i in rows], "textposition": "auto",
            "customdata": [wrap_html(plotly_text(glosses[i])) for i in rows],
            "hovertemplate": "%{y}<br>score %{x:.3f}<br>%{customdata}<extra>" + plotly_text(name)
            + "</extra>",
        })  # fmt: skip
    order = [label[i] for _, rows, _, _ in groups for i in rows]  # top to bottom
    if chosen in names:
        at = names.index(chosen)
        data.append({  # the mark, right of the bar's end (of 0 for a negative one)
            "type": "scatter", "x": [max(float(scores[at]), 0.0)], "y": [label[at]],
            "mode": "text", "name": "the answer", "showlegend": False,
            "text": ["  ★ the answer"], "textposition": "middle right",
            "textfont": {"color": ANSWER_COLOUR, "size": 15}, "hoverinfo": "skip",
        })  # fmt: skip
    lo, hi = float(np.min(scores)), float(np.max(scores))
    if lo > 0 and hi > lo:  # close positive scores: zoom in so that differences show
        start = max(0.0, lo - 0.5 * (hi - lo))
        x_range = [start, hi + 0.25 * (hi - start)]
        x_title = f"{x_title} (axis starts at {start:.2f})"
    else:  # room for the answer's label right of its bar
        x_range = [min(lo, 0.0) * 1.08, hi + 0.25 * (hi - min(lo, 0.0))]
    layout = {
        "title": {"text": plotly_text(title)}, "font": dict(_FONT),
        "xaxis": {"title": {"text": plotly_text(x_title)}, "range": x_range},
        "yaxis": {"categoryorder": "array", "categoryarray": order, "autorange": "reversed"},
        "barmode": "overlay", "legend": {"orientation": "h", "yanchor": "bottom", "y": 1.0, "x": 0},
        "height": max(260, 110 + 36 * len(names)), "margin": {"l": 10, "t": 90},
    }  # fmt: skip
    return figure(data, layout)


def layer_lines(
    series: Mapping[str, Sequence[float]],
    layer_labels: Sequence[str],
    title: str = "",
    y_title: str = "",
    colors: Sequence[int] | None = None,
    dashes: Sequence[str] | None = None,
) -> go.Figure:
    """One line per named series over layers (e.g. anisotropy raw vs standardized).

    Args:
        series: name -> ``n_layers`` values.
        layer_labels: ``n_layers`` x labels.
        title: figure title.
        y_title: y-axis title.
        colors: per series, its colour's place in the palette (default: one colour each);
            series that share a colour also share a legend group (one click shows or hides them).
        dashes: per series, its plotly dash style (default: all solid).
    """
    n = len(series)
    colors = list(range(n)) if colors is None else list(colors)
    dashes = ["solid"] * n if dashes is None else list(dashes)
    if len(colors) != n or len(dashes) != n:
        raise InputError(
            f"{n} series need {n} colours and dashes, not {len(colors)} and {len(dashes)}"
        )
    fig = go.Figure()
    for (name, values), color, dash in zip(series.items(), colors, dashes, strict=True):
        if len(values) != len(layer_labels):
            raise InputError(f"series {name!r} has {len(values)} values, not {len(layer_labels)}")
        fig.add_trace(go.Scatter(x=[plotly_text(x) for x in layer_labels],
                                 y=[float(v) for v in values],
                                 mode="lines+markers", name=plotly_text(name),
                                 legendgroup=str(color),
                                 line=dict(color=PALETTE[color % len(PALETTE)], width=3,
                                           dash=dash)))  # fmt: skip
    fig.update_layout(title=plotly_text(title), font=_FONT, xaxis_title="layer",
                      yaxis_title=plotly_text(y_title),
                      xaxis_type="category", height=420, margin=dict(t=60))  # fmt: skip
    return fig


def ring_points(fig: go.Figure, coords: np.ndarray, rows: Sequence[int], name: str) -> go.Figure:
    """Draw a black ring around the points ``rows`` of a 2-D scatter (a search's hits, a
    clicked point's neighbours), as one more legend entry; returns ``fig``."""
    picked = np.asarray(rows, dtype=np.int64)
    if len(picked) and np.asarray(coords).shape[1] == 2:
        xy = np.asarray(coords)[picked]
        fig.add_trace(go.Scatter(
            x=xy[:, 0], y=xy[:, 1], mode="markers", name=plotly_text(f"{name} ({len(picked)})"),
            marker=dict(size=17, color="rgba(0,0,0,0)", line=dict(color="black", width=2.5)),
            customdata=picked, hoverinfo="skip",
        ))  # fmt: skip
    return fig


def selected_rows(event: object) -> list[int]:
    """The table rows of a Streamlit plotly selection event (points, box or lasso), in order,
    each once; empty when nothing is selected."""
    selection = getattr(event, "selection", None)
    if selection is None and isinstance(event, dict):
        selection = event.get("selection")
    points = (selection or {}).get("points", []) if isinstance(selection, dict) else []
    if not points and selection is not None:
        points = getattr(selection, "points", []) or []
    rows = []
    for p in points:
        data = p.get("customdata") if isinstance(p, dict) else None
        if isinstance(data, list):
            data = data[0] if data else None
        if isinstance(data, int | float):
            rows.append(int(data))
    return list(dict.fromkeys(rows))
