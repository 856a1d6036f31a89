"""Calibration of a WSD system: how often it is right as a function of its score margin.

The margin of an answer is its score's lead over the runner-up candidate
(:attr:`~workbench.wsd.predict.Prediction.runner_up_score`). :func:`margin_deciles` sorts the
answers with a margin and cuts them into ten groups of (nearly) equal size, smallest margins
first, each with its accuracy and interval; the answers without a margin (one candidate, or a
back-off) form a row of their own. :func:`calibration_figure` draws it.

Example::

    rows = margin_deciles(table)
    [(r.label, r.n, round(r.f1, 1)) for r in rows]
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import plotly.graph_objects as go

from workbench.wsd.reporting.instances import InstanceTable
from workbench.wsd.reporting.intervals import N_BOOT, SEED, bootstrap_f1

NO_MARGIN = "no runner-up or back-off"


@dataclass(frozen=True)
class MarginBin:
    """One row of the calibration table.

    Attributes:
        label: ``"1"`` ... ``"10"`` (deciles, smallest margins first) or :data:`NO_MARGIN`.
        low, high: the smallest and largest margin in it (NaN for :data:`NO_MARGIN`).
        n: answers; f1, lo, hi: F1 (the accuracy, every answer being given) and interval.
    """

    label: str
    low: float
    high: float
    n: int
    f1: float
    lo: float
    hi: float


def margin_deciles(
    table: InstanceTable, bins: int = 10, n_boot: int = N_BOOT, seed: int = SEED
) -> list[MarginBin]:
    """The accuracy per margin decile (``bins`` groups) and for the answers without one."""
    answered = table.answered
    finite = np.isfinite(table.margin) & answered
    order = np.flatnonzero(finite)[np.argsort(table.margin[finite], kind="stable")]
    rows = []
    for i, part in enumerate(np.array_split(order, bins) if len(order) else []):
        if not len(part):
            continue
        m = table.margin[part]
        f1, lo, hi = bootstrap_f1(table.credit[part], n_boot, seed)
        rows.append(MarginBin(str(i + 1), float(m.min()), float(m.max()), len(part), f1, lo, hi))
    rest = np.flatnonzero(~finite)
    if len(rest):
        f1, lo, hi = bootstrap_f1(table.credit[rest], n_boot, seed, answered=answered[rest])
        nan = float("nan")
        rows.append(MarginBin(NO_MARGIN, nan, nan, len(rest), f1, lo, hi))
    return rows


def calibration_figure(rows: list[MarginBin]) -> go.Figure:
    """Accuracy per margin decile with its 95% interval (plotly)."""
    deciles = [r for r in rows if r.label != NO_MARGIN]
    fig = go.Figure(
        go.Scatter(
            x=[f"{r.label}: {r.low:.3f}-{r.high:.3f}" for r in deciles],
            y=[r.f1 for r in deciles],
            error_y={
                "type": "data",
                "symmetric": False,
                "array": [r.hi - r.f1 for r in deciles],
                "arrayminus": [r.f1 - r.lo for r in deciles],
            },
            mode="lines+markers",
            name="accuracy",
        )
    )
    fig.update_layout(
        title="Accuracy by score margin (deciles, smallest margin first)",
        xaxis_title="decile: margin range (score - runner-up score)",
        yaxis_title="accuracy (%)",
        template="plotly_white",
    )
    return fig
