"""Plotting: figures carry the data they were given, with the right shapes and labels."""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go
import pytest

from workbench.errors import InputError
from workbench.viz.plotting import (
    candidate_bars,
    color_map,
    hover_text,
    label_centroids,
    layer_lines,
    mark_word,
    sense_scatter,
    similarity_heatmaps,
    small_multiples,
)


def test_mark_word_escapes_and_marks():
    assert mark_word(["a", "<b>", "bank"], 2) == "a &lt;b&gt; <b>[bank]</b>"
    with pytest.raises(InputError):
        mark_word(["a"], 3)


def test_hover_text_has_sentence_label_and_gloss():
    text = hover_text(["We", "sat", "on", "the", "bank"], 4, gloss="sloping land", label="k1")
    assert "<b>[bank]</b>" in text and "sloping land" in text and "k1" in text


def test_heatmaps_side_by_side_share_scale():
    raw = np.linspace(-1, 1, 12).reshape(3, 4)
    fig = similarity_heatmaps([("raw", raw), ("standardized", -raw)], ["a", "b", "c"], list("0123"))
    assert isinstance(fig, go.Figure)
    heat = [t for t in fig.data if isinstance(t, go.Heatmap)]
    assert len(heat) == 2
    np.testing.assert_allclose(np.asarray(heat[0].z), raw)
    np.testing.assert_allclose(np.asarray(heat[1].z), -raw)
    assert {h.zmin for h in heat} == {-1.0} and sum(bool(h.showscale) for h in heat) == 1
    titles = [a.text for a in fig.layout.annotations]
    assert titles == ["raw", "standardized"]
    with pytest.raises(InputError, match="shape"):
        similarity_heatmaps([("raw", raw)], ["a", "b"], list("0123"))


def test_heatmap_scale_fitted_to_the_values_and_cell_labels_shrink_with_layers():
    sims = np.array([[1.0, 0.62, 0.55], [0.71, 1.0, 0.48]])
    fitted = similarity_heatmaps([("raw", sims), ("z", sims + 0.1)], ["a", "b"], list("012"),
                                 fit_scale=True)  # fmt: skip
    assert {(h.zmin, h.zmax) for h in fitted.data} == {(0.4, 1.0)}  # 0.48 down to a tenth
    full = similarity_heatmaps([("raw", sims)], ["a", "b"], list("012"))
    assert (full.data[0].zmin, full.data[0].zmax) == (-1.0, 1.0)
    ones = similarity_heatmaps([("raw", np.ones((2, 3)))], ["a", "b"], list("012"), fit_scale=True)
    assert ones.data[0].zmin < ones.data[0].zmax  # never an empty scale
    blank = similarity_heatmaps([("raw", np.full((2, 3), np.nan))], ["a", "b"], list("012"),
                                fit_scale=True)  # fmt: skip
    assert (blank.data[0].zmin, blank.data[0].zmax) == (-1.0, 1.0)  # nothing to fit to

    def label_size(n_layers: int) -> tuple[int | None, str]:
        heat = similarity_heatmaps([("raw", np.zeros((1, n_layers)))], ["a"],
                                   [str(i) for i in range(n_layers)]).data[0]  # fmt: skip
        return heat.textfont.size, heat.texttemplate

    assert label_size(7) == (14, "%{z:.2f}")  # MiniLM: 7 hidden states
    assert label_size(13) == (12, "%{z:.2f}")  # mpnet
    assert label_size(25) == (10, "%{z:.2f}")  # a 24-layer model
    assert label_size(49)[1] == ""  # too many columns to label


def test_sense_scatter_one_trace_per_sense_plus_centroids():
    rng = np.random.default_rng(0)
    coords = np.concatenate([rng.normal(size=(5, 2)), rng.normal(size=(3, 2)) + 10])
    labels = ["s1"] * 5 + ["s2"] * 3
    hover = [f"h{i}" for i in range(8)]
    fig = sense_scatter(coords, labels, hover, names={"s1": "s1 river", "s2": "s2 money"})
    assert [t.name for t in fig.data] == ["s1 river", "s2 money", "sense centroid"]
    assert len(fig.data[0].x) == 5 and list(fig.data[1].text) == hover[5:]
    cent = fig.data[2]
    np.testing.assert_allclose([cent.x[1], cent.y[1]], coords[5:].mean(axis=0), rtol=1e-5)
    assert fig.data[0].marker.color != fig.data[1].marker.color


def test_sense_scatter_3d_and_errors():
    coords = np.random.default_rng(0).normal(size=(6, 3))
    fig = sense_scatter(coords, list("aabbcc"), list("123456"), centroids=False)
    assert all(isinstance(t, go.Scatter3d) for t in fig.data) and len(fig.data) == 3
    with pytest.raises(InputError, match="points"):
        sense_scatter(coords, list("aab"), list("123456"))
    with pytest.raises(InputError, match="2 or 3"):
        sense_scatter(np.zeros((6, 4)), list("aabbcc"), list("123456"))


def test_label_centroids():
    labels, cents = label_centroids(np.array([[0, 0], [2, 2], [10, 10]]), ["x", "x", "y"])
    assert labels == ["x", "y"]
    np.testing.assert_allclose(cents, [[1, 1], [10, 10]])


def test_small_multiples_grid_and_single_legend():
    coords = np.random.default_rng(0).normal(size=(7, 6, 2))
    fig = small_multiples(coords, list("aabbcc"), list("123456"), [f"layer {i}" for i in range(7)])
    assert len(fig.data) == 7 * 4  # 3 senses + centroids per panel
    assert sum(bool(t.showlegend) for t in fig.data) == 4
    assert [a.text for a in fig.layout.annotations] == [f"layer {i}" for i in range(7)]
    # same sense, same colour in every panel
    colours = {t.marker.color for t in fig.data if t.name == "a"}
    assert len(colours) == 1
    with pytest.raises(InputError):
        small_multiples(coords, list("aabbcc"), list("123456"), ["one title"])


def test_small_multiples_grows_to_show_a_long_legend():
    few = small_multiples(np.zeros((2, 6, 2)), list("aabbcc"), list("123456"), ["A", "B"])
    assert few.layout.height == 260 + 80  # one row, a short legend
    labels = [f"s{i}" for i in range(12)]
    many = small_multiples(np.zeros((2, 12, 2)), labels, labels, ["A", "B"])
    assert many.layout.height == 32 * 14 + 140  # a title, 12 senses and the centroids' line
    crowd = [f"s{i}" for i in range(40)]
    assert small_multiples(np.zeros((2, 40, 2)), crowd, crowd, ["A", "B"]).layout.height == 900


def test_candidate_bars_sorted_and_chosen_highlighted():
    fig = candidate_bars(["k1", "k2", "k3"], [0.2, 0.9, 0.5], ["g1", "g2", "g3"], chosen="k2")
    answer, others, star = fig.data
    assert answer.name == "the answer" and list(answer.x) == [0.9] and answer.y[0].startswith("k2")
    assert list(others.x) == [0.5, 0.2]  # best first
    assert answer.marker.color != others.marker.color
    assert star.mode == "text" and star.y == answer.y and "the answer" in star.text[0]
    order = list(fig.layout.yaxis.categoryarray)
    assert [o[:2] for o in order] == ["k2", "k3", "k1"] and fig.layout.yaxis.autorange == "reversed"
    with pytest.raises(InputError):
        candidate_bars([], [])


def test_candidate_bars_put_the_answer_first_and_say_which_were_set_aside():
    """The answer (a noun sense, 0.43) is first and marked although a verb sense set aside by
    the POS probe scores higher (0.88): the set-aside bars come last, in their own colour and
    legend entry, which says why."""
    fig = candidate_bars(["n1", "v1", "n2"], [0.434, 0.877, 0.2], chosen="n1", set_aside=["v1"],
                         set_aside_reason="verb senses: the word reads as a NOUN")  # fmt: skip
    names = [t.name for t in fig.data]
    assert names == ["the answer", "other candidates", "verb senses: the word reads as a NOUN",
                     "the answer"]  # fmt: skip
    assert list(fig.data[2].x) == [0.877] and fig.data[2].marker.pattern.shape == "/"
    assert len({t.marker.color for t in fig.data[:3]}) == 3
    assert [o[:2] for o in fig.layout.yaxis.categoryarray] == ["n1", "n2", "v1"]


def test_layer_lines_and_dimension_bars():
    fig = layer_lines({"raw": [0.9, 0.8], "z-score": [0.1, 0.0]}, ["0", "1"], y_title="cos")
    assert [t.name for t in fig.data] == ["raw", "z-score"]
    with pytest.raises(InputError):
        layer_lines({"raw": [1.0]}, ["0", "1"])


def test_layer_lines_pairs_share_a_colour_and_legend_group():
    series = {"bank base": [0.1, 0.2], "bass base": [0.0, 0.1], "bank tuned": [0.3, 0.4]}
    fig = layer_lines(series, ["0", "1"], colors=[0, 1, 0], dashes=["solid", "solid", "dash"])
    bank, bass, tuned = fig.data
    assert bank.line.color == tuned.line.color != bass.line.color
    assert bank.legendgroup == tuned.legendgroup != bass.legendgroup
    assert (bank.line.dash, tuned.line.dash) == ("solid", "dash")
    with pytest.raises(InputError, match="3 series need 3 colours"):
        layer_lines(series, ["0", "1"], colors=[0, 1])


def test_color_map_is_stable():
    assert color_map(["b", "a", "b"]) == color_map(["b", "a"])


def test_categories_fix_colours_across_figures():
    coords = np.random.default_rng(0).normal(size=(4, 2))
    gold = sense_scatter(coords, ["a", "a", "b", "b"], list("1234"), categories=["a", "b"])
    pred = sense_scatter(coords, ["b", "b", "b", "a"], list("1234"), categories=["a", "b"])
    colour = {t.name: t.marker.color for t in gold.data[:2]}
    assert {t.name: t.marker.color for t in pred.data[:2]} == colour
