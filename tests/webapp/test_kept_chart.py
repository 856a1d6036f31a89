"""The kept chart's Python side (:mod:`webapp.kept_chart`): its frame's folder in the cache,
the figure's revision, and which selections come back. The frame itself is exercised in a real
browser by the corpus map's tests (``test_browser_1280``, ``test_controls_browser``,
``test_waits_browser``)."""

from __future__ import annotations

import json
import shutil

import plotly.graph_objects as go
from plotly.offline import get_plotlyjs

import webapp.kept_chart as kept
from webapp.kept_chart import PAGE, component_folder, figure_args, kept_chart


def test_the_frames_folder_holds_the_page_and_plotly_and_is_made_once(tmp_path):
    folder = component_folder(tmp_path)
    assert folder is not None and folder.parent == tmp_path / "webapp"
    assert (folder / "index.html").read_bytes() == PAGE.read_bytes()
    assert (folder / "plotly.min.js").read_text(encoding="utf-8") == get_plotlyjs()
    stamp = (folder / "plotly.min.js").stat().st_mtime_ns
    assert component_folder(tmp_path) == folder  # found, not made again
    assert (folder / "plotly.min.js").stat().st_mtime_ns == stamp
    assert [p.name for p in (tmp_path / "webapp").iterdir()] == [folder.name]  # no temporaries


def test_a_cache_where_no_folder_can_be_made_gives_none(tmp_path):
    (tmp_path / "webapp").write_text("not a folder")
    assert component_folder(tmp_path) is None


def test_the_revision_follows_the_figure_and_the_base_all_but_its_shapes_and_title():
    a = go.Figure(go.Scatter(x=[1, 2], y=[3, 4]))
    b = go.Figure(go.Scatter(x=[1, 2], y=[3, 5]))
    (fa, oa, ba, ra), (fa2, _, ba2, ra2), (_, _, bb, rb) = map(figure_args, (a, a, b))
    assert ra == ra2 and ra != rb and fa == fa2 and ba == ba2 and ba != bb
    assert json.loads(fa)["data"][0]["y"] == [3, 4]  # the figure's JSON text
    assert json.loads(oa) == {"shapes": None, "title": None}
    # rings and a title: the same base (the frame relayouts), another revision (a new figure)
    ringed = go.Figure(a).update_layout(
        title="2 found", shapes=[{"type": "circle", "x0": 1, "x1": 2, "y0": 3, "y1": 4}]
    )
    text, overlay, base, revision = figure_args(ringed)
    assert base == ba and revision != ra and text == fa
    parts = json.loads(overlay)
    assert parts["title"]["text"] == "2 found" and parts["shapes"][0]["type"] == "circle"
    assert "shapes" not in json.loads(text)["layout"] and "title" not in json.loads(text)["layout"]
    moved = go.Figure(ringed).update_layout(height=700)  # any other part of the layout: a base
    assert figure_args(moved)[2] != base


def test_only_a_selection_of_the_figure_shown_comes_back(monkeypatch):
    fig = go.Figure(go.Scatter(x=[1, 2], y=[3, 4], customdata=[7, 8]))
    *_, revision = figure_args(fig)
    sent: dict = {}

    def component(**args):
        sent.update(args)
        return answer

    monkeypatch.setattr(kept, "_component", lambda: component)
    answer = {"revision": revision, "selection": {"points": [{"customdata": 8}]}}
    assert kept_chart(fig, "k", select=True) == answer
    assert sent["revision"] == revision and sent["key"] == "k" and sent["select"] is True
    assert sent["base"] == figure_args(fig)[2] and json.loads(sent["overlay"])["shapes"] is None
    assert sent["height"] == kept.DEFAULT_HEIGHT
    answer = {"revision": "an older figure", "selection": {"points": [{"customdata": 8}]}}
    assert kept_chart(fig, "k", select=True) is None
    answer = None
    assert kept_chart(fig.update_layout(height=600), "k") is None
    assert sent["height"] == 600


def test_a_cache_cleared_while_the_server_runs_gets_the_frame_back(tmp_path, monkeypatch):
    monkeypatch.setenv("WORKBENCH_CACHE", str(tmp_path))
    declared: list = []
    monkeypatch.setattr(kept, "_declared", lambda folder: declared.append(folder) or folder)
    first = kept._component()
    shutil.rmtree(tmp_path / "webapp")  # `workbench cache clear`, say
    assert kept._component() == first and (first / "plotly.min.js").is_file()
