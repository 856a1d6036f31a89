"""Figures built from plain dicts (``workbench.figure_dicts``) are the figures plotly's
validating constructors make: each builder's figure equals its own validated copy (plotly's
validators, given the figure's dicts, change nothing), the subplot layouts are
``make_subplots``', and a built figure validates what a caller changes next."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import plotly.graph_objects as go
import plotly.io as pio
import pytest
from plotly.subplots import make_subplots

from workbench.figure_dicts import colorscale, figure, named_template, subplot_row
from workbench.geometry.analysis import GeometryConfig, analyze_layers
from workbench.geometry.corrections import Standardizer
from workbench.geometry.figures import anisotropy_figure, rogue_figure, similarity_figure
from workbench.geometry.separation import separation_by_layer
from workbench.viz.corpus_figures import corpus_figure
from workbench.viz.corpus_map import CorpusMap, CorpusMapConfig
from workbench.viz.plotting import candidate_bars, sense_scatter, similarity_heatmaps
from workbench.viz.sense_figures import separation_figure


def _json(fig: go.Figure) -> dict:
    return json.loads(pio.to_json(fig, validate=False))


def _as_validated(fig: go.Figure) -> dict:
    """The figure's dicts through plotly's validating constructor."""
    return _json(go.Figure(fig.to_dict()))


def _geometry():
    rng = np.random.default_rng(1)
    vectors = rng.standard_normal((300, 3, 16)).astype(np.float32)
    words = [f"w{i % 40}" for i in range(300)]
    return analyze_layers(vectors, words, np.repeat(np.arange(30), 10), [0, 1, 2],
                          GeometryConfig(n_pairs=1000))  # fmt: skip


def _corpus_map(n: int) -> CorpusMap:
    table = pd.DataFrame({
        "word": [f"w<{i % 50}>" for i in range(n)], "lemma": [f"l{i % 40}" for i in range(n)],
        "pos": [("NOUN", "VERB", "")[i % 3] for i in range(n)],
        "sense": [("", f"k{i % 30}")[i % 2] for i in range(n)],
        "supersense": [("", f"noun.n{i % 25}")[i % 2] for i in range(n)],
    })  # fmt: skip
    coords = np.random.default_rng(2).standard_normal((n, 2)).astype(np.float32)
    return CorpusMap(coords, table, [], CorpusMapConfig())


def _builders():
    rng = np.random.default_rng(0)
    panels = [("raw <vectors>", rng.random((4, 7))), ("standardized", rng.random((4, 7)) - 0.5)]
    rows = ["1: a bank", "2: <b>", "3: " + "c" * 50, "4: d"]
    coords2, coords3 = rng.standard_normal((30, 2)), rng.standard_normal((30, 3))
    labels, hover = [f"s{i % 3}" for i in range(30)], [f"h<{i}>" for i in range(30)]
    vectors = rng.standard_normal((60, 3, 16)).astype(np.float32)
    senses = [f"s{i % 3}" for i in range(60)]
    raw = separation_by_layer(vectors, senses, [0, 1, 2])
    fixed = separation_by_layer(vectors, senses, [0, 1, 2], post=Standardizer().fit(vectors))
    result = _geometry()
    names = ["bank%1:17:01::", "bank%2:40:00::", "bank%1:14:00::"]
    return {
        "heatmaps": lambda: similarity_heatmaps(panels, rows, list("0123456"), fit_scale=True),
        "one heatmap, no values": lambda: similarity_heatmaps(panels[:1], rows, list("0123456"),
                                                              show_values=False),
        "scatter 2-D": lambda: sense_scatter(coords2, labels, hover, title="t", subtitle="s",
                                             names={"s1": "one"}),  # fmt: skip
        "scatter 3-D": lambda: sense_scatter(coords3, labels, hover, centroids=False),
        "separation": lambda: separation_figure({"a": raw, "b": fixed}, title="T"),
        "anisotropy": lambda: anisotropy_figure(result),
        "similarity": lambda: similarity_figure(result, "zscore"),
        "rogue": lambda: rogue_figure(result, 1),
        "bars": lambda: candidate_bars(names, [0.4, 0.9, 0.7], ["a", "b", "c"], chosen=names[0],
                                       set_aside=[names[1]], set_aside_reason="verbs"),
        "bars, negative": lambda: candidate_bars(names, [-0.2, 0.5, 0.1]),
        "corpus map": lambda: corpus_figure(_corpus_map(300), "sense", [3, 5], legend="x"),
        "corpus map, WebGL": lambda: corpus_figure(_corpus_map(5000), "pos", title="T"),
    }  # fmt: skip


@pytest.mark.parametrize("name", list(_builders()))
def test_each_builder_s_figure_is_what_plotly_s_validators_make_of_it(name):
    fig = _builders()[name]()
    assert fig.data and _json(fig) == _as_validated(fig)


@pytest.mark.parametrize("n_cols", [1, 2, 3])
@pytest.mark.parametrize(("spacing", "shared"), [(None, False), (0.04, True)])
def test_a_row_of_subplots_is_make_subplots_layout(n_cols, spacing, shared):
    titles = [f"panel <{i}>" for i in range(n_cols)]
    made = make_subplots(rows=1, cols=n_cols, subplot_titles=titles, shared_yaxes=shared,
                         horizontal_spacing=spacing).to_plotly_json()["layout"]  # fmt: skip
    made.pop("template")
    assert json.loads(json.dumps(subplot_row(titles, spacing, shared))) == json.loads(
        json.dumps(made)
    )


def test_named_templates_and_colour_scales_are_the_validated_ones():
    white = go.Figure(layout={"template": "plotly_white"}).to_plotly_json()["layout"]["template"]
    assert _json(go.Figure(layout={"template": named_template("plotly_white")})) == _json(
        go.Figure(layout={"template": white})
    )
    scale = go.Heatmap(colorscale="RdBu_r").to_plotly_json()["colorscale"]
    assert json.loads(json.dumps(colorscale("RdBu_r"))) == json.loads(json.dumps(scale))
    assert colorscale("RdBu_r")[0][0] == 0.0 and colorscale("RdBu_r")[-1][0] == 1.0


def test_unset_values_are_left_out_and_later_changes_are_validated():
    fig = figure([{"type": "bar", "x": [1], "y": [2], "textfont": {"size": None}}],
                 {"title": {"text": "t"}, "margin": {}, "height": None})  # fmt: skip
    assert _json(fig) == _as_validated(fig)
    assert "textfont" not in _json(fig)["data"][0] and "margin" not in _json(fig)["layout"]
    fig.update_layout(legend={"title": "sense"})  # a title given as text, coerced as usual
    assert _json(fig)["layout"]["legend"] == {"title": {"text": "sense"}}
    with pytest.raises(ValueError):
        fig.update_layout(not_a_property=1)
    with pytest.raises(ValueError):
        fig.data[0].update(not_a_property=1)
