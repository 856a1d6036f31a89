"""Sampled negatives: a training instance's loss over its gold senses and a few of its other
candidates, drawn anew at each step, instead of all of them.

A first-stage step of the bi-encoder encodes the union of its instances' candidate glosses
through the gloss tower; those glosses are nearly all of a step's tokens. With
``negatives=N`` an instance with more than ``N`` other candidates keeps its gold senses and
``N`` of the others, drawn without replacement, so the union shrinks and the step with it
(what it saves and costs: docs/results.md, "Cheaper first-stage steps"). Dev and test scoring,
and a step with the gloss tower frozen, always compare all candidates.

Example::

    rng = np.random.default_rng([seed, *batch_rows])
    kept_candidates(12, [3], 5, rng)    # e.g. [2, 3, 4, 5, 6, 8]: the gold 3 and 5 others
    kept_candidates(4, [1], 5, rng)     # [0, 1, 2, 3]: 4 candidates, all kept
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

#: A number put in the seed of the negatives' draws, so they are not the gloss mix's draws.
NEGATIVES_STREAM = 0x6E6567


def kept_candidates(
    n_candidates: int, gold: Sequence[int], negatives: int, rng: np.random.Generator
) -> list[int]:
    """The positions (ascending) among ``n_candidates`` that an instance's loss compares: every
    gold position and ``negatives`` of the others drawn by ``rng`` without replacement (all of
    them when there are no more than that; ``negatives=0``: all positions)."""
    golden = set(gold)
    others = [i for i in range(n_candidates) if i not in golden]
    if negatives <= 0 or len(others) <= negatives:
        return list(range(n_candidates))
    drawn = rng.choice(len(others), size=negatives, replace=False)
    return sorted([*golden, *(others[int(j)] for j in drawn)])
