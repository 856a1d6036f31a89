"""Knowledge distillation in the WSD task (``--distil-from``), on a tiny random BERT: the teacher's
soft targets are its answers, the loss mixes them in as the formula says, a run trains with them
and resumes, and a teacher that is not a bi-encoder is refused before anything is read."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from tests.finetune.tasks.tiny_wsd import TINY_WSD
from workbench.cli.main import main
from workbench.corpora.datasets import load_dataset
from workbench.encoding import models
from workbench.errors import InputError
from workbench.finetune.data.readers import DataFile
from workbench.finetune.tasks.registry import finetune, make_task
from workbench.finetune.tasks.wsd.distil import check_teacher_scores, teacher_scores
from workbench.finetune.tasks.wsd.model import distillation_loss
from workbench.finetune.tasks.wsd.options import WsdOptions
from workbench.lexicon.wordnet import load_wordnet
from workbench.wsd.biencoder import CONTEXT_LAYERS, BiEncoder

CFG = TINY_WSD


@pytest.fixture(scope="module")
def sentences(wsd_data):
    """SemCor sentences with instances: 24 to train on, then 6 (dev)."""
    found = [s for s in load_dataset("semcor", wsd_data).sentences[:60] if s.instances]
    return found[:24], found[24:30]


@pytest.fixture(scope="module")
def teacher(tiny_model_dir, sentences, tmp_path_factory):
    """A bi-encoder trained on the 24 sentences: the teacher."""
    out = tmp_path_factory.mktemp("teacher") / "model"
    train = DataFile(tuple(sentences[0]), "semcor[:24]", "a")
    dev = DataFile(tuple(sentences[1]), "dev", "b")
    finetune("wsd", train, dev, CFG, out, model=str(tiny_model_dir), progress=False)
    return out


def test_the_soft_targets_are_the_teachers_answers_in_the_students_candidate_order(
    teacher, tiny_model_dir, sentences
):
    cfg = CFG.with_task(distil_from=str(teacher), distil_weight=0.25, distil_temperature=2.0)
    source = models.resolve_model(str(tiny_model_dir))
    train = DataFile(tuple(sentences[0][:8]), "semcor[:8]", "x")
    task = make_task("wsd", cfg, models.load_tokenizer(source), train)
    feats = task.features(train, train=True)
    assert any("scored by the teacher" in n for n in feats.notes)
    assert all("teacher" not in r for r in task.features(train, train=False).rows)
    # each score is the dot product of the teacher's context vector of the word, read from
    # its sentence alone, and the teacher's gloss vector of that candidate's synset
    bi = BiEncoder(teacher, device="cpu")
    wordnet = load_wordnet()
    insts = {i.id: (s, i) for s in sentences[0][:8] for i in s.instances}
    checked = 0
    for row in feats.rows:
        for iid, got in zip(row["ids"], row["teacher"], strict=True):
            sentence, inst = insts[iid]
            keys = wordnet.candidates(inst.lemma.lower(), inst.pos)
            emb = bi.encoder.encode([list(sentence.words)], keep=[[inst.index]], progress=False)
            context = emb.select(CONTEXT_LAYERS)[0]
            glosses = bi.gloss_vectors([wordnet.synset(k) for k in keys], wordnet)
            np.testing.assert_allclose(got, glosses @ context, rtol=1e-4, atol=1e-4)
            checked += 1
    assert checked > 10
    # the batch carries them on the candidates' grid
    batch = task.collate(feats.rows[:4], torch.Generator())
    assert batch["teacher"].shape == batch["candidates"].shape
    assert not batch["teacher"][batch["candidates"] < 0].any()


def test_the_distillation_term_is_the_tempered_divergence_and_mixes_into_the_loss(
    teacher, tiny_model_dir, sentences
):
    # a known case: teacher (3/4, 1/4), student (1/2, 1/2), no padding, T = 1
    student = torch.tensor([[0.0, 0.0, -math.inf]])
    pad = torch.tensor([[False, False, True]])
    known = torch.tensor([[math.log(3.0), 0.0, 123.0]])
    kl = 0.75 * math.log(0.75 / 0.5) + 0.25 * math.log(0.25 / 0.5)
    assert float(distillation_loss(student, known, pad, 1.0)[0]) == pytest.approx(kl, rel=1e-6)
    # at T = 2 both are softened and the term is scaled by 4
    p = torch.softmax(known[:, :2] / 2, 1)[0]
    kl2 = float((p * torch.log(p / 0.5)).sum()) * 4
    assert float(distillation_loss(student, known, pad, 2.0)[0]) == pytest.approx(kl2, rel=1e-6)
    # in the model: (1 - w) * gold + w * teacher, per instance, then the mean
    w, t = 0.25, 2.0
    cfg = CFG.with_task(distil_from=str(teacher), distil_weight=w, distil_temperature=t)
    source = models.resolve_model(str(tiny_model_dir))
    train = DataFile(tuple(sentences[0][:8]), "semcor[:8]", "x")
    task = make_task("wsd", cfg, models.load_tokenizer(source), train)
    batch = task.collate(task.features(train, train=True).rows[:4], torch.Generator())
    model, _ = task.build_model(source)
    model.eval()
    with torch.no_grad():
        mixed, scores = model(**batch)
        teacher_grid = batch.pop("teacher")
        plain, _ = model(**batch)
        pad = batch["candidates"] < 0
        gold = scores.logsumexp(1) - scores.masked_fill(batch["gold"] <= 0, -math.inf).logsumexp(1)
        kd = distillation_loss(scores, teacher_grid, pad, t)
        # a teacher that scores exactly as the student adds nothing but its share
        same, _ = model(**batch, teacher=scores.masked_fill(pad, 0.0))
    assert float(plain) == pytest.approx(float(gold.mean()), rel=1e-5)
    assert float(mixed) == pytest.approx(float(((1 - w) * gold + w * kd).mean()), rel=1e-5)
    assert float(mixed) != pytest.approx(float(plain), rel=1e-3)
    assert float(same) == pytest.approx((1 - w) * float(plain), rel=1e-5)
    with pytest.raises(InputError, match="distil_weight"):
        WsdOptions(distil_weight=1.5)
    with pytest.raises(InputError, match="distil_temperature"):
        WsdOptions(distil_temperature=0.0)


def test_a_distilled_run_trains_names_its_teacher_and_reads_it_again_the_same(
    teacher, tiny_model_dir, sentences, tmp_path
):
    cfg = CFG.with_task(distil_from=str(teacher), distil_weight=0.5, distil_temperature=1.0)
    train = DataFile(tuple(sentences[0][:12]), "semcor[:12]", "c")
    dev = DataFile(tuple(sentences[1]), "dev", "b")
    out = tmp_path / "student"
    result = finetune("wsd", train, dev, cfg, out, model=str(tiny_model_dir), progress=False)
    assert result.card["options"]["distil_from"] == str(teacher)
    assert any("scored by the teacher" in n for n in result.card["notes"])
    assert math.isfinite(result.history[-1].train_loss)
    # the teacher's scores on the training data are the same on a second reading (a resume
    # reads them again, from the teacher's caches)
    first = teacher_scores(teacher, train)
    again = teacher_scores(teacher, train)
    assert first.keys() == again.keys() and all(np.array_equal(first[k], again[k]) for k in first)


def test_a_teacher_that_is_not_a_bi_encoder_is_refused_before_the_data_is_read(
    tiny_model_dir, tmp_path, capsys
):
    out = tmp_path / "out"
    args = ["finetune", "wsd", "--train", str(tmp_path / "absent.data.xml"),
            "--model", str(tiny_model_dir), "--distil-from", str(tiny_model_dir),
            "--out", str(out), "--device", "cpu", "--no-progress"]  # fmt: skip
    assert main(args) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "is not a trained WSD bi-encoder's directory" in err[0]
    assert not out.exists()


def test_teacher_scores_missing_short_or_not_finite_are_refused_naming_the_instance():
    good = {"a": np.array([1.0, 2.0], dtype=np.float32)}
    check_teacher_scores(good, ["a"], [2], "T")
    for scores, ids, n in (
        (good, ["b"], [2]),  # no scores for b
        (good, ["a"], [3]),  # two for three candidates
        ({"a": np.array([1.0, np.nan], dtype=np.float32)}, ["a"], [2]),
    ):
        with pytest.raises(InputError, match=f"instance {ids[0]} one finite score for each"):
            check_teacher_scores(scores, ids, n, "T")
