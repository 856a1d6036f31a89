"""The Fine-tune page under Streamlit's AppTest: a small built-in job with the tiny model."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from workbench.encoding.offered import runs_dir

REPO = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.slow


def test_finetune_page_trains_a_small_job(tiny_model_dir, tmp_path, wsd_data, monkeypatch):
    from streamlit.testing.v1 import AppTest

    monkeypatch.setenv("WORKBENCH_DATA", str(wsd_data))
    monkeypatch.setenv("WORKBENCH_APP_MODELS", str(tiny_model_dir))  # the owner offers it
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
    at.text_input(key="ft_out").set_value("tuned")  # a run name: saved in the runs folder
    out = runs_dir() / "tuned"
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


@pytest.mark.parametrize("name", ["../escape", "/tmp/anywhere", "a/b", "..", ""])
def test_finetune_page_never_writes_outside_its_runs_folder(name, tmp_path, monkeypatch):
    """A run name that is not a plain folder name is refused before any data or model is
    touched; a folder outside the runs folder is left as it was."""
    from streamlit.testing.v1 import AppTest

    victim = tmp_path / "precious"
    (victim / "checkpoint").mkdir(parents=True)
    (victim / "thesis.txt").write_text("mine")
    at = AppTest.from_file(str(REPO / "app.py"), default_timeout=240)
    at.switch_page("webapp/pages/finetune.py").run()
    at.text_input(key="ft_out").set_value(name.replace("/tmp/anywhere", str(victim)))
    at.button(key="ft_go").click().run()
    assert not at.exception, [e.value for e in at.exception]
    assert any("plain folder name" in e.value for e in at.error), [e.value for e in at.error]
    assert (victim / "thesis.txt").read_text() == "mine" and (victim / "checkpoint").is_dir()
