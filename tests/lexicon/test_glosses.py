"""What a gloss encoder reads for a synset, each way of reading it, on WordNet 3.0 itself."""

from __future__ import annotations

import pytest

from workbench.lexicon.glosses import GLOSS_TEXTS, gloss_text
from workbench.lexicon.wordnet import load_wordnet


@pytest.fixture(scope="module")
def wn():
    return load_wordnet()


def test_each_way_reads_the_definition_and_adds_what_it_names(wn):
    definition = "sloping land (especially the slope beside a body of water)"
    texts = {how: gloss_text(wn, "bank.n.01", how) for how in GLOSS_TEXTS}
    assert texts["definition"] == definition
    assert texts["lemmas"] == f"bank : {definition}"
    assert texts["lemmas+examples"].startswith(f"bank : {definition} ; ")
    assert "canoe" in texts["lemmas+examples"]
    assert texts["lemmas+hypernyms"] == (
        f"bank : {definition} ; a kind of slope, incline, side : an elevated geological formation"
    )


def test_hypernyms_instance_ones_included_and_none_reads_as_lemmas(wn):
    paris = gloss_text(wn, "paris.n.01", "lemmas+hypernyms")
    assert paris.endswith("; a kind of national capital : the capital city of a nation")
    assert paris.startswith("Paris, City of Light")
    good = "good.a.01"  # adjectives have no hypernyms
    assert gloss_text(wn, good, "lemmas+hypernyms") == gloss_text(wn, good, "lemmas")


def test_esr_reads_lemmas_definition_example_hypernym_and_a_verbs_frames(wn):
    assert gloss_text(wn, "bank.n.01", "esr") == (
        "bank: sloping land (especially the slope beside a body of water) ; they pulled the "
        "canoe up on the bank ; an elevated geological formation"
    )
    strike = gloss_text(wn, "strike.v.01", "esr")
    assert strike.startswith("strike: deliver a sharp blow, as with the hand, fist, or weapon ; ")
    frames = wn.reader.synset("strike.v.01").lemmas()[0].frame_strings()
    assert strike.endswith(" ; ".join(frames)) and "Somebody strike something" in frames
    assert gloss_text(wn, "strike.v.01", "esr").count(wn.gloss("touch.v.01")) == 1  # hypernym
    # no example, no hypernym, no frames: the lemmas and the definition alone
    plant = "plant.n.02"
    assert gloss_text(wn, plant, "esr").startswith("plant, flora, plant life: (botany) ")
    assert wn.frames("bank.n.01") == ()
