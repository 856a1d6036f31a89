"""The corpus map: every word of a corpus in 2-D with its table, made once and loaded after;
past the fit sample, words are placed among their nearest sampled neighbours (checked against
UMAP's own layout by trustworthiness); the figure, search and selection."""

from __future__ import annotations

import numpy as np
import pytest

from workbench.corpora.occurrences import demo_sentences
from workbench.corpora.readers import Corpus, Instance, Sentence, corpus_from_texts
from workbench.errors import InputError
from workbench.lexicon.wordnet import load_wordnet
from workbench.viz.corpus_figures import WEBGL_FROM, category_labels, corpus_figure
from workbench.viz.corpus_map import (
    CorpusMapConfig,
    corpus_map,
    corpus_table,
    place_by_neighbours,
)
from workbench.viz.plotting import selected_rows
from workbench.viz.projection import Projector, trustworthiness
from workbench.viz.sense_views import grid_layout

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def demo_corpus() -> Corpus:
    return corpus_from_texts([" ".join(s) for s in demo_sentences()], "demo texts")


def test_a_map_holds_every_word_and_is_loaded_the_second_time(
    default_encoder, demo_corpus, tmp_path
):
    config = CorpusMapConfig(layer="6", max_sentences=60, fit_sample=400, n_neighbors=10)
    stages = []
    first = corpus_map(default_encoder, demo_corpus, config, cache_dir=tmp_path,
                       progress=lambda f, s: stages.append((f, s)))  # fmt: skip
    n = sum(len(s.words) for s in demo_corpus.sentences[:60])
    assert first.coords.shape == (n, 2) and np.isfinite(first.coords).all()
    assert len(first.table) == n and list(first.table.columns[-2:]) == ["x", "y"]
    assert first.info["fitted"] == 400 and not first.info["cached"]  # sample and place
    assert [f for f, _ in stages] == sorted(f for f, _ in stages) and stages[-1][0] <= 1.0
    again = corpus_map(default_encoder, demo_corpus, config, cache_dir=tmp_path)
    assert again.info["cached"] and np.array_equal(again.coords, first.coords)
    other = corpus_map(default_encoder, demo_corpus, CorpusMapConfig(layer="3", max_sentences=60,
                       fit_sample=400, n_neighbors=10), cache_dir=tmp_path)  # fmt: skip
    assert not other.info["cached"]  # another layer: another map
    found = first.search("Bank")
    assert len(found) and all(first.table["word"].iloc[i].lower() == "bank" for i in found)
    assert "[" in first.context(int(found[0])) and len(first.search("  ")) == 0


def test_a_corrected_map_and_a_combined_layer(default_encoder, demo_corpus, tmp_path):
    config = CorpusMapConfig(layer="last4-sum", correction="zscore", max_sentences=20,
                             n_neighbors=5)  # fmt: skip
    cmap = corpus_map(default_encoder, demo_corpus, config, cache_dir=tmp_path)
    assert cmap.info["method"] == "umap" and len(cmap) == cmap.info["n_words"]
    with pytest.raises(InputError):
        corpus_map(default_encoder, corpus_from_texts(["a"]), config, cache_dir=tmp_path)


def test_placed_words_keep_their_neighbours_nearly_as_well_as_umap():
    rng = np.random.default_rng(0)
    centres = rng.normal(size=(8, 32)) * 4
    x = (centres[rng.integers(0, 8, 1500)] + rng.normal(size=(1500, 32))).astype(np.float32)
    coords = Projector(random_state=0, n_neighbors=10).fit_transform(x).astype(np.float32)
    held = np.sort(rng.choice(1500, 300, replace=False))
    kept = np.setdiff1d(np.arange(1500), held)
    placed = place_by_neighbours(x, kept, coords[kept], k=10, dims=16)
    assert np.array_equal(placed[kept], coords[kept])
    tw_umap = trustworthiness(x[held], coords[held], n_neighbors=10)
    tw_placed = trustworthiness(x[held], placed[held], n_neighbors=10)
    assert tw_placed > 0.85 and tw_placed > tw_umap - 0.1, (tw_placed, tw_umap)


def test_the_table_knows_senses_and_supersenses():
    sentence = Sentence(
        "d0.s0", ("He", "sat", "on", "the", "bank"), ("he", "sit", "on", "the", "bank"),
        ("PRON", "VERB", "ADP", "DET", "NOUN"),
        (Instance("d0.s0.t0", 4, "bank", "NOUN", ("bank%1:17:01::",)),),
    )  # fmt: skip
    table = corpus_table(Corpus("tiny", (sentence,)), load_wordnet())
    assert table["sense"].tolist() == ["", "", "", "", "bank%1:17:01::"]
    assert table["supersense"].iloc[4] == "noun.object" and table["pos"].iloc[1] == "VERB"


def test_the_figure_colours_by_a_column_and_rings_what_a_search_found(
    default_encoder, demo_corpus, tmp_path
):
    cmap = corpus_map(default_encoder, demo_corpus, CorpusMapConfig(layer="6", max_sentences=20,
                      n_neighbors=5), cache_dir=tmp_path)  # fmt: skip
    found = cmap.search("bank")
    fig = corpus_figure(cmap, "lemma", found, title="demo")
    # each found word ringed by a circle of the layout anchored at its point; the count titled
    rings = fig.layout.shapes
    assert len(rings) == len(found) and {r.type for r in rings} == {"circle"}
    assert [(r.xanchor, r.yanchor) for r in rings] == [tuple(cmap.coords[i]) for i in found]
    assert fig.layout.title.text == f"demo · {len(found)} found, ringed"
    drawn = sorted(int(i) for t in fig.data for i in t.customdata)
    assert drawn == list(range(len(cmap)))  # every word once, its row as customdata
    assert all(t.type == ("scattergl" if len(cmap) >= WEBGL_FROM else "scatter") for t in fig.data)
    assert not corpus_figure(cmap, "lemma", title="demo").layout.shapes  # no search, no ring
    # past MAX_RINGS found words, a seeded sample of them is ringed, and the title says so
    every = np.arange(len(cmap))
    many = corpus_figure(cmap, "lemma", every, title="demo", max_rings=7)
    assert len(many.layout.shapes) == 7
    assert many.layout.title.text == f"demo · {len(cmap)} found, a sample of 7 ringed"
    assert many.layout.shapes == corpus_figure(cmap, "lemma", every, max_rings=7).layout.shapes
    # a map drawn as a sample rings only the found words it draws, each over its point
    half = len(cmap) // 2
    sampled = corpus_figure(cmap, "lemma", every, title="demo", max_points=half)
    points = {(float(x), float(y)) for t in sampled.data for x, y in zip(t.x, t.y, strict=True)}
    rings = {(r.xanchor, r.yanchor) for r in sampled.layout.shapes}
    assert len(sampled.layout.shapes) == half and rings <= points
    assert sampled.layout.title.text == (
        f"demo (a sample of {half:,} of {len(cmap):,} words) · {len(cmap):,} found, {half:,} of "
        "them in the sample drawn, ringed"
    )
    with pytest.raises(InputError):
        corpus_figure(cmap, "nonsense")
    labels = category_labels(["a"] * 5 + ["b"] * 3 + ["c", ""], top=2)
    assert labels.tolist() == ["a"] * 5 + ["b"] * 3 + ["(other)", "(none)"]


def test_selection_events_give_table_rows():
    event = {"selection": {"points": [{"customdata": 4}, {"customdata": [7]}, {"customdata": 4},
                                      {"x": 1}]}}  # fmt: skip
    assert selected_rows(event) == [4, 7]
    assert selected_rows({"selection": {"points": []}}) == [] and selected_rows(None) == []


def test_grid_layout_puts_each_part_in_its_own_cell():
    parts = [np.random.default_rng(i).normal(size=(20, 2)) * (i + 1) for i in range(4)]
    coords = grid_layout(parts)
    cells = np.split(coords, np.cumsum([len(p) for p in parts])[:-1])
    boxes = [(c[:, 0].min(), c[:, 0].max(), c[:, 1].min(), c[:, 1].max()) for c in cells]
    for i, a in enumerate(boxes):
        assert a[1] - a[0] <= 1.0 + 1e-6 and a[3] - a[2] <= 1.0 + 1e-6  # scaled to a unit cell
        for b in boxes[i + 1 :]:  # no two cells overlap
            assert a[1] < b[0] or b[1] < a[0] or a[3] < b[2] or b[3] < a[2]


def test_the_demo_map_coloured_by_pos_shows_several_colours_with_a_legend(
    default_encoder, demo_corpus, tmp_path
):
    """Plain sentences carry no POS: the map tags them, so its default colouring says something."""
    assert {p for s in demo_corpus.sentences for p in s.pos} == {"X"}  # unknown
    cmap = corpus_map(default_encoder, demo_corpus, CorpusMapConfig(layer="6", max_sentences=40,
                      n_neighbors=5), load_wordnet(), cache_dir=tmp_path)  # fmt: skip
    tags = cmap.table["pos"]
    assert (tags != "").all() and (tags == "X").mean() < 0.01
    assert {"NOUN", "VERB", "ADJ", "DET", "ADP", "."} <= set(tags)
    fig = corpus_figure(cmap, "pos", title="demo")
    named = [t.name.split(" (")[0] for t in fig.data if t.showlegend is not False]
    assert len(set(named)) >= 6 and "NOUN" in named  # "NOUN (138)": the tag and its count
    assert len({t.marker.color for t in fig.data}) >= 6  # a colour each
    assert fig.layout.showlegend is not False
