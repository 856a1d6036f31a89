"""Class 9 of the third hostile round (issue 53): a whole run is never lost at its end. A WSD
bi-encoder trained on a corpus of nouns only used to train to the end, then the POS probe
refused its one class and the model was not saved (and ``--resume`` repeated the same end): the
probe is skipped with a warning, the card says why, and what was trained is saved and
answers."""

from __future__ import annotations

import dataclasses
import json

import pytest

from tests.finetune.tasks.tiny_wsd import TINY_WSD
from workbench.corpora.datasets import load_dataset
from workbench.corpora.readers import Corpus
from workbench.finetune.data.readers import DataFile
from workbench.finetune.tasks.registry import finetune
from workbench.finetune.tasks.wsd.finish import fit_pos_probe
from workbench.wsd.biencoder import BiEncoder
from workbench.wsd.disambiguate import disambiguate
from workbench.wsd.opened import OpenedSystem
from workbench.wsd.pos_probe import PROBE_FILE, load_probe

CFG = TINY_WSD


def _only(sentences, pos: str):
    """The sentences with their ``pos`` instances only (those without one dropped)."""
    kept = [dataclasses.replace(s, instances=tuple(i for i in s.instances if i.pos == pos))
            for s in sentences]  # fmt: skip
    return tuple(s for s in kept if s.instances)


@pytest.fixture(scope="module")
def semcor(wsd_data):
    return [s for s in load_dataset("semcor", wsd_data).sentences[:60] if s.instances]


def test_a_bi_encoder_trained_on_nouns_only_is_saved_without_a_probe(
    tiny_model_dir, semcor, tmp_path
):
    nouns = _only(semcor[:30], "NOUN")
    train = DataFile(nouns[:16], "semcor-nouns[:16]", "n")
    test = DataFile(nouns[16:22], "semcor-nouns[16:22]", "t")
    out = tmp_path / "nouns"
    with pytest.warns(RuntimeWarning, match="no POS probe was fitted: .* all NOUN"):
        finetune("wsd", train, None, CFG, out, model=str(tiny_model_dir), progress=False,
                 test=test)  # fmt: skip
    card = json.loads((out / "training_card.json").read_text())  # the run is saved, complete
    assert "all NOUN" in card["pos_probe"]["skipped"]
    assert any("no POS probe" in note for note in card["notes"])
    assert not (out / PROBE_FILE).exists() and PROBE_FILE not in card["files"]
    bi = BiEncoder(out, device="cpu")
    assert bi.pos_probe is None
    answer = disambiguate(OpenedSystem.of_biencoder(bi), "He sat on the bank of the river", "bank")
    assert answer.candidates and answer.predicted_pos == ("", 0.0)  # every POS weighed


def test_a_probe_fits_on_what_there_is(tiny_model_dir, semcor, tmp_path):
    """Two POS in three sentences: too few words to hold a tenth out, the top layer is fitted
    on all of them; one POS: skipped before anything is encoded."""
    nouns, verbs = _only(semcor[:10], "NOUN"), _only(semcor[:10], "VERB")
    out = tmp_path / "model"
    finetune("wsd", DataFile(nouns[:6] + verbs[:6], "mixed", "m"), None, CFG, out,
             model=str(tiny_model_dir), progress=False)  # fmt: skip
    bi = BiEncoder(out, device="cpu")
    assert bi.pos_probe is not None  # the mixed data fitted one
    few = Corpus("few", (nouns[0], verbs[0]), sha256="f")
    facts = fit_pos_probe(bi, few, seed=0)
    assert "skipped" not in facts and facts["instances"] >= 2
    assert load_probe(out / PROBE_FILE).classes_ == ("NOUN", "VERB")
    with pytest.warns(RuntimeWarning, match="all VERB"):
        facts = fit_pos_probe(bi, Corpus("verbs", verbs[:3], sha256="v"), seed=0)
    assert "skipped" in facts and bi.pos_probe is None
