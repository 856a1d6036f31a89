"""The Fine-tune page under Streamlit's AppTest: a small built-in job with the tiny model."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.slow


def test_finetune_page_trains_a_small_job(tiny_model_dir, tmp_path, wsd_data, monkeypatch):
    from streamlit.testing.v1 import AppTest

    monkeypatch.setenv("WORKBENCH_DATA", str(wsd_data))
    at = AppTest.from_file(str(REPO / "app.py"), default_timeout=240)
    at.run()
    at.sidebar.text_input(key="model").set_value(str(tiny_model_dir)).run()
    at.switch_page("webapp/pages/finetune.py").run()
    assert not at.exception, [e.value for e in at.exception]
    assert at.title[0].value.startswith("Fine-tune")
    at.number_input(key="ft_ntrain").set_value(48)
    at.number_input(key="ft_ndev").set_value(16)
    at.number_input(key="ft_ntest").set_value(20)
    at.number_input(key="ft_epochs").set_value(1)
    at.number_input(key="ft_maxlen").set_value(64)
    out = tmp_path / "tuned"
    at.text_input(key="ft_out").set_value(str(out))
    at.button(key="ft_go").click().run()
    assert not at.exception, [e.value for e in at.exception]
    assert not at.error, [e.value for e in at.error]
    card = json.loads((out / "training_card.json").read_text())
    assert card["task"] == "pair" and card["data"]["train"]["n"] == 48
    assert card["data"]["test"]["n"] == 20  # the user's size limit holds for the test set too
    assert card["builtin"]["name"] == "wic"
    charts = at.get("plotly_chart")
    assert len(charts) == 1  # one training chart (the live one gives way to the result's)
    spec = json.loads(charts[0].proto.spec)
    names = {t.get("name") for t in spec["data"]}
    assert {"loss (batch)", "dev accuracy"} <= names
    assert spec["layout"]["yaxis2"]["range"] == [0, 1]  # accuracy on a 0-1 axis
    wall = [c.value for c in at.caption if c.value.startswith("Wall time:")]
    assert wall and float(wall[0].split()[2]) >= card["train_seconds"] - 1
    assert any("best epoch 1" in c.value for c in at.code)
    # the tuned model becomes the sidebar's model for every other page
    at.button(key="ft_use").click().run()
    assert at.sidebar.text_input(key="model").value == str(out)
