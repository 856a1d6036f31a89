"""Exports carry their settings: every table and figure format parses and gives them back."""

from __future__ import annotations

import io
import json

import numpy as np
import pandas as pd
import plotly.graph_objects as go
import pytest

from devtools.browser import CHROMIUM
from workbench.errors import DataError, InputError
from workbench.viz.export import (
    ViewSettings,
    export_figure,
    export_table,
    figure_html,
    figure_image,
    figure_json,
    image_export_available,
    read_settings,
    settings_fields,
    table_csv,
    table_json,
)
from workbench.viz.projection import ProjectionConfig

SETTINGS = ViewSettings(
    view="senses", model="all-MiniLM-L6-v2", fingerprint="abc123", pooling="mean", layer="6",
    correction="zscore", reference="semcor", projection=ProjectionConfig(random_state=7), seed=7,
    data={"lemma": "bank", "note": "a </script> and ünïcode"},
)  # fmt: skip
ROWS = pd.DataFrame(
    {"sentence": ['He said "hi, # there"', "bank, river"], "x": [0.5, np.nan], "n": [1, 2]}
)
FIG = go.Figure(go.Scatter(x=[1, 2, 3], y=[3, 1, 2], name="s"))


def _check(found: dict) -> None:
    assert found["model"] == "all-MiniLM-L6-v2" and found["fingerprint"] == "abc123"
    assert found["layer"] == "6" and found["pooling"] == "mean"
    assert found["correction"] == "zscore" and found["reference"] == "semcor"
    assert found["projection"]["random_state"] == 7 and found["projection"]["method"] == "umap"
    assert found["seed"] == 7 and found["data"]["lemma"] == "bank"
    assert found["data"]["note"] == "a </script> and ünïcode"
    assert found["workbench_version"]


def test_csv_carries_settings_and_reads_back_with_pandas():
    text = table_csv(ROWS, SETTINGS)
    _check(read_settings(text))
    back = pd.read_csv(io.StringIO(text), skiprows=1)
    assert back["sentence"].tolist() == ROWS["sentence"].tolist()
    assert back["x"].iloc[0] == 0.5 and np.isnan(back["x"].iloc[1])


def test_table_json_carries_settings_and_writes_nan_as_null():
    doc = json.loads(table_json(ROWS, SETTINGS))
    _check(doc["settings"])
    _check(read_settings(json.dumps(doc)))
    assert doc["columns"] == ["sentence", "x", "n"]
    assert doc["rows"][1]["x"] is None and doc["rows"][1]["n"] == 2


def test_figure_html_is_self_contained_and_carries_settings():
    page = figure_html(FIG, SETTINGS)
    assert "<script" in page and "https://cdn" not in page.split("<body>")[0]
    assert len(page) > 1_000_000  # plotly.js inlined
    _check(read_settings(page))
    assert "Settings (workbench)" in page


def test_figure_json_is_plotly_json_with_settings_in_meta():
    doc = json.loads(figure_json(FIG, SETTINGS))
    assert doc["data"][0]["type"] == "scatter"
    _check(doc["layout"]["meta"]["workbench-settings"])
    _check(read_settings(figure_json(FIG, SETTINGS)))


def test_several_panes_are_listed():
    other = ViewSettings(**{**SETTINGS.__dict__, "model": "tuned", "correction": "none"})
    found = read_settings(table_csv(ROWS, [SETTINGS, other]))
    panes = settings_fields(found)
    assert [p["model"] for p in panes] == ["all-MiniLM-L6-v2", "tuned"]
    with pytest.raises(InputError):
        table_csv(ROWS, [])


def test_files_by_suffix_and_bad_suffix(tmp_path):
    _check(read_settings(export_table(ROWS, SETTINGS, tmp_path / "t.csv").read_bytes()))
    _check(read_settings(export_table(ROWS, SETTINGS, tmp_path / "t.json").read_text()))
    _check(read_settings(export_figure(FIG, SETTINGS, tmp_path / "f.html").read_text()))
    _check(read_settings(export_figure(FIG, SETTINGS, tmp_path / "f.json").read_text()))
    with pytest.raises(InputError, match=r"\.csv or \.json"):
        export_table(ROWS, SETTINGS, tmp_path / "t.xlsx")
    assert not (tmp_path / "t.xlsx").exists()
    with pytest.raises(DataError):
        read_settings("just text")


@pytest.mark.slow
@pytest.mark.skipif(not image_export_available(), reason="kaleido not installed (export extra)")
@pytest.mark.skipif(not CHROMIUM.exists(), reason="no Chromium for kaleido")
def test_png_and_svg_carry_settings(tmp_path):
    png = figure_image(FIG, SETTINGS, "png", width=300, height=200)
    assert png.startswith(b"\x89PNG")
    _check(read_settings(png))
    svg = export_figure(FIG, SETTINGS, tmp_path / "f.svg").read_text()
    assert svg.lstrip().startswith("<svg") and "<metadata" in svg
    _check(read_settings(svg))
