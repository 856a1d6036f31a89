"""``workbench senses separation | plot``: tables and figures as files that parse and carry their
settings; bad input is one line and exit code 2 with no file written."""

from __future__ import annotations

import io
import json
import math

import pandas as pd
import pytest

from workbench.cli.main import main
from workbench.viz.export import read_settings, settings_fields


@pytest.fixture
def reference(tmp_path):
    """A small reference text for fitting corrections quickly."""
    path = tmp_path / "ref.txt"
    path.write_text(
        "\n".join(f"Sentence number {i} talks about a river, money and music." for i in range(12)),
        encoding="utf-8",
    )
    return path


def test_separation_writes_csv_and_json_with_settings(
    tmp_path, capsys, tmp_cache, tiny_model_dir, reference
):
    csv, js = tmp_path / "sep.csv", tmp_path / "sep.json"
    code = main([
        "senses", "separation", "bank", "bass", "--source", "demo", "--model", str(tiny_model_dir),
        "--device", "cpu", "--reference", str(reference), "--csv", str(csv), "--json", str(js),
    ])  # fmt: skip
    assert code == 0
    out = capsys.readouterr().out
    assert "Where separation peaks" in out and "bank%1:14:00::" in out
    table = pd.read_csv(csv, skiprows=1)
    # 2 words x 3 hidden states (tiny 2-layer model) x raw and z-scored
    assert len(table) == 12 and set(table["correction"]) == {"none", "zscore"}
    assert table["nn_accuracy"].between(0, 1).all() and table["silhouette"].between(-1, 1).all()
    assert (table["nn_accuracy"] >= 0).all() and (table["chance"] > 0).all()
    settings = read_settings(csv.read_bytes())
    assert settings["model"] == str(tiny_model_dir) or settings["model"].endswith(
        tiny_model_dir.name
    )
    assert settings["fingerprint"] and settings["pooling"] == "mean"
    assert settings["correction"] == "zscore" and settings["reference"] == str(reference)
    assert settings["layer"] == "all" and settings["data"]["lemmas"] == ["bank", "bass"]
    assert sum(settings["data"]["senses"]["bank"].values()) > 10
    doc = json.loads(js.read_text())
    assert doc["settings"] == settings and len(doc["rows"]) == 12


def test_plot_layers_and_words(tmp_path, capsys, tmp_cache, tiny_model_dir):
    fig, data = tmp_path / "bank.html", tmp_path / "bank.csv"
    common = ["--source", "demo", "--model", str(tiny_model_dir), "--method", "pca"]
    assert main(["senses", "plot", "bank", "--layers", "1", "2", "--out", str(fig),
                 "--data", str(data), *common]) == 0  # fmt: skip
    panes = settings_fields(read_settings(fig.read_text()))
    assert [p["layer"] for p in panes] == ["1", "2"]
    capsys.readouterr()
    assert main(["settings", str(fig), "--panes"]) == 0  # what made the figure, one line a pane
    printed = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert printed == panes
    assert main(["settings", str(data)]) == 0
    assert json.loads(capsys.readouterr().out) == read_settings(data.read_bytes())
    assert main(["settings", str(tmp_path / "missing.html")]) == 2
    (tmp_path / "plain.csv").write_text("a,b\n1,2\n")
    assert main(["settings", str(tmp_path / "plain.csv")]) == 2
    assert "no workbench settings" in capsys.readouterr().err
    assert all(p["projection"]["method"] == "pca" and p["seed"] == 0 for p in panes)
    table = pd.read_csv(data, skiprows=1)
    assert {"x_layer1", "y_layer2", "label", "sentence"} <= set(table.columns)
    atlas = tmp_path / "atlas.json"
    assert main(["senses", "plot", "bank", "bass", "--layers", "2", "--out", str(atlas),
                 *common]) == 0  # fmt: skip
    doc = json.loads(atlas.read_text())
    groups = {t.get("legendgroup") for t in doc["data"]}
    assert groups == {"bank", "bass"}
    found = read_settings(atlas.read_text())
    assert found["view"] == "words" and set(found["data"]["lemmas"]) == {"bank", "bass"}


def test_bad_input_is_one_line_and_writes_nothing(tmp_path, capsys, tmp_cache, tiny_model_dir):
    model = ["--model", str(tiny_model_dir), "--source", "demo", "--method", "pca", "--layers", "2"]
    out = tmp_path / "f.html"
    assert main(["senses", "plot", "nosuchword", "--out", str(out), *model]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "no demo text" in err
    assert main(["senses", "plot", "bank", "--out", str(tmp_path / "f.xlsx"), *model]) == 2
    assert ".html" in capsys.readouterr().err
    assert main(["senses", "plot", "bank", "bass", "--out", str(out), *model, "1"]) == 2
    assert "one --layers" in capsys.readouterr().err
    assert main(["senses", "plot", "bank", "--out", str(out), *model[:-1], "9"]) == 2
    assert "Layer 9 does not exist" in capsys.readouterr().err
    text = tmp_path / "mine.csv"
    text.write_text("The bank lent money.\nThe bank of the river.\nA bank again.\n")
    mine = ["--source", str(text), "--data", str(text), "--model", str(tiny_model_dir)]
    assert main(["senses", "plot", "bank", "--out", str(out), *mine, "--layers", "2"]) == 2
    assert "is the input" in capsys.readouterr().err
    assert text.read_text().startswith("The bank lent money.")
    assert list(tmp_path.glob("f.*")) == []


@pytest.mark.slow
def test_separation_of_a_semcor_word_with_the_packaged_model(tmp_path, capsys, wsd_data):
    js = tmp_path / "plant.json"
    code = main(["senses", "separation", "plant", "--limit", "80", "--device", "cpu", "--reference",
                 "semcor", "--reference-sample", "100", "--json", str(js)])  # fmt: skip
    assert code == 0
    rows = json.loads(js.read_text())["rows"]
    assert len(rows) == 14  # 7 hidden states x raw, z-scored
    best = max(r["nn_accuracy"] for r in rows if r["correction"] == "none")
    chance = rows[0]["chance"]
    assert not math.isnan(best) and best > chance + 0.2  # senses of "plant" separate
    assert io.StringIO(capsys.readouterr().out).getvalue().count("plant") >= 2
