from __future__ import annotations

import pytest

from workbench.errors import DataError, InputError
from workbench.wsd.scoring import (
    dataset_groups,
    format_score,
    format_table,
    percent,
    read_keys,
    score,
    score_by_group,
    score_files,
    scorer_output,
    write_keys,
)

# Four gold instances; "b" has two gold keys (either is right).
GOLD = {"a": {"k1"}, "b": {"k2", "k3"}, "c": {"k4"}, "d": {"k5"}}
# a: right (1); b: two answers, one right (1/2 right, 1/2 wrong); c: wrong (1);
# d: not answered; z: not in the gold, ignored.
SYSTEM = {"a": ["k1"], "b": ["k2", "x"], "c": ["x"], "z": ["k9"]}


def test_hand_computed_fractional_credit():
    s = score(GOLD, SYSTEM)
    assert s.correct == pytest.approx(1.5)
    assert s.wrong == pytest.approx(1.5)
    assert (s.answered, s.total) == (3, 4)
    assert s.precision == pytest.approx(1.5 / 3)
    assert s.recall == pytest.approx(1.5 / 4)
    assert s.f1 == pytest.approx(2 * 0.5 * 0.375 / (0.5 + 0.375))


def test_any_gold_key_counts_and_all_answers_right_is_full_credit():
    s = score(GOLD, {"b": ["k3"], "a": ["k1"]})
    assert s.precision == 1.0 and s.recall == pytest.approx(2 / 4)
    s = score(GOLD, {"b": ["k2", "k3"]})
    assert s.correct == pytest.approx(1.0) and s.wrong == 0.0


def test_missing_answers_lower_recall_only():
    s = score(GOLD, {"a": ["k1"]})
    assert s.precision == 1.0
    assert s.recall == pytest.approx(0.25)
    assert s.f1 == pytest.approx(0.4)


def test_nothing_answered_scores_zero():
    s = score(GOLD, {"zz": ["k1"]})
    assert (s.precision, s.recall, s.f1, s.answered) == (0.0, 0.0, 0.0, 0)


def test_duplicate_answers_are_a_set():
    assert score(GOLD, {"a": ["k1", "k1", "x"]}).correct == pytest.approx(0.5)


def test_official_output_format_and_rounding():
    text = format_score(score(GOLD, SYSTEM))
    assert text == "P=\t50.0%\nR=\t37.5%\nF1=\t42.9%"
    assert percent(0.7125) == "71.3"  # half up, like Java's %.1f
    assert percent(0.71249) == "71.2"


def test_score_files_round_trip(tmp_path):
    gold = tmp_path / "gold.key.txt"
    gold.write_text("a k1\nb k2 k3\nc k4\nd k5\n")
    system = tmp_path / "system.key.txt"
    # repeated id lines merge into one answer set; a line without a key is skipped
    system.write_text("a k1\nb k2\nb x\nc x\nz k9\nd\n\n")
    s = score_files(gold, system)
    assert s.correct == pytest.approx(1.5) and s.answered == 3 and s.total == 4
    assert scorer_output(gold, system) == "P=\t50.0%\nR=\t37.5%\nF1=\t42.9%"
    out = write_keys(tmp_path / "out" / "sys.txt", {"a": "k1", "b": ["k2", "x"], "e": []})
    assert out.read_text() == "a k1\nb k2 x\n"
    assert read_keys(out) == {"a": frozenset({"k1"}), "b": frozenset({"k2", "x"})}


def test_missing_key_file_is_a_data_error(tmp_path):
    with pytest.raises(DataError, match="nope.txt"):
        score_files(tmp_path / "nope.txt", tmp_path / "nope.txt")


def test_per_pos_and_per_group():
    pos = {"a": "NOUN", "b": "NOUN", "c": "VERB", "d": "VERB"}
    by_pos = score_by_group(GOLD, SYSTEM, pos)
    assert list(by_pos) == ["NOUN", "VERB"]
    assert by_pos["NOUN"].recall == pytest.approx(1.5 / 2)
    assert by_pos["VERB"].precision == 0.0 and by_pos["VERB"].total == 2
    # groups partition the gold: credits add up to the overall score
    total = sum(s.correct for s in by_pos.values())
    assert total == pytest.approx(score(GOLD, SYSTEM).correct)
    groups = dataset_groups(["senseval2.d000.s000.t000", "semeval2007.d001.s002.t003"])
    assert groups["senseval2.d000.s000.t000"] == "senseval2"
    assert set(score_by_group(GOLD, SYSTEM, {"a": "x"})) == {"x"}
    assert "NOUN" in format_table(by_pos, "pos")


@pytest.mark.parametrize(
    "gold, system, message",
    [
        ("", "a k1\n", "gold.txt: no gold keys"),
        ("\n\n   \n", "a k1\n", "gold.txt: no gold keys"),
        ("a\nb\n", "a k1\n", "gold.txt:1: instance 'a' has no sense key"),  # ids without keys
        ("a k1\n", "", "system.txt: no answers"),
        ("a k1\nb k2\n", "x k1\ny k2\n", "none of the 2 ids in .*system.txt .*'x'"),
    ],
)
def test_key_files_that_cannot_be_meant_are_refused(tmp_path, gold, system, message):
    (tmp_path / "gold.txt").write_text(gold)
    (tmp_path / "system.txt").write_text(system)
    with pytest.raises(DataError, match=message):
        scorer_output(tmp_path / "gold.txt", tmp_path / "system.txt")


def test_some_unknown_ids_are_ignored_as_the_official_scorer_does(tmp_path):
    (tmp_path / "gold.txt").write_text("a k1\nb k2\n")
    (tmp_path / "system.txt").write_text("a k1\nzz k9\n")
    assert scorer_output(tmp_path / "gold.txt", tmp_path / "system.txt").startswith("P=\t100.0%")


@pytest.mark.parametrize("answers", [{"a b": "k1"}, {"a": "k 1"}, {"a": ["k1", ""]}, {"": "k"}])
def test_ids_or_keys_that_would_break_a_key_file_are_refused(tmp_path, answers):
    with pytest.raises(InputError, match="whitespace"):
        write_keys(tmp_path / "keys.txt", answers)
    assert not (tmp_path / "keys.txt").exists()
