"""MFS/LFS, seen-count and candidate splits on a hand-made set with known counts."""

from __future__ import annotations

import pytest

from tests.wsd.reporting.handmade import hand_made
from workbench.wsd.reporting.instances import instance_table
from workbench.wsd.reporting.splits import score_splits, split_groups


def _scores(made, seen=True):
    index = made.run.index if seen else None
    table = instance_table(made.run.instances, made.run.evaluation, made.wordnet,
                           seen=index.count_of if index else None)  # fmt: skip
    rows = score_splits(table, split_groups(table, "ALL"), n_boot=200)
    return table, {(r.split, r.group): r for r in rows}


def test_the_instance_table_holds_the_known_facts(made):
    table, _ = _scores(made)
    assert list(table.credit) == [1, 0, 1, 0, 0, 1]
    assert list(table.wordnet_first) == [True, False, False, True, False, True]
    assert list(table.semcor_mfs) == [False, True, False, True, False, True]
    assert list(table.seen) == [20, 0, 2, 5, 0, 1]
    assert list(table.candidates) == [3, 3, 3, 2, 2, 1]
    assert table.margin[0] == pytest.approx(0.7) and table.margin[5] != table.margin[5]
    assert table.dataset == ("senseval2",) * 3 + ("semeval2007",) * 3


def test_mfs_lfs_seen_and_candidate_splits(made):
    _, s = _scores(made)
    # WordNet's first sense: i0, i3, i5 (2 right); the others: i1, i2, i4 (1 right)
    assert (s["WordNet first sense", "MFS"].n, s["WordNet first sense", "MFS"].f1) == (
        3, pytest.approx(200 / 3))  # fmt: skip
    assert s["WordNet first sense", "LFS"].f1 == pytest.approx(100 / 3)
    assert s["WordNet first sense", "MFS"].baselines["wordnet_first_sense"] == 100.0
    assert s["WordNet first sense", "LFS"].baselines["wordnet_first_sense"] == 0.0
    # SemCor's MFS: i1, i3, i5 (1 right)
    assert s["SemCor MFS", "MFS"].f1 == pytest.approx(100 / 3)
    assert s["SemCor MFS", "MFS"].baselines["semcor_mfs"] == 100.0
    # seen 0: i1, i4 (both wrong); 1-2: i2, i5 (right); 3-10: i3 (wrong); >10: i0 (right)
    seen = {g: (r.n, r.f1) for (split, g), r in s.items() if split == "seen in training"}
    assert seen == {"0 (zero-shot)": (2, 0.0), "1-2": (2, 100.0), "3-10": (1, 0.0),
                    ">10": (1, 100.0)}  # fmt: skip
    cands = {g: (r.n, r.f1) for (split, g), r in s.items() if split == "candidates"}
    assert cands == {"1": (1, 100.0), "2-3": (5, pytest.approx(40.0))}
    assert s["seen in training", "0 (zero-shot)"].hi == 0.0  # all wrong: [0, 0]
    assert s["dataset", "senseval2"].f1 == pytest.approx(200 / 3)
    assert s["dataset", "ALL"].n == 6 and s["dataset", "ALL"].f1 == 50.0
    assert s["dataset x POS", "semeval2007 VERB"].n == 2
    for r in s.values():
        assert r.lo <= r.f1 <= r.hi


def test_a_system_without_training_counts_has_no_seen_split(made):
    table, s = _scores(made, seen=False)
    assert table.seen is None
    assert not any(split == "seen in training" for split, _ in s)


def test_another_answer_changes_only_its_groups():
    _, s = _scores(hand_made(predicted={1: "bank%1:14:00::"}))  # i1 now right
    assert s["seen in training", "0 (zero-shot)"].f1 == 50.0
    assert s["seen in training", ">10"].f1 == 100.0
