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
