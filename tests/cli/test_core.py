from __future__ import annotations

import json

import numpy as np
import torch

from workbench.cli.main import main


def test_info_json(capsys):
    assert main(["info", "--json", "--device", "cpu"]) == 0
    facts = json.loads(capsys.readouterr().out)
    assert facts["layers"] == 6 and facts["dim"] == 384 and facts["device"] == "cpu"
    assert facts["dtype"] == "float32" and facts["backend"] == "onnx"
    assert facts["backend_choice"].startswith("ONNX Runtime on the CPU, from the export")
    assert main(["info", "--json", "--device", "cpu", "--backend", "torch"]) == 0
    facts = json.loads(capsys.readouterr().out)
    assert facts["backend"] == "torch" and facts["backend_choice"] == "torch, as asked"
    assert facts["dtype"] == "float32" and facts["dtype_choice"] == "auto: WORKBENCH_DTYPE=float32"


def test_info_says_what_the_probe_chose_and_why(capsys, monkeypatch, tmp_cache):
    monkeypatch.delenv("WORKBENCH_DTYPE")
    fake = ({"float32": 0.01, "bfloat16": 0.04}, 512)
    monkeypatch.setattr("workbench.encoding.dtype_probe.time_products", lambda shape: fake)
    assert main(["info", "--device", "cpu", "--backend", "torch"]) == 0  # torch's dtype choice
    text = capsys.readouterr().out
    assert "auto: float32, bfloat16's matrix product ran 4.00x slower" in text
    assert "dtype_choice " in text and "512x384x1536" in text and str(tmp_cache) in text


def test_embed_text_file(tmp_path, capsys, tmp_cache):
    src = tmp_path / "s.txt"
    src.write_text("The bank is closed.\n\n   \nHe sat by the river bank.\n", encoding="utf-8")
    assert main(["embed", str(src), "--out", str(tmp_path / "v.npz"), "--device", "cpu"]) == 0
    data = np.load(tmp_path / "v.npz")
    assert data["vectors"].shape == (12, 7, 384)
    table = (tmp_path / "v.tsv").read_text().splitlines()
    assert table[0].startswith("row\tsentence") and len(table) == 13
    rows = (tmp_path / "v.sentences.tsv").read_text().splitlines()[1:]
    assert [r.split("\t")[1] for r in rows] == ["s.l1", "s.l4"]  # blank lines skipped, numbers kept


def test_a_warning_is_one_line(tmp_path, capsys, tmp_cache, monkeypatch):
    """A library warning reaches the command line's user as one line, no source code."""

    def broken_compile(model, **kwargs):
        def compiled(**inputs):
            raise RuntimeError("inductor: no working C++ compiler found\nlong trace")

        return compiled

    monkeypatch.setattr(torch, "compile", broken_compile)
    src = tmp_path / "s.txt"
    src.write_text("The bank is closed.\nIt was a holiday.\n", encoding="utf-8")  # a batch of 2
    out = tmp_path / "v.npz"
    args = ["embed", str(src), "--out", str(out), "--device", "cpu", "--compile"]
    assert main(args) == 0
    err = capsys.readouterr().err
    assert "workbench: warning: torch.compile failed (RuntimeError: inductor: no working" in err
    assert "UserWarning" not in err and "Encoder(" not in err
    assert np.load(out)["vectors"].shape == (10, 7, 384)


def test_embed_framework_xml(tmp_path, wsd_data, tmp_cache):
    xml = next(wsd_data.rglob("semeval2007.data.xml"))
    out = tmp_path / "s7.npz"
    assert main(["embed", str(xml), "--out", str(out), "--layers", "0,6", "--float16"]) == 0
    data = np.load(out)
    assert data["vectors"].shape == (3201, 2, 384) and data["vectors"].dtype == np.float16


def test_errors_are_one_line(tmp_path, capsys):
    assert main(["embed", str(tmp_path / "missing.txt"), "--out", str(tmp_path / "x.npz")]) == 2
    assert "does not exist" in capsys.readouterr().err
    bad = tmp_path / "bad.txt"
    bad.write_bytes(b"\x81bad\xff")  # no byte-order mark, not UTF-8
    assert main(["embed", str(bad), "--out", str(tmp_path / "x.npz")]) == 2
    assert "not UTF-8" in capsys.readouterr().err
    assert main(["info", "--model", "./no/such/dir"]) == 2
    assert "looks like a local path" in capsys.readouterr().err
