"""Figures of the sense views (:mod:`workbench.viz.sense_views`): one word's projected
occurrences with their separation in the title, the separation curve over layers, and several
words in one projection coloured by word, then by sense. They return plotly figures and never
call ``show()``::

    fig = sense_view_figure(view, names=sense_names(glosses))
    curve = separation_figure({"MiniLM": view.curve, "tuned": tuned.curve})
    fig = words_figure(words_view([...], "6", projection=ProjectionConfig()))
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

import numpy as np
import plotly.graph_objects as go
from plotly.colors import hex_to_rgb, qualitative, unlabel_rgb

from workbench.errors import InputError
from workbench.escaping import plotly_text
from workbench.figure_dicts import axis_names, figure, subplot_row
from workbench.geometry.corrections import CORRECTION_LABELS
from workbench.geometry.separation import MEASURE_LABELS, LayerSeparation, Separation
from workbench.viz.plotting import DASHES, PALETTE, hover_text, sense_scatter
from workbench.viz.sense_views import SenseView, WordsView

#: Marker symbols that tell a word's senses apart in the many-words view.
SYMBOLS: tuple[str, ...] = (
    "circle", "square", "diamond", "triangle-up", "cross", "x", "star", "pentagon",
    "triangle-down", "hexagon", "star-triangle-up", "hourglass",
)  # fmt: skip
#: A strong base colour per word in the many-words view (its senses get shades of it).
WORD_PALETTE: tuple[str, ...] = tuple(qualitative.D3)


def separation_text(s: Separation) -> str:
    """``"silhouette 0.12 · 1-NN 78% (chance 45%) · 180 occurrences, 4 senses"``."""
    if math.isnan(s.silhouette):
        return f"separation undefined: {s.note}"
    return (
        f"silhouette {s.silhouette:.2f} · 1-NN {100 * s.nn_accuracy:.0f}% "
        f"(chance {100 * s.chance:.0f}%) · {s.n_measured} occurrences, {s.n_senses} senses"
    )


def view_hover(view: SenseView | WordsView, glosses: Mapping[str, str] | None = None) -> list[str]:
    """Hover text of every occurrence: the sentence, its label and the label's gloss."""
    glosses = glosses or {}
    return [
        hover_text(o.words, o.index, glosses.get(lab, ""), lab)
        for o, lab in zip(view.occurrences, view.labels)
    ]


def sense_view_figure(
    view: SenseView,
    labels: Sequence[str] | None = None,
    hover: Sequence[str] | None = None,
    names: Mapping[str, str] | None = None,
    title: str = "",
    categories: Sequence[str] | None = None,
) -> go.Figure:
    """The view's projected occurrences coloured by sense, its separation in the title.

    Args:
        view: a projected :class:`~workbench.viz.sense_views.SenseView`.
        labels: colour labels (default: the gold senses; e.g. predicted senses).
        hover: hover texts (default: :func:`view_hover`).
        names: label -> legend text.
        title: the first title line (default: model, layer and correction).
        categories: every label in colour order (same colours in two panes).
    """
    if view.coords.shape[1] not in (2, 3):
        raise InputError("this view has no projection: pass a ProjectionConfig to sense_view")
    colour = [lab or "(no label)" for lab in (labels if labels is not None else view.labels)]
    heading = title or (
        f"{view.settings.model}, layer {view.layer}, "
        f"{CORRECTION_LABELS.get(view.correction, view.correction)}"
    )
    fig = sense_scatter(
        view.coords, colour, list(hover) if hover is not None else view_hover(view),
        title=heading, subtitle=separation_text(view.separation), names=names,
        categories=categories,
    )  # fmt: skip
    return fig


def separation_figure(curves: Mapping[str, LayerSeparation], title: str = "") -> go.Figure:
    """Silhouette and 1-NN sense accuracy over layers, side by side: one colour and marker per
    named curve (a pane, a model, a word), solid raw and dashed corrected, 1-NN chance dotted
    grey; each curve is drawn wider than the ones after it, so that equal curves (two panes of
    one model share their raw line) stay visible.

    Args:
        curves: name -> :class:`~workbench.geometry.separation.LayerSeparation`.
        title: figure title.
    """
    if not curves:
        raise InputError("no separation curve to draw")
    layout = subplot_row([MEASURE_LABELS["silhouette"], MEASURE_LABELS["nn_accuracy"]])
    data = []
    n = len(curves)
    for i, (name, curve) in enumerate(curves.items()):
        color = PALETTE[i % len(PALETTE)]
        width = 3 + 3 * (n - 1 - i)  # an earlier curve is wider: a later one on top leaves it seen
        symbol = ("circle", "square", "diamond", "triangle-up")[i % 4]
        x = list(curve.layers)
        for col, measure in enumerate(("silhouette", "nn_accuracy"), start=1):
            xaxis, yaxis = axis_names(col)
            for j, (correction, values) in enumerate(curve.series(measure).items()):
                label = plotly_text(f"{name}, {CORRECTION_LABELS.get(correction, correction)}")
                data.append({
                    "type": "scatter", "x": x, "y": [None if math.isnan(v) else v for v in values],
                    "mode": "lines+markers", "name": label, "legendgroup": label,
                    "showlegend": col == 1,
                    "line": {"color": color, "width": width, "dash": DASHES[j % len(DASHES)]},
                    "marker": {"symbol": symbol, "size": 6 + width},
                    "hovertemplate": f"{label}<br>layer %{{x}}: %{{y:.3f}}<extra></extra>",
                    "xaxis": xaxis, "yaxis": yaxis,
                })  # fmt: skip
        chance = [curve.get(layer).chance for layer in curve.layers]
        data.append({
            "type": "scatter", "x": x, "y": [None if math.isnan(v) else v for v in chance],
            "mode": "lines", "name": plotly_text(f"{name}, 1-NN chance"),
            "line": {"color": "#999", "width": 1.5, "dash": "dot"},
            "hovertemplate": "chance %{y:.3f}<extra></extra>", "xaxis": "x2", "yaxis": "y2",
        })  # fmt: skip
    for axis in ("xaxis", "xaxis2"):
        layout[axis].update(title={"text": "layer"}, type="category")
    layout["yaxis"]["range"] = [-0.2, 1.0]
    layout["yaxis2"].update(range=[0.0, 1.02], tickformat=".0%")
    layout.update(title={"text": plotly_text(title)}, height=420, font={"size": 14},
                  margin={"t": 80}, legend={"orientation": "h", "y": -0.2})  # fmt: skip
    return figure(data, layout)


def _shade(color: str, k: int, n: int) -> str:
    """The ``k``-th of ``n`` shades of a hex colour, from darker to lighter."""
    r, g, b = (int(c) for c in (hex_to_rgb(color) if color.startswith("#") else unlabel_rgb(color)))
    t = -0.3 + 0.85 * (k / (n - 1)) if n > 1 else 0.0  # < 0: towards black, > 0: towards white
    if t < 0:
        r, g, b = (int(c * (1 + t)) for c in (r, g, b))
    else:
        r, g, b = (int(c + (255 - c) * t * 0.8) for c in (r, g, b))
    return f"rgb({r},{g},{b})"


def words_figure(
    view: WordsView,
    hover: Sequence[str] | None = None,
    names: Mapping[str, str] | None = None,
    title: str = "",
) -> go.Figure:
    """Several words in one projection: a colour per word, a shade and a marker per sense
    (most frequent first), the legend grouped by word.

    Args:
        view: an :class:`~workbench.viz.sense_views.WordsView` with 2-D or 3-D coordinates.
        hover: hover texts (default: :func:`view_hover`).
        names: sense label -> legend text.
        title: figure title.
    """
    coords = np.asarray(view.coords, dtype=np.float32)
    if coords.ndim != 2 or coords.shape[1] not in (2, 3):
        raise InputError("this view has no projection: pass a ProjectionConfig to words_view")
    names = names or {}
    hover_arr = np.asarray(list(hover) if hover is not None else view_hover(view), dtype=object)
    lemmas = np.asarray(view.lemmas, dtype=object)
    labels = np.asarray([lab or "(no label)" for lab in view.labels], dtype=object)
    three_d = coords.shape[1] == 3
    kind = go.Scatter3d if three_d else go.Scatter
    fig = go.Figure()
    for i, lemma in enumerate(dict.fromkeys(view.lemmas)):
        base = WORD_PALETTE[i % len(WORD_PALETTE)]
        mine = lemmas == lemma
        senses, counts = np.unique(labels[mine], return_counts=True)
        order = sorted(range(len(senses)), key=lambda j: (-counts[j], senses[j]))
        sep = view.separation.get(lemma)
        group = plotly_text(f"{lemma} ({separation_text(sep)})" if sep is not None else lemma)
        for rank, j in enumerate(order):
            m = mine & (labels == senses[j])
            xyz = dict(zip("xyz", coords[m].T, strict=False))
            fig.add_trace(kind(
                **xyz, mode="markers", name=plotly_text(names.get(senses[j], senses[j])),
                legendgroup=lemma,
                legendgrouptitle_text=group if rank == 0 else None,
                marker=dict(color=_shade(base, rank, len(order)), size=5 if three_d else 9,
                            symbol=SYMBOLS[rank % len(SYMBOLS)] if not three_d else "circle",
                            line=dict(width=0.5, color="white")),
                text=hover_arr[m].tolist(), hovertemplate="%{text}<extra></extra>",
            ))  # fmt: skip
    fig.update_layout(title=plotly_text(title), font=dict(size=14), height=680,
                      hoverlabel=dict(align="left"), legend=dict(groupclick="toggleitem"),
                      margin=dict(t=60))  # fmt: skip
    if not three_d:
        fig.update_xaxes(showticklabels=False, title="")
        fig.update_yaxes(showticklabels=False, title="", scaleanchor="x", scaleratio=1)
    return fig
