"""Bootstrap intervals and paired tests on constructed sets with known answers."""

from __future__ import annotations

import numpy as np
import pytest

from workbench.errors import InputError
from workbench.wsd.reporting.intervals import bootstrap_f1, mcnemar_exact, paired_bootstrap


def test_all_right_is_100_with_the_interval_100_100():
    assert bootstrap_f1([1.0] * 37) == (100.0, 100.0, 100.0)


def test_half_right_contains_50_and_narrows_with_n():
    widths = []
    for n in (20, 200, 2000):
        f1, lo, hi = bootstrap_f1([1.0, 0.0] * (n // 2), n_boot=1000, seed=0)
        assert f1 == pytest.approx(50.0)
        assert lo < 50 < hi
        widths.append(hi - lo)
    assert widths[0] > widths[1] > widths[2]
    # about 2 * 1.96 * sqrt(.25 / n) in points: 4.4 for 2,000 instances
    assert widths[2] == pytest.approx(100 * 2 * 1.96 * (0.25 / 2000) ** 0.5, rel=0.15)


def test_the_seed_fixes_the_interval_and_another_seed_moves_it():
    credit = np.r_[np.ones(60), np.zeros(40)]
    assert bootstrap_f1(credit, seed=3) == bootstrap_f1(credit, seed=3)
    assert bootstrap_f1(credit, seed=3)[1:] != bootstrap_f1(credit, seed=4)[1:]


def test_unanswered_instances_count_against_recall_only():
    # 2 right of 3 answered, 4 instances: P = 2/3, R = 1/2, F1 = 4/7
    f1, lo, hi = bootstrap_f1([1, 1, 0, 0], answered=[True, True, True, False])
    assert f1 == pytest.approx(100 * 4 / 7)
    assert lo <= f1 <= hi


def test_paired_test_of_identical_systems_is_1_and_of_a_large_difference_below_001():
    a = np.r_[np.ones(150), np.zeros(50)]
    same = paired_bootstrap(a, a.copy())
    assert (same.p_value, same.delta) == (1.0, 0.0)
    better = np.ones(200)
    better[:10] = 0  # 95% against 75% on the same 200 instances
    test = paired_bootstrap(better, a, n_boot=1000, seed=0)
    assert test.delta == pytest.approx(20.0)
    assert test.p_value < 0.01
    assert paired_bootstrap(a, np.roll(a, 1)).p_value > 0.5  # the same score, other instances
    assert mcnemar_exact(a, a) == 1.0
    assert mcnemar_exact(better, a) < 0.01


def test_bad_credit_is_refused():
    with pytest.raises(InputError, match="same instances"):
        paired_bootstrap([1, 0], [1])
    with pytest.raises(InputError, match=r"\[0, 1\]"):
        bootstrap_f1([1.5])
