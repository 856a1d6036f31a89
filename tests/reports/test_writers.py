"""Tests of the generic report writers (Markdown, self-contained HTML, JSON)."""

from __future__ import annotations

import json
import math
from dataclasses import dataclass

import numpy as np
import plotly.graph_objects as go
import pytest

from workbench.errors import InputError
from workbench.reports.tables import UNDEFINED, Table, format_value, jsonable
from workbench.reports.writers import Report, Section, to_html, to_json, to_markdown, write_report


@dataclass(frozen=True)
class _Cfg:
    model: str = "m"
    layers: tuple[int, ...] = (0, 6)
    seed: int = 0


def _report() -> Report:
    table = Table(
        columns=("layer", "anisotropy", "note"),
        rows=((0, 0.41234, "a|b"), (6, float("nan"), None), (np.int64(3), np.float32(0.5), "c")),
        caption="Per layer",
        notes=("undefined: fewer than two occurrences",),
    )
    fig1 = go.Figure(go.Scatter(x=[0, 1], y=[1, 2]), layout={"title": "Anisotropy by layer"})
    fig2 = go.Figure(go.Bar(x=[0, 1], y=[1, 2]))
    return Report(
        title="Geometry <test>",
        config=_Cfg(),
        sections=(Section("Results", "First para.\n\nSecond para.", (table,), (fig1, fig2)),),
        data={"per_dim": np.array([0.25, np.inf], dtype=np.float32)},
        command="workbench geometry --sample 10",
    )


def test_format_value_rules():
    assert format_value(0.12345) == "0.123"
    assert format_value(0.12345, digits=1) == "0.1"
    assert format_value(None) == UNDEFINED
    assert format_value(float("nan")) == UNDEFINED
    assert format_value(np.float32("nan")) == UNDEFINED
    assert format_value(np.int64(7)) == "7"
    assert format_value(-0.0001) == "0.000"  # no "-0.000"
    assert format_value(float("inf")) == "inf"
    assert format_value(True) == "yes"
    assert format_value("x") == "x"


def test_table_rejects_ragged_rows():
    with pytest.raises(InputError, match="row 1"):
        Table(columns=("a", "b"), rows=((1, 2), (3,)))


def test_markdown_table_and_report():
    md = to_markdown(_report())
    lines = md.splitlines()
    header = lines.index("| layer | anisotropy | note |")
    assert lines[header + 1] == "| ---: | ---: | --- |"
    assert lines[header + 2] == "| 0 | 0.412 | a\\|b |"
    assert lines[header + 3] == f"| 6 | {UNDEFINED} | {UNDEFINED} |"
    assert "workbench geometry --sample 10" in md
    assert "Anisotropy by layer" in md and "Figure 2" in md
    assert '"seed": 0' in md


def test_html_is_self_contained_with_plotly_inlined_once():
    page = to_html(_report())
    assert page.startswith("<!DOCTYPE html>")
    assert "Geometry &lt;test&gt;" in page  # escaped
    assert "<script src=" not in page  # nothing fetched from the network
    # plotly.js itself appears exactly once however many figures there are
    assert page.count("window.Plotly") >= 1
    from plotly.offline import get_plotlyjs

    assert page.count(get_plotlyjs()[:200]) == 1
    assert 'id="figure-0"' in page and 'id="figure-1"' in page
    assert 'class="num undef"' in page


def test_html_without_figures_has_no_plotly():
    report = Report(title="t", config={}, sections=(Section("s", tables=()),))
    assert len(to_html(report)) < 10_000


def test_json_is_strict_and_carries_config():
    data = json.loads(to_json(_report()))
    assert data["config"] == {"model": "m", "layers": [0, 6], "seed": 0}
    rows = data["sections"][0]["tables"][0]["rows"]
    assert rows[0] == {"layer": 0, "anisotropy": 0.41234, "note": "a|b"}
    assert rows[1]["anisotropy"] is None
    assert rows[2]["anisotropy"] == 0.5
    assert data["data"]["per_dim"] == [0.25, None]
    assert data["command"] == "workbench geometry --sample 10"


def test_jsonable_float32_digits():
    assert jsonable(np.float32(0.41)) == 0.41
    assert jsonable({"x": (1, 2.5)}) == {"x": [1, 2.5]}
    assert jsonable(float("-inf")) is None
    assert not math.isnan(jsonable(np.float64(0.1)))


def test_write_report_all_formats(tmp_path):
    paths = write_report(_report(), tmp_path / "out", stem="geo")
    assert sorted(paths) == ["html", "json", "md"]
    for fmt, path in paths.items():
        assert path == tmp_path / "out" / f"geo.{fmt}"
        assert path.stat().st_size > 0
    assert not list((tmp_path / "out").glob(".*tmp"))  # no temporary files left behind
    with pytest.raises(InputError, match="unknown report format"):
        write_report(_report(), tmp_path, formats=("pdf",))
