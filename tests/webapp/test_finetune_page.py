"""The Fine-tune page under Streamlit's AppTest: a small built-in job with the tiny model."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pandas as pd
import pytest

from tests.webapp.markdown import shown
from webapp.caches import corpora
from webapp.offered_models import runs_dir

REPO = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.slow


@pytest.fixture
def made_on_click(monkeypatch) -> dict:
    """file id -> the callable that makes a download button's file when it is clicked."""
    from streamlit.runtime.media_file_manager import MediaFileManager

    made: dict = {}
    add = MediaFileManager.add_deferred

    def remember(self, data_callable, *args, **kwargs):
        file_id = add(self, data_callable, *args, **kwargs)
        made[file_id] = data_callable
        return file_id

    monkeypatch.setattr(MediaFileManager, "add_deferred", remember)
    return made


def _download(made: dict, button) -> str:
    """What a download button hands over when clicked."""
    data = made[button.proto.deferred_file_id]()
    return data.decode() if isinstance(data, bytes) else data


def test_finetune_page_trains_a_small_job(
    tiny_model_dir, tmp_path, wsd_data, monkeypatch, made_on_click
):
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
    # downloads: the training figure, the training log (CSV, settings, JSON)
    buttons = {b.key: b for b in at.get("download_button")}
    assert {"ft_final_fig_html", "ft_log_csv", "ft_log_settings", "ft_log_json"} <= set(buttons)
    log = pd.read_csv(io.StringIO(_download(made_on_click, buttons["ft_log_csv"])))
    batches, epochs = log[log["row"] == "batch"], log[log["row"] == "epoch"]
    assert len(batches) == 3 and len(epochs) == 1  # 48 examples, batches of 16, one epoch
    assert batches["loss"].notna().all() and 0 <= epochs["dev_accuracy"].iloc[0] <= 1
    settings = json.loads(_download(made_on_click, buttons["ft_log_settings"]))["settings"]
    assert settings["view"] == "finetune" and settings["data"]["options"]["epochs"] == 1
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


def test_a_link_restores_the_finetune_settings(wsd_data, monkeypatch):
    """ "Copy link" carries the job's settings (data, task sizes, options, run name): opening the
    link gives every widget its value back; a value out of range is left at the default."""
    from streamlit.testing.v1 import AppTest

    monkeypatch.setenv("WORKBENCH_DATA", str(wsd_data))  # the built-in tasks need SemCor
    query = {"data": "wic", "train": "96", "dev": "48", "test": "32", "epochs": "3",
             "lr": "0.0001", "batch": "8", "max_length": "64", "lora": "4", "llrd": "0.8",
             "seed": "7", "baselines": "0", "run": "my-run", "freeze": "99"}  # fmt: skip
    at = AppTest.from_file(str(REPO / "app.py"), default_timeout=240)
    at.query_params.update(query)
    at.switch_page("webapp/pages/finetune.py").run()
    assert not at.exception, [e.value for e in at.exception]
    assert at.number_input(key="ft_ntrain").value == 96
    assert (
        at.number_input(key="ft_ndev").value == 48 and at.number_input(key="ft_ntest").value == 32
    )
    assert (
        at.number_input(key="ft_epochs").value == 3 and at.number_input(key="ft_batch").value == 8
    )
    assert at.number_input(key="ft_lr").value == pytest.approx(1e-4)
    assert (
        at.number_input(key="ft_maxlen").value == 64 and at.number_input(key="ft_lora").value == 4
    )
    assert at.number_input(key="ft_llrd").value == pytest.approx(0.8)
    assert at.number_input(key="ft_seed").value == 7
    assert at.checkbox(key="ft_baselines").value is False
    assert at.text_input(key="ft_out").value == "my-run"
    assert at.number_input(key="ft_freeze").value == 0  # 99 is out of range: the default
    assert any("freeze=99" in shown(w.value) for w in at.warning)
    # the page writes its settings back into the URL: the link to copy
    assert at.query_params["train"] == "96" and at.query_params["run"] == "my-run"
    assert at.query_params["freeze"] == "0"
    at.number_input(key="ft_epochs").set_value(5).run()
    assert at.query_params["epochs"] == "5"
    link = [c.value for c in at.code if "epochs=5" in c.value]
    assert link and "train=96" in link[0] and "lr=0.0001" in link[0]


def test_fine_tune_without_a_file_or_the_wsd_data_says_so(tmp_path, monkeypatch):
    """On a machine without the WSD data (an empty ``WORKBENCH_DATA``) the page offers your own
    files and says which jobs need the WSD data and how to get it; pressing "Fine-tune" with no
    file says what is missing at once (no lasting "Preparing the data..." message)."""
    from streamlit.testing.v1 import AppTest

    empty = tmp_path / "no-wsd-data"
    empty.mkdir()
    monkeypatch.setenv("WORKBENCH_DATA", str(empty))
    corpora.available_datasets.clear()  # found with the data by an earlier test
    try:
        at = AppTest.from_file(str(REPO / "app.py"), default_timeout=240)
        at.switch_page("webapp/pages/finetune.py").run()
        assert not at.exception, [e.value for e in at.exception]
        jobs = at.segmented_control(key="ft_source")
        assert list(jobs.options) == [
            "word in context · WordNet",
            "supersenses · WordNet",
            "my own files",
        ]  # three jobs offline; the SemCor ones are said to need the WSD data
        assert jobs.value == "wordnet-wic"  # a WordNet job first: it runs here
        assert any("WordNet 3.0" in shown(c.value) for c in at.caption)
        notes = [shown(i.value) for i in at.info]
        assert any("workbench data download" in n and "supersense" in n for n in notes), notes
        jobs.set_value("upload").run()
        at.button(key="ft_go").click().run()
        assert not at.exception, [e.value for e in at.exception]
        assert any("upload a training file" in shown(w.value) for w in at.warning), at.warning
        assert not any("Preparing the data" in shown(i.value) for i in at.info)
        # a link to a SemCor job opens WordNet's first job here, the missing one said above it
        linked = AppTest.from_file(str(REPO / "app.py"), default_timeout=240)
        linked.query_params.update({"data": "supersense", "train": "64"})
        linked.switch_page("webapp/pages/finetune.py").run()
        assert not linked.exception, [e.value for e in linked.exception]
        assert linked.segmented_control(key="ft_source").value == "wordnet-wic"
        assert linked.number_input(key="ft_ntrain").value == 64
        assert any("workbench data download" in shown(i.value) for i in linked.info)
    finally:
        corpora.available_datasets.clear()  # a later test finds the data again
