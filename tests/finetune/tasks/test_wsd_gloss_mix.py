"""Mixed gloss texts in WSD training (``--gloss-mix``): a training batch reads the share of its
candidate glosses it says as the other text, drawn from the seed and the batch's rows (the same
batch draws the same), evaluation reads the run's own text, a ``top_layers`` run caches both
texts and trains, and options that cannot go together are refused by name."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from tests.finetune.tasks.tiny_wsd import TINY_WSD, tiny_task
from workbench.corpora.datasets import load_dataset
from workbench.encoding import models
from workbench.errors import InputError
from workbench.finetune.data.readers import DataFile
from workbench.finetune.tasks.registry import finetune, make_task
from workbench.finetune.tasks.wsd.lower import LowerLayers
from workbench.finetune.tasks.wsd.options import WsdOptions
from workbench.lexicon.glosses import gloss_text

MIX = TINY_WSD.with_task(gloss_text="esr", gloss_max_length=48, gloss_mix=0.5)


@pytest.fixture(scope="module")
def semcor(wsd_data):
    sentences = [s for s in load_dataset("semcor", wsd_data).sentences[:60] if s.instances]
    return DataFile(tuple(sentences[:24]), "semcor[:24]", "a"), DataFile(
        tuple(sentences[24:30]), "semcor[24:30]", "b"
    )


def _texts(task, batch) -> list[str]:
    """The text each gloss column of a batch was made from, decoded."""
    ids, mask = batch["gloss_input_ids"].numpy(), batch["gloss_attention_mask"].numpy()
    return [task.tokenizer.decode(i[m.astype(bool)], skip_special_tokens=True)
            for i, m in zip(ids, mask, strict=True)]  # fmt: skip


def test_a_training_batch_reads_a_share_of_its_glosses_as_the_other_text(tiny_model_dir, semcor):
    train, _ = semcor
    task = tiny_task(tiny_model_dir, MIX, train)
    feats = task.features(train, train=True)
    gen = torch.Generator().manual_seed(0)
    kinds = {"esr": 0, "definition": 0}
    for start in range(0, len(feats.rows), 4):
        rows = feats.rows[start : start + 4]
        batch = task.collate(rows, gen)
        union = batch["gloss_rows"].tolist()
        decoded = _texts(task, batch)
        for row, text in zip(union, decoded, strict=True):
            synset = task.glosses.synsets[row]
            read = {how: task.tokenizer.decode(task.tokenizer(
                        gloss_text(task.wordnet, synset, how), add_special_tokens=False,
                        truncation=True, max_length=46)["input_ids"])
                    for how in kinds}  # fmt: skip
            found = [how for how, t in read.items() if t == text]
            assert found, (synset, text)
            kinds[found[0]] += 1
        # each candidate column is its own synset's gloss, whichever text it is read as
        assert batch["candidates"].max() < len(union)
        # the same rows draw the same texts; an evaluation batch reads the run's own text
        assert decoded == _texts(task, task.collate(rows, gen))
        evaluated = _texts(task, task.collate(rows, None))
        assert all(t == task.tokenizer.decode(task.glosses.ids[r], skip_special_tokens=True)
                   for r, t in zip(task.collate(rows, None)["gloss_rows"].tolist(), evaluated,
                                   strict=True))  # fmt: skip
    total = sum(kinds.values())
    assert total > 100 and 0.35 < kinds["definition"] / total < 0.65


def test_a_top_layers_run_caches_both_texts_beforehand_and_trains(
    tiny_model_dir, semcor, tmp_path, monkeypatch
):
    train, dev = semcor
    cfg = MIX.with_task(gloss_mix=0.3, top_layers=1)
    prepared: set[tuple[int, ...]] = set()
    fill = LowerLayers.fill

    def spy(self, encoder, sequences, bar=None):
        if bar is not None:  # the pass before training (prepare), not a step's own top-up
            prepared.update(tuple(s) for s in sequences)
        return fill(self, encoder, sequences, bar)

    monkeypatch.setattr(LowerLayers, "fill", spy)
    result = finetune("wsd", train, dev, cfg, tmp_path / "run", model=str(tiny_model_dir),
                      progress=False)  # fmt: skip
    card = result.card
    assert card["options"]["gloss_mix"] == 0.3 and card["options"]["gloss_mix_text"] == "definition"
    assert all(np.isfinite(e["train_loss"]) for e in card["epochs"])
    # every text a step may read of every candidate was in the pass before training
    source = models.resolve_model(str(tiny_model_dir))
    task = make_task("wsd", cfg, models.load_tokenizer(source), train)
    task.features(train, train=True)
    assert task.mixed is not None
    both = [
        *task.glosses.ids,
        *(task.mixed.ids[m] for m in task.mixed.rows_of(task.glosses.synsets)),
    ]
    assert {tuple(g) for g in both} <= prepared


def test_options_that_cannot_go_together_are_refused_by_name():
    with pytest.raises(InputError, match="freeze_glosses"):
        WsdOptions(gloss_mix=0.3, freeze_glosses=True)
    with pytest.raises(InputError, match="gloss_mix_text is gloss_text"):
        WsdOptions(gloss_mix=0.3, gloss_text="definition", gloss_mix_text="definition")
    with pytest.raises(InputError, match="gloss_mix must be"):
        WsdOptions(gloss_mix=1.0)
    assert WsdOptions(gloss_mix=0.0, freeze_glosses=True).freeze_glosses  # off: no conflict
