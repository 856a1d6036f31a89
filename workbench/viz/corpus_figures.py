"""Plotly figures of a corpus map (:mod:`workbench.viz.corpus_map`): every word a point, coloured by
a column of the map's table (POS, supersense, sense, lemma), the words a search found ringed.
Past :data:`WEBGL_FROM` points the figure draws with WebGL (``Scattergl``).

The rings are the layout's shapes and their count is in the title, not a trace: a new search
changes the layout alone, which a chart kept in the browser redraws without touching the
points (:mod:`webapp.kept_chart`).

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
#: Most found words ringed (a seeded sample past it; the title says so): each ring is an SVG
#: shape, and some thousands of them take longer to draw than the map's points.
MAX_RINGS = 500
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
    max_rings: int = MAX_RINGS,
) -> go.Figure:
    """Every word of ``cmap`` as a point coloured by the table's ``colour`` column, the rows
    ``found`` (a search) each ringed in black: ``layout.shapes``, one circle of fixed pixel size
    anchored at the point (at most ``max_rings``, a seeded sample past it), their count in
    the title. Past ``max_points`` words a seeded sample of ``max_points`` is drawn (the
    title says so): a plotly figure of more points is too large to send to a browser; only the
    found words in the sample are ringed, and the title counts those and all that were found.
    ``legend``: the legend's title (default the column's name; e.g. "predicted sense" for
    labels a WSD system gave).

    Example: ``corpus_figure(cmap, "pos", [3, 9], title="demo")`` has one trace per POS and
    two circles in ``layout.shapes``; its title reads "demo · 2 found, ringed".

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
    shown = found if len(rows) == len(cmap.table) else found[np.isin(found, rows)]
    shapes, title = _rings(cmap, (shown, len(found)), size + 6, (max_rings, seed), title)
    hidden = {"showticklabels": False, "title": {"text": ""}}
    layout = {
        "title": {"text": plotly_text(title), "x": 0, "xanchor": "left"}, "height": 720,
        "dragmode": "lasso", "shapes": shapes or None,  # None: not in the figure
        "legend": {"title": {"text": plotly_text(legend or colour)}, "itemsizing": "constant"},
        "margin": {"t": 50, "l": 10, "r": 10, "b": 10}, "hoverlabel": {"align": "left"},
        "xaxis": hidden, "yaxis": {**hidden, "scaleanchor": "x", "scaleratio": 1},
    }  # fmt: skip
    return figure(data, layout)


def _rings(
    cmap: CorpusMap,
    found: tuple[np.ndarray, int],
    diameter: int,
    sample: tuple[int, int],
    title: str,
) -> tuple[list[dict], str]:
    """The layout's circles around the drawn rows of ``found`` (those rows, and how many were
    found in all; ``diameter`` pixels; past ``sample``'s most, that many drawn with its seed)
    and ``title`` with their count."""
    drawn, total = found
    if not total:
        return [], title
    most, seed = sample
    ringed = drawn
    where = "" if len(drawn) == total else f", {len(drawn):,} of them in the sample drawn"
    if len(drawn) > most:
        ringed = np.sort(np.random.default_rng(seed).choice(drawn, most, replace=False))
        count = f"{total:,} found{where}, a sample of {most:,} ringed"
    else:
        count = f"{total:,} found{where}, ringed"
    r = diameter / 2
    shapes = [
        {"type": "circle", "xref": "x", "yref": "y", "xsizemode": "pixel", "ysizemode": "pixel",
         "xanchor": float(x), "yanchor": float(y), "x0": -r, "x1": r, "y0": -r, "y1": r,
         "line": {"color": "black", "width": 2}, "layer": "above"}
        for x, y in cmap.coords[ringed]
    ]  # fmt: skip
    return shapes, f"{title} · {count}" if title else count
