"""Two saved evaluations compared: deltas, paired p-values, the instances that differ."""

from __future__ import annotations

import json
from dataclasses import replace

import pytest

from tests.wsd.reporting.handmade import B2, P2, ROWS, hand_made
from workbench.cli.main import main
from workbench.errors import DataError
from workbench.wsd.reporting.compare import compare_tables, load_eval
from workbench.wsd.reporting.document import eval_report
from workbench.wsd.reporting.files import write_eval_report

MANY = ROWS * 40  # 240 instances: ids are numbered, so each is its own


def _saved(tmp_path, name, rows=ROWS, predicted=None, settings=""):
    made = hand_made(rows, predicted)
    facts = replace(made.facts, settings=settings)
    doc = eval_report(made.run, made.corpus, made.wordnet, facts, {}, n_boot=200)
    return write_eval_report(doc, tmp_path / name, "wsd-ALL")["json"]


def test_identical_systems_differ_nowhere_with_p_1(tmp_path):
    a = load_eval(_saved(tmp_path, "a"))
    cmp = compare_tables(a.table, a.table, "ALL")
    assert cmp.differences == () and cmp.n_common == 6
    assert {g.p_value for g in cmp.groups} == {1.0}
    assert {g.delta for g in cmp.groups} == {0.0}


def test_a_large_difference_has_a_small_p_and_lists_the_instances(tmp_path):
    n = len(MANY)
    fixed = {i: MANY[i][3] for i in range(n)}  # every answer right
    a = load_eval(_saved(tmp_path, "a", MANY, fixed))
    b = load_eval(_saved(tmp_path, "b", MANY))
    cmp = compare_tables(a.table, b.table, "ALL", n_boot=1000, seed=0)
    whole = next(g for g in cmp.groups if (g.split, g.group) == ("dataset", "ALL"))
    assert (whole.f1_a, whole.f1_b, whole.delta) == (100.0, 50.0, 50.0)
    assert whole.p_value < 0.01
    assert len(cmp.differences) == n // 2 and all(d.a_right and not d.b_right
                                                   for d in cmp.differences)  # fmt: skip
    zero_shot = next(g for g in cmp.groups if g.group == "0 (zero-shot)")
    assert (zero_shot.f1_a, zero_shot.f1_b) == (100.0, 0.0)


def test_compare_on_the_command_line(tmp_path, capsys):
    a = _saved(tmp_path, "a")
    b = _saved(tmp_path, "b", predicted={4: P2}, settings="smoothing 0.5")  # i4 now right
    assert load_eval(b).system == "biencoder, smoothing 0.5"  # not the same name as A's
    out = tmp_path / "cmp"
    assert main(["wsd", "compare", str(a), str(b), "--out", str(out), "--n-boot", "200"]) == 0
    printed = capsys.readouterr().out
    assert "B: WSD on ALL: biencoder, smoothing 0.5 (tiny-model;" in printed
    assert "| dataset | ALL | 6 | 50.000 | 66.667 | -16.667 |" in printed
    assert "semeval2007.d000.s004.t000" in printed
    saved = json.loads((out / "compare.json").read_text())
    assert saved["data"]["differences"][0]["b_right"] is True
    assert saved["title"] == "WSD comparison: biencoder against biencoder, smoothing 0.5"
    assert (out / "compare.html").is_file() and (out / "compare.md").is_file()


def test_other_test_data_or_an_old_report_is_refused(tmp_path, capsys):
    a = load_eval(_saved(tmp_path, "a"))
    rows = list(ROWS)
    rows[0] = (*rows[0][:3], B2, *rows[0][4:])
    other = load_eval(_saved(tmp_path, "b", tuple(rows)))
    with pytest.raises(DataError, match="other gold keys"):
        compare_tables(a.table, other.table, "ALL")
    old = tmp_path / "old.json"
    old.write_text(json.dumps({"datasets": {}}))
    assert main(["wsd", "compare", str(old), str(old)]) == 2
    assert "no per-instance table" in capsys.readouterr().err


@pytest.mark.slow
def test_two_systems_run_here_on_the_same_data(best_wsd_index, tmp_path, capsys):
    """A and B named as systems: each runs on --dataset (real data, the packaged model). The
    'best' system reads the session's index (the bi-encoder's own evaluation is
    test_report_of_all's; here it would encode SemEval-2007's glosses and their neighbours'
    on the session's empty cache, a minute of the suite for the same code path)."""
    out = tmp_path / "cmp"
    argv = ["wsd", "compare", "best", "wordnet", "--dataset", "semeval2007", "--n-boot",
            "200", "--show", "3", "--out", str(out)]  # fmt: skip
    assert main(argv) == 0
    printed = capsys.readouterr().out
    assert "A: WSD on semeval2007: best (" in printed
    assert "B: WSD on semeval2007: wordnet (" in printed
    saved = json.loads((out / "compare.json").read_text())
    assert saved["title"] == "WSD comparison: best against wordnet"
    assert saved["data"]["n_common"] == 455
    whole = next(g for g in saved["data"]["groups"] if g["group"] == "semeval2007")
    assert whole["delta"] == pytest.approx(whole["f1_a"] - whole["f1_b"])
    assert 0 < whole["p_value"] <= 1
    differing = saved["data"]["differences"]
    assert differing and all(d["a"] != d["b"] for d in differing)


def test_a_bad_saved_report_is_refused_before_a_system_runs(tmp_path, capsys):
    bad = tmp_path / "old.json"
    bad.write_text("{}")  # no per-instance table
    assert main(["wsd", "compare", "wordnet", str(bad)]) == 2  # read first: no system ran
    err = capsys.readouterr().err
    assert "running" not in err and "old.json" in err
