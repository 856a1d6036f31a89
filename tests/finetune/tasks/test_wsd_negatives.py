"""Sampled negatives in WSD training (``--negatives N``): a training batch compares each
instance's gold senses with at most N of its other candidates, drawn from the seed and the
batch's rows (the same batch draws the same), so it encodes fewer glosses; an evaluation batch
compares all candidates; a teacher's scores follow the same candidates; a run trains with it and
its card says so; the two-stage run's frozen stage compares all."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from tests.finetune.tasks.tiny_wsd import TINY_WSD, tiny_task
from workbench.corpora.datasets import load_dataset
from workbench.finetune.data.readers import DataFile
from workbench.finetune.tasks.registry import finetune
from workbench.finetune.tasks.wsd.negatives import kept_candidates
from workbench.finetune.tasks.wsd.stages import second_stage_config

NEG = TINY_WSD.with_task(negatives=2)


@pytest.fixture(scope="module")
def semcor(wsd_data):
    sentences = [s for s in load_dataset("semcor", wsd_data).sentences[:60] if s.instances]
    return DataFile(tuple(sentences[:24]), "semcor[:24]", "a"), DataFile(
        tuple(sentences[24:30]), "semcor[24:30]", "b"
    )


def test_kept_candidates_keep_the_gold_and_draw_that_many_others():
    rng = np.random.default_rng(0)
    for _ in range(200):
        kept = kept_candidates(12, [3, 7], 4, rng)
        assert kept == sorted(set(kept)) and {3, 7} <= set(kept) and len(kept) == 6
    assert kept_candidates(5, [0], 4, rng) == [0, 1, 2, 3, 4]  # no more than 4 others: all
    assert kept_candidates(12, [3], 0, rng) == list(range(12))  # 0: all
    drawn = [kept_candidates(10, [0], 3, rng) for _ in range(900)]
    counts = np.bincount([k for kept in drawn for k in kept if k], minlength=10)[1:]
    assert counts.min() > 200 and counts.max() < 400  # each other candidate about 1 in 3


def _by_instance(batch, rows) -> list[tuple[str, set[int]]]:
    """Each instance of a batch: its id and the gloss rows (synsets) its candidates are."""
    union = batch["gloss_rows"].tolist()
    ids = [i for row in rows for i in row["ids"]]
    return [(i, {union[c] for c in cand if c >= 0})
            for i, cand in zip(ids, batch["candidates"].tolist(), strict=True)]  # fmt: skip


def test_a_training_batch_compares_the_gold_and_n_others_and_evaluation_all(tiny_model_dir, semcor):
    train, _ = semcor
    task = tiny_task(tiny_model_dir, NEG, train)
    feats = task.features(train, train=True)
    gen = torch.Generator().manual_seed(0)
    cut = fewer = 0
    for start in range(0, len(feats.rows), 4):
        rows = feats.rows[start : start + 4]
        trained, scored = task.collate(rows, gen), task.collate(rows, None)
        every = [set(c) for row in rows for c in row["cands"]]
        golds = [{row["cands"][j][g] for g in gold}
                 for row in rows for j, gold in enumerate(row["gold"])]  # fmt: skip
        union = trained["gloss_rows"].tolist()
        for (_, kept), all_of, gold, marks, cand in zip(
            _by_instance(trained, rows), every, golds, trained["gold"].tolist(),
            trained["candidates"].tolist(), strict=True,
        ):  # fmt: skip
            assert gold <= kept <= all_of and len(kept) == min(len(all_of), len(gold) + 2)
            # the gold marks sit on the gold senses' columns, and only there
            assert {union[c] for c, m in zip(cand, marks, strict=True) if m} == gold
            cut += len(kept) < len(all_of)
        # an evaluation batch compares every candidate
        assert [k for _, k in _by_instance(scored, rows)] == every
        fewer += len(union) < len(scored["gloss_rows"])
        # the same rows draw the same candidates
        assert _by_instance(task.collate(rows, gen), rows) == _by_instance(trained, rows)
    assert cut > 10 and fewer >= 3


def test_a_teachers_scores_follow_the_kept_candidates(tiny_model_dir, semcor):
    train, _ = semcor
    task = tiny_task(tiny_model_dir, NEG, train)
    rows = task.features(train, train=True).rows[:4]
    for row in rows:  # a teacher that scores candidate k of every instance as k
        row["teacher"] = [list(map(float, range(len(c)))) for c in row["cands"]]
    batch = task.collate(rows, torch.Generator().manual_seed(0))
    union = batch["gloss_rows"].tolist()
    all_cands = [c for row in rows for c in row["cands"]]
    for cand, scores, full in zip(batch["candidates"].tolist(), batch["teacher"].tolist(),
                                  all_cands, strict=True):  # fmt: skip
        for c, s in zip(cand, scores, strict=True):
            if c >= 0:
                assert full.index(union[c]) == s  # the teacher's score of that same candidate


def test_a_run_with_negatives_trains_says_so_and_its_frozen_stage_compares_all(
    tiny_model_dir, semcor, tmp_path
):
    train, dev = semcor
    card = finetune("wsd", train, dev, NEG, tmp_path / "run", model=str(tiny_model_dir),
                    progress=False).card  # fmt: skip
    assert card["options"]["negatives"] == 2
    assert all(np.isfinite(e["train_loss"]) for e in card["epochs"])
    assert second_stage_config(NEG, 3e-5).task.negatives == 0
