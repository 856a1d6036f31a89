"""Uncertainty of WSD scores: bootstrap intervals over instances and paired tests of two systems.

Every function takes per-instance *credit*: the official scorer's share of a correct answer
(:mod:`workbench.wsd.scoring`; 1 or 0 for a system that gives one key, 0 for an instance left
unanswered) and, optionally, which instances were answered. ``F1 = 2PR / (P + R)`` with
``P = credit / answered`` and ``R = credit / instances``, in percent; with every instance
answered it is the accuracy.

* :func:`bootstrap_f1`: F1 and its percentile interval over ``n_boot`` resamples of the
  instances (with replacement, the same size), seeded.
* :func:`paired_bootstrap`: two systems on the same instances, one resample for both; the
  two-sided p-value of their F1 difference (the share of resampled differences at least as far
  from the observed one as the observed one is from 0; Koehn 2004, Berg-Kirkpatrick et al.
  2012), with the add-one correction, so it is never 0.
* :func:`mcnemar_exact`: the exact McNemar (binomial sign) test on the instances where exactly
  one of the two is right (credit >= 0.5 counts as right).

Example::

    >>> f1, lo, hi = bootstrap_f1([1.0] * 50 + [0.0] * 50, n_boot=200, seed=0)
    >>> f1, lo < 50 < hi
    (50.0, True)
    >>> paired_bootstrap([1, 0, 1], [1, 0, 1]).p_value
    1.0
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from workbench.errors import InputError

#: The report's defaults: resamples, seed, and the interval's coverage.
N_BOOT = 1000
SEED = 0
LEVEL = 0.95
#: How the report names its methods.
INTERVAL_METHOD = "percentile bootstrap over instances"
PAIRED_METHOD = "paired bootstrap over instances, two-sided, add-one"


def _arrays(
    credit: Sequence[float] | np.ndarray, answered: Sequence[bool] | np.ndarray | None
) -> tuple[np.ndarray, np.ndarray]:
    c = np.asarray(credit, dtype=np.float64).reshape(-1)
    a = np.ones(len(c), bool) if answered is None else np.asarray(answered, bool).reshape(-1)
    if len(a) != len(c):
        raise InputError(f"{len(c)} credits but {len(a)} answered flags")
    if len(c) and (not np.isfinite(c).all() or c.min() < 0 or c.max() > 1):
        raise InputError("credit must lie in [0, 1] for every instance")
    return c, a


def f1_of(credit: np.ndarray, answered: np.ndarray, axis: int = -1) -> np.ndarray:
    """F1 in percent of credit and answered flags (summed along ``axis``); 0 where nothing
    is right."""
    n = credit.shape[axis]
    correct = credit.sum(axis=axis)
    attempted = answered.sum(axis=axis)
    p = np.divide(correct, attempted, out=np.zeros_like(correct, dtype=float), where=attempted > 0)
    r = correct / n if n else np.zeros_like(correct, dtype=float)
    total = p + r
    f1 = np.divide(2 * p * r, total, out=np.zeros_like(total, dtype=float), where=total > 0)
    return 100 * f1


def resample_counts(columns: np.ndarray, n_boot: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """A bootstrap of the rows of ``columns`` (``(n, k)``), drawn by kind of row: the distinct
    rows ``(m, k)`` and how often each is drawn in each resample, ``(n_boot, m)``.

    Drawing ``n`` instances with replacement is a multinomial over the instances; summed over
    instances that are alike (the same credit and answered flags), a multinomial over the kinds
    with their shares: the same distribution as drawing indices, without ``n_boot * n`` draws
    (``numpy.random.default_rng(seed).multinomial``).
    """
    if n_boot < 1:
        raise InputError(f"n_boot must be at least 1, got {n_boot}")
    kinds, counts = np.unique(columns, axis=0, return_counts=True)
    draws = np.random.default_rng(seed).multinomial(len(columns), counts / len(columns), n_boot)
    return kinds, draws


def _boot_f1(kinds: np.ndarray, draws: np.ndarray, credit: int, answered: int) -> np.ndarray:
    """F1 in percent of each resample, from the kinds' columns ``credit`` and ``answered``."""
    n = draws.sum(axis=1).astype(float)
    correct = draws @ kinds[:, credit]
    attempted = draws @ kinds[:, answered]
    p = np.divide(correct, attempted, out=np.zeros_like(correct), where=attempted > 0)
    r = correct / n
    total = p + r
    return 100 * np.divide(2 * p * r, total, out=np.zeros_like(total), where=total > 0)


def bootstrap_f1(
    credit: Sequence[float] | np.ndarray,
    n_boot: int = N_BOOT,
    seed: int = SEED,
    answered: Sequence[bool] | np.ndarray | None = None,
    level: float = LEVEL,
) -> tuple[float, float, float]:
    """F1 in percent and its ``level`` percentile-bootstrap interval: ``(f1, lo, hi)``.

    Args:
        credit: ``(n,)`` per-instance credit in [0, 1].
        n_boot: resamples of the ``n`` instances.
        seed: the generator's seed (the same seed, the same interval).
        answered: ``(n,)`` which instances were answered (default: all).
        level: the interval's coverage (0.95: the 2.5th and 97.5th percentiles).

    Returns:
        ``(nan, nan, nan)`` for no instances. All right: ``(100, 100, 100)``.
    """
    c, a = _arrays(credit, answered)
    if not len(c):
        return (math.nan, math.nan, math.nan)
    kinds, draws = resample_counts(np.column_stack([c, a]), n_boot, seed)
    boot = _boot_f1(kinds, draws, 0, 1)
    tail = 100 * (1 - level) / 2
    lo, hi = np.percentile(boot, [tail, 100 - tail])
    return float(f1_of(c, a)), float(lo), float(hi)


@dataclass(frozen=True)
class PairedTest:
    """Two systems on the same instances.

    Attributes:
        f1_a, f1_b: their F1 in percent; delta: ``f1_a - f1_b``.
        p_value: two-sided, of the paired bootstrap (1.0 for identical answers).
        n: instances; n_boot, seed: the resampling.
    """

    f1_a: float
    f1_b: float
    delta: float
    p_value: float
    n: int
    n_boot: int
    seed: int


def paired_bootstrap(
    credit_a: Sequence[float] | np.ndarray,
    credit_b: Sequence[float] | np.ndarray,
    n_boot: int = N_BOOT,
    seed: int = SEED,
    answered_a: Sequence[bool] | np.ndarray | None = None,
    answered_b: Sequence[bool] | np.ndarray | None = None,
) -> PairedTest:
    """The paired bootstrap test of two systems' F1 on the same ``n`` instances.

    Each resample draws the same instances for both; ``p = (1 + #{|d* - d| >= |d|}) /
    (1 + n_boot)`` with ``d`` the observed and ``d*`` a resampled difference (1.0 when the two
    answer alike everywhere).

    Raises:
        InputError: arrays of different lengths.
    """
    a, fa = _arrays(credit_a, answered_a)
    b, fb = _arrays(credit_b, answered_b)
    if len(a) != len(b):
        raise InputError(f"a paired test needs the same instances: {len(a)} against {len(b)}")
    if not len(a):
        return PairedTest(math.nan, math.nan, math.nan, 1.0, 0, n_boot, seed)
    f1_a, f1_b = float(f1_of(a, fa)), float(f1_of(b, fb))
    delta = f1_a - f1_b
    if np.array_equal(a, b) and np.array_equal(fa, fb):
        return PairedTest(f1_a, f1_b, 0.0, 1.0, len(a), n_boot, seed)
    kinds, draws = resample_counts(np.column_stack([a, fa, b, fb]), n_boot, seed)
    boot = _boot_f1(kinds, draws, 0, 1) - _boot_f1(kinds, draws, 2, 3)
    extreme = int(np.sum(np.abs(boot - delta) >= abs(delta) - 1e-12))
    p = min(1.0, (1 + extreme) / (1 + n_boot))
    return PairedTest(f1_a, f1_b, delta, p, len(a), n_boot, seed)


def mcnemar_exact(
    credit_a: Sequence[float] | np.ndarray, credit_b: Sequence[float] | np.ndarray
) -> float:
    """Two-sided exact McNemar p-value: ``b`` instances only A gets right, ``c`` only B;
    ``p = min(1, 2 P[X <= min(b, c)])`` for ``X ~ Binomial(b + c, 1/2)`` (1.0 when ``b + c``
    is 0).

    Example::

        >>> round(mcnemar_exact([1] * 30 + [0] * 5, [0] * 30 + [1] * 5), 6)
        1.3e-05
    """
    a, _ = _arrays(credit_a, None)
    b_, _ = _arrays(credit_b, None)
    if len(a) != len(b_):
        raise InputError(f"a paired test needs the same instances: {len(a)} against {len(b_)}")
    right_a, right_b = a >= 0.5, b_ >= 0.5
    only_a = int(np.sum(right_a & ~right_b))
    only_b = int(np.sum(~right_a & right_b))
    n, k = only_a + only_b, min(only_a, only_b)
    if n == 0:
        return 1.0
    log_half = n * math.log(0.5)
    terms = [math.lgamma(n + 1) - math.lgamma(i + 1) - math.lgamma(n - i + 1) + log_half
             for i in range(k + 1)]  # fmt: skip
    top = max(terms)
    tail = math.exp(top) * sum(math.exp(t - top) for t in terms)
    return min(1.0, 2 * tail)
