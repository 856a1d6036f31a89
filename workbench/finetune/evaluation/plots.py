"""Figures of fine-tuning: the live training curve, and a lemma's sense clusters before/after.

Builders return plotly figures and never call ``show()``.

Example::

    log = TrainingLog()
    finetune(..., callback=log.update)
    training_figure(log, metric="accuracy")
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import plotly.graph_objects as go

from workbench.corpora.occurrences import Occurrence, encode_occurrences
from workbench.encoding.encoder import Encoder
from workbench.escaping import plotly_text
from workbench.viz import plotting
from workbench.viz.projection import ProjectionConfig, Projector


@dataclass
class TrainingLog:
    """Collects the loop's callback events (see :func:`workbench.finetune.training.loop.fit`).

    Attributes:
        steps: ``(epoch position, loss)`` per batch, the position fractional (1.5 = mid epoch 2).
        epochs: one dict per finished epoch (``epoch``, ``train_loss``, ``dev`` metrics, ...).
    """

    steps: list[tuple[float, float]] = field(default_factory=list)
    epochs: list[dict[str, Any]] = field(default_factory=list)

    def update(self, event: dict[str, Any]) -> None:
        """The callback: record a ``step`` or an ``epoch`` event."""
        if event["event"] == "step":
            where = event["epoch"] - 1 + event["batch"] / max(event["n_batches"], 1)
            self.steps.append((where, float(event["loss"])))
        elif event["event"] == "epoch":
            self.epochs.append(event)


def _smooth(values: np.ndarray, window: int) -> np.ndarray:
    if len(values) < window or window < 2:
        return values
    kernel = np.ones(window) / window
    head = np.cumsum(values[: window - 1]) / np.arange(1, window)
    return np.concatenate([head, np.convolve(values, kernel, mode="valid")])


def training_figure(log: TrainingLog, metric: str, title: str = "Training") -> go.Figure:
    """Training loss per batch (smoothed) and the dev metric per epoch, on two y axes."""
    fig = go.Figure()
    if log.steps:
        x, y = np.array(log.steps).T
        fig.add_trace(
            go.Scatter(
                x=x, y=y, mode="lines", name="loss (batch)", opacity=0.3, line=dict(color="#888")
            )
        )
        fig.add_trace(
            go.Scatter(
                x=x,
                y=_smooth(y, 20),
                mode="lines",
                name="loss (smoothed)",
                line=dict(color="#1f77b4", width=3),
            )
        )
    if log.epochs:
        ex = [e["epoch"] for e in log.epochs]
        ey = [e["dev"].get(metric) for e in log.epochs]
        fig.add_trace(
            go.Scatter(
                x=ex,
                y=ey,
                mode="lines+markers",
                name=f"dev {metric}",
                yaxis="y2",
                line=dict(color="#d62728", width=3),
                marker=dict(size=10),
            )
        )
    fig.update_layout(
        title=plotly_text(title),
        height=380,
        margin=dict(t=50),
        xaxis_title="epoch",
        yaxis=dict(title="training loss"),
        yaxis2=dict(title=f"dev {metric}", overlaying="y", side="right", showgrid=False),
        legend=dict(orientation="h", y=-0.25),
    )
    return fig


def sense_clusters(
    encoders: Mapping[str, Encoder],
    occurrences: Sequence[Occurrence],
    layer: str,
    config: ProjectionConfig,
) -> dict[str, go.Figure]:
    """One sense scatter per model of the same occurrences at the same layer.

    Args:
        encoders: label -> :class:`workbench.Encoder` (e.g. ``{"base": ..., "tuned": ...}``).
        occurrences: :class:`workbench.corpora.occurrences.Occurrence` list (with sense labels).
        layer: a layer spec (``"-1"``, ``"last4-sum"``, ...).
        config: a :class:`workbench.viz.projection.ProjectionConfig`.

    Returns:
        label -> plotly figure; colours of a sense agree across the figures.
    """

    labels = [o.label or "(no label)" for o in occurrences]
    hover = [
        plotting.hover_text(o.words, o.index, "", lab)
        for o, lab in zip(occurrences, labels, strict=True)
    ]
    categories = sorted(set(labels))
    figures = {}
    for name, enc in encoders.items():
        vectors = encode_occurrences(enc, occurrences).emb.select(layer)
        coords = Projector(config).fit_transform(vectors)
        figures[name] = plotting.sense_scatter(
            coords, labels, hover, categories=categories, title=f"{name}: layers {layer}"
        )
    return figures
