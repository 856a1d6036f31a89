"""``workbench wsd`` commands, run through the real CLI entry point."""

from __future__ import annotations

import json

import pytest

from workbench.cli.main import build_parser, main
from workbench.corpora.wordnet_examples import example_corpus, with_examples
from workbench.wsd.evaluate import load_corpus
from workbench.wsd.store import load_index


def test_score_prints_like_the_official_scorer(tmp_path, capsys):
    gold = tmp_path / "gold.key.txt"
    system = tmp_path / "system.key.txt"
    gold.write_text("a k1\nb k2 k3\nc k4\nd k5\n")
    # a right; b half right (two answers, one correct); c wrong; d unanswered; z not in gold
    system.write_text("a k1\nb k2 x\nc k9\nz k1\n")
    assert main(["wsd", "score", str(gold), str(system)]) == 0
    # correct = 1.5, answered 3 -> P = 50.0, R = 1.5 / 4 = 37.5, F1 = 42.857...
    assert capsys.readouterr().out.splitlines() == ["P=\t50.0%", "R=\t37.5%", "F1=\t42.9%"]
    assert main(["wsd", "score", str(gold), str(tmp_path / "missing.txt")]) == 2
    assert "does not exist" in capsys.readouterr().err


@pytest.mark.slow
def test_train_eval_score_round_trip(wsd_data, tmp_path, capsys):
    out = tmp_path / "eval"
    index_dir = tmp_path / "s15.index"
    assert main(["wsd", "train", "--corpus", "semeval2015", "--system", "plain", "--layers", "5",
                 "--out", str(index_dir)]) == 0  # fmt: skip
    assert "trained on: semeval2015" in capsys.readouterr().out
    code = main(["wsd", "eval", "semeval2007", "--index", str(index_dir), "--out", str(out),
                 "--json", str(tmp_path / "r.json")])  # fmt: skip
    assert code == 0
    printed = capsys.readouterr().out
    assert "semeval2007" in printed and "baseline wordnet_first_sense" in printed
    report = json.loads((tmp_path / "r.json").read_text())
    entry = report["datasets"]["semeval2007"]
    assert entry["n"] == 455
    assert set(entry) == {"n", "system", "wordnet_first_sense", "semcor_mfs"}
    assert entry["wordnet_first_sense"]["F1"] == pytest.approx(55.2, abs=0.1)
    assert report["config"]["index"]["config"]["layers"] == "5"
    assert report["config"]["search"] in ("faiss:cpu", "torch:cpu")  # no GPU in CI
    assert f"search: {report['config']['search']}" in printed
    assert report["config"]["system"]["name"] == "custom"  # plain's settings at another layer
    assert report["config"]["test_data"]["semeval2007"]["sha256"]
    for suffix in ("md", "html", "json"):
        assert (out / f"wsd-semeval2007.{suffix}").is_file()
    html = (out / "wsd-semeval2007.html").read_text()
    assert "plotly" in html.lower() and "Per part of speech" in html
    # the report a paper can cite: intervals, splits, LaTeX, a CSV per table
    saved = json.loads((out / "wsd-semeval2007.json").read_text())
    assert saved["summary"]["F1"] == pytest.approx(entry["system"]["F1"])
    assert saved["summary"]["F1_low"] < saved["summary"]["F1"] < saved["summary"]["F1_high"]
    # a custom system's title says the settings that make it one
    assert saved["system"]["settings"] == "L5 raw"
    assert saved["title"].startswith("WSD on semeval2007: custom, L5 raw (")
    splits = {s["split"] for s in saved["splits"]}
    assert {"WordNet first sense", "SemCor MFS", "seen in training", "candidates"} <= splits
    assert len(saved["instances"]["rows"]) == 455
    assert r"\toprule" in (out / "wsd-semeval2007.tex").read_text()
    assert (out / "wsd-semeval2007.seen.csv").read_text().startswith("group,instances,F1")
    # the written key file, scored by the official rules, gives the reported numbers
    keys = out / "semeval2007.key.txt"
    assert len(keys.read_text().splitlines()) == 455
    gold = wsd_data / "WSD_Evaluation_Framework/Evaluation_Datasets/semeval2007"
    assert main(["wsd", "score", str(gold / "semeval2007.gold.key.txt"), str(keys)]) == 0
    f1_line = capsys.readouterr().out.splitlines()[2]
    assert f1_line == f"F1=\t{entry['system']['F1']:.1f}%"
    # training on the fly with the same settings gives the same answers; --sweep adds the curve
    assert main(["wsd", "eval", "semeval2007", "--train", "semeval2015", "--system", "plain",
                 "--layers", "5", "--no-baselines", "--sweep",
                 "--out", str(tmp_path / "again")]) == 0  # fmt: skip
    again = (tmp_path / "again" / "semeval2007.key.txt").read_text()
    assert again == keys.read_text()
    swept = json.loads((tmp_path / "again" / "wsd-semeval2007.json").read_text())
    assert len(swept["sweep"]) == 16  # 7 hidden states + last-4 sum, raw and z-scored
    cell = [p for p in swept["sweep"] if p["layers"] == "5" and p["correction"] == "none"]
    assert cell[0]["F1"] == pytest.approx(swept["datasets"]["semeval2007"]["system"]["F1"])


@pytest.mark.slow
def test_layers_sweep_table_and_figure(wsd_data, tmp_path, capsys):
    code = main(["wsd", "layers", "--train", "semeval2015", "--test", "semeval2007",
                 "--specs", "0;last4-sum", "--out", str(tmp_path)])  # fmt: skip
    assert code == 0
    table = capsys.readouterr().out
    assert "last4-sum" in table and "F1 zscore" in table
    report = json.loads((tmp_path / "wsd-layers-semeval2007.json").read_text())
    assert [(p["layers"], p["correction"]) for p in report["sweep"]] == [
        ("0", "none"), ("0", "zscore"), ("last4-sum", "none"), ("last4-sum", "zscore")
    ]  # fmt: skip
    assert all(0 < p["F1"] < 100 for p in report["sweep"])
    assert "plotly" in (tmp_path / "wsd-layers-semeval2007.html").read_text().lower()


@pytest.mark.slow
def test_disambiguate_command_with_the_best_system(best_wsd_index, capsys):
    assert main(["wsd", "disambiguate", "He sat on the bank of the river", "--word", "bank",
                 "--system", "best"]) == 0  # fmt: skip
    out = capsys.readouterr().out
    best = [line for line in out.splitlines() if line.startswith("*")]
    assert len(best) == 1 and "bank%1:17:01::" in best[0] and "sloping land" in best[0]
    assert "system: best, trained on semcor" in out and "centroid of" in best[0]
    assert main(["wsd", "disambiguate", "The balloon was filled with helium", "--word",
                 "helium", "--system", "best"]) == 0  # fmt: skip
    assert "* " in capsys.readouterr().out  # answered (an IndexError once)
    assert main(["wsd", "disambiguate", "He sat on the bank", "--word", "river"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("workbench: error:") and len(err.strip().splitlines()) == 1


@pytest.mark.slow
def test_eval_of_the_best_system(best_wsd_index, tmp_path, capsys):
    # its index (a stand-in trained on part of SemCor in a test session) on SemEval-2007
    assert main(["wsd", "eval", "semeval2007", "--system", "best", "--json",
                 str(tmp_path / "r.json")]) == 0  # fmt: skip
    out = capsys.readouterr().out
    assert "== semeval2007: system best (L-1 raw +lexname +gloss(definition,0.2))" in out
    report = json.loads((tmp_path / "r.json").read_text())
    assert report["config"]["system"]["name"] == "best"
    assert report["config"]["index"]["config"] == {
        "layers": "-1", "correction": "none", "propagate": "lexname", "gloss": "concat",
        "gloss_weight": 0.2, "gloss_pooling": "definition",
    }  # fmt: skip
    assert report["datasets"]["semeval2007"]["n"] == 455


@pytest.mark.slow
def test_eval_without_semcor_is_the_wordnet_system_and_says_it_loses(
    wsd_data, tmp_path, monkeypatch, capsys
):
    # a data dir with the evaluation sets and no SemCor
    framework = tmp_path / "WSD_Evaluation_Framework"
    framework.mkdir()
    real = wsd_data / "WSD_Evaluation_Framework" / "Evaluation_Datasets"
    (framework / "Evaluation_Datasets").symlink_to(real)
    monkeypatch.setenv("WORKBENCH_DATA", str(tmp_path))
    assert main(["wsd", "eval", "semeval2007", "--system", "best", "--json",
                 str(tmp_path / "r.json")]) == 0  # fmt: skip
    captured = capsys.readouterr()
    assert "no SemCor in the data dir: the WordNet-only index is used" in captured.err
    assert "system wordnet" in captured.out and "note: No SemCor here" in captured.out
    report = json.loads((tmp_path / "r.json").read_text())
    assert report["config"]["system"]["name"] == "wordnet"
    assert "below WordNet's first sense" in report["config"]["system"]["note"]
    system = report["datasets"]["semeval2007"]["system"]["F1"]
    first = report["datasets"]["semeval2007"]["wordnet_first_sense"]["F1"]
    assert 30 < system < first  # what the note says


@pytest.mark.slow
def test_a_training_corpus_with_wordnets_examples(wsd_data, tiny_model_dir, tmp_path, capsys):
    # semeval2015+examples: the set's instances, then WordNet's 47,184 located usage examples;
    # a sense the set never tags gets a centroid of its own from its examples
    index_dir = tmp_path / "index"
    code = main(["wsd", "train", "--model", str(tiny_model_dir), "--corpus",
                 "semeval2015+examples", "--system", "plain", "--device", "cpu",
                 "--out", str(index_dir)])  # fmt: skip
    assert code == 0, capsys.readouterr().err
    out = capsys.readouterr().out
    s15 = load_corpus("semeval2015")
    examples = example_corpus()
    assert f"trained on: semeval2015+examples ({s15.n_instances + examples.n_instances} " in out
    index = load_index(index_dir)
    assert index.training_.corpus == "semeval2015+examples"
    assert index.training_.sha256 == with_examples(s15, examples).sha256
    tagged = {k for _, inst in s15.instances() for k in inst.keys}
    only_examples = {inst.keys[0] for _, inst in examples.instances()} - tagged
    assert len(only_examples) > 20_000 and only_examples <= set(index.keys_)  # a centroid each
    # a corpus that is not there is named, with the suffix taken off, before any work
    code = main(["wsd", "train", "--model", str(tiny_model_dir), "--corpus",
                 str(tmp_path / "absent.data.xml") + "+examples", "--device", "cpu"])  # fmt: skip
    err = capsys.readouterr().err
    assert code == 2 and "absent.data.xml: file not found" in err and "Traceback" not in err


def test_the_former_option_name_postprocess_still_works_and_says_so(capsys):
    """``--postprocess`` (the option's name before it was ``--correction``/``--corrections``) is
    read as the new one, hidden from --help, with a note on stderr."""
    parser = build_parser()
    args = parser.parse_args(["wsd", "eval", "--system", "best", "--postprocess", "zscore"])
    assert args.correction == "zscore"
    assert "--postprocess is deprecated: use --correction" in capsys.readouterr().err
    args = parser.parse_args(["wsd", "layers", "--postprocess", "none", "whiten"])
    assert args.corrections == ["none", "whiten"]
    assert "use --corrections" in capsys.readouterr().err
    assert parser.parse_args(["wsd", "eval"]).correction is None
    assert parser.parse_args(["wsd", "layers"]).corrections == ["none", "zscore"]
    with pytest.raises(SystemExit):
        parser.parse_args(["wsd", "eval", "--help"])
    shown = capsys.readouterr().out
    assert "--correction" in shown and "--postprocess" not in shown
