"""Plotly figures of a corpus map (:mod:`workbench.viz.corpus_map`): every word a point, coloured by
a column of the map's table (POS, supersense, sense, lemma), the words a search found drawn on
top, ringed. Past :data:`WEBGL_FROM` points the figure draws with WebGL (``Scattergl``).

Each point's ``customdata`` is its row in the map's table, so a selection (a click, a box, a
lasso) names the rows it holds (:func:`workbench.viz.plotting.selected_rows`).

Example::

    fig = corpus_figure(cmap, colour="pos", found=cmap.search("bank"))
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import numpy as np
import plotly.graph_objects as go

from workbench.errors import InputError
from workbench.escaping import plotly_text
from workbench.figure_dicts import figure
from workbench.viz.corpus_map import CorpusMap
from workbench.viz.plotting import color_map

#: Columns of a map's table a figure can be coloured by.
COLOURS: tuple[str, ...] = ("pos", "supersense", "sense", "lemma")
#: From this many points on, a figure draws with WebGL (SVG is too slow past it).
WEBGL_FROM = 5_000
#: Categories drawn in their own colour (the most frequent); the rest share one grey.
MAX_CATEGORIES = 20
OTHER = "(other)"
NONE = "(none)"


def category_labels(values: Sequence[str], top: int = MAX_CATEGORIES) -> np.ndarray:
    """``values`` with empty ones as :data:`NONE` and all but the ``top`` most frequent other
    values as :data:`OTHER`."""
    arr = np.asarray([v if v else NONE for v in values], dtype=object)
    names, counts = np.unique(arr[arr != NONE], return_counts=True)
    keep = {n for n, _ in sorted(zip(names, counts), key=lambda p: (-p[1], p[0]))[:top]}
    return np.where(np.isin(arr, [*keep, NONE]), arr, OTHER)


def _plotly_texts(column: Iterable[object]) -> np.ndarray:
    """A column of outside text as plotly text (hover values are drawn as plotly's HTML)."""
    return np.asarray([plotly_text(v) for v in column], dtype=object)


def corpus_figure(
    cmap: CorpusMap,
    colour: str = "pos",
    found: Sequence[int] | np.ndarray = (),
    title: str = "",
    max_points: int = 200_000,
    seed: int = 0,
    legend: str = "",
) -> go.Figure:
    """Every word of ``cmap`` as a point coloured by the table's ``colour`` column, the rows
    ``found`` (a search) on top with a black ring. Past ``max_points`` words a seeded sample of
    ``max_points`` is drawn (the found rows always; the title says so): a plotly figure of
    more points is too large to send to a browser. ``legend``: the legend's title (default the
    column's name; e.g. "predicted sense" for labels a WSD system gave).

    Raises:
        InputError: ``colour`` is not one of :data:`COLOURS`.
    """
    if colour not in COLOURS:
        raise InputError(f"colour by one of {', '.join(COLOURS)}, not {colour!r}")
    table = cmap.table
    rows = np.arange(len(table))
    if len(table) > max_points:
        rows = np.sort(np.random.default_rng(seed).choice(len(table), max_points, replace=False))
        title = f"{title} (a sample of {max_points:,} of {len(table):,} words)"
        table = table.iloc[rows]
    labels = category_labels(table[colour].tolist())
    order = [c for c in dict.fromkeys(labels) if c not in (OTHER, NONE)]
    counts = {c: int((labels == c).sum()) for c in order}
    order = sorted(order, key=lambda c: -counts[c]) + [c for c in (NONE, OTHER) if c in labels]
    colours = {**color_map(order), OTHER: "#c8c8c8", NONE: "#dddddd"}
    kind = "scattergl" if len(table) >= WEBGL_FROM else "scatter"
    size = 3 if len(table) >= 100_000 else 5 if len(table) >= WEBGL_FROM else 7
    words = _plotly_texts(table["word"])
    detail = _plotly_texts(table["lemma"] + " · " + table["pos"] + " · " + table["sense"])
    data = []
    x, y = cmap.coords[rows, 0], cmap.coords[rows, 1]
    for name in order:
        mine = labels == name
        data.append({
            "type": kind, "x": x[mine], "y": y[mine], "mode": "markers",
            "name": plotly_text(f"{name} ({int(mine.sum()):,})"),
            "marker": {"color": colours[name], "size": size, "opacity": 0.75},
            "customdata": rows[mine], "text": words[mine], "hovertext": detail[mine],
            "hovertemplate": "<b>%{text}</b><br>%{hovertext}<extra></extra>",
        })  # fmt: skip
    found = np.asarray(found, dtype=np.int64)
    if len(found):
        every = cmap.table.iloc[found]
        data.append({
            "type": kind, "x": cmap.coords[found, 0], "y": cmap.coords[found, 1],
            "mode": "markers", "name": f"found ({len(found):,})",
            "marker": {"color": "rgba(0,0,0,0)", "size": size + 6,
                       "line": {"color": "black", "width": 2}},
            "customdata": found, "text": _plotly_texts(every["word"]),
            "hovertext": _plotly_texts(every["lemma"] + " · " + every["pos"] + " · "
                                       + every["sense"]),
            "hovertemplate": "<b>%{text}</b><br>%{hovertext}<extra></extra>",
        })  # fmt: skip
    hidden = {"showticklabels": False, "title": {"text": ""}}
    layout = {
        "title": {"text": plotly_text(title), "x": 0, "xanchor": "left"}, "height": 720,
        "dragmode": "lasso",
        "legend": {"title": {"text": plotly_text(legend or colour)}, "itemsizing": "constant"},
        "margin": {"t": 50, "l": 10, "r": 10, "b": 10}, "hoverlabel": {"align": "left"},
        "xaxis": hidden, "yaxis": {**hidden, "scaleanchor": "x", "scaleratio": 1},
    }  # fmt: skip
    return figure(data, layout)
