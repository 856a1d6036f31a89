"""The WSD report's tables built from a known evaluation: the wrong instances of one lemma."""

from __future__ import annotations

from workbench.corpora.readers import Corpus, Instance, Sentence
from workbench.wsd.evaluate import Evaluation, dataset_result
from workbench.wsd.predict import Prediction
from workbench.wsd.report import lemma_error_table

RIVER, MONEY = "bank%1:17:01::", "bank%1:14:00::"


class _WordNet:
    GLOSSES = {RIVER: "sloping land", MONEY: "a financial institution"}

    def has_key(self, key):
        return key in self.GLOSSES

    def synset(self, key):
        return key

    def gloss(self, synset):
        return self.GLOSSES[synset]


def _sentence(i: int, words: str, at: int, lemma: str, pos: str, keys: tuple[str, ...]):
    w = tuple(words.split())
    inst = Instance(f"d.s{i}.t0", at, lemma, pos, keys)
    return Sentence(f"d.s{i}", w, w, ("X",) * len(w), (inst,))


def _prediction(key: str | None) -> Prediction:
    return Prediction(key, 0.5, None, float("nan"), "centroid" if key else "none")


def test_lemma_error_table_lists_the_wrong_instances_of_one_lemma():
    corpus = Corpus("d", (
        _sentence(0, "the river bank", 2, "bank", "NOUN", (RIVER,)),       # right
        _sentence(1, "a bank loan", 1, "bank", "NOUN", (MONEY,)),          # wrong
        _sentence(2, "they bank on it", 1, "bank", "VERB", ("bank%2:31:00::",)),  # other POS
        _sentence(3, "banks fail", 0, "bank", "NOUN", (MONEY, RIVER)),     # no answer
        _sentence(4, "the bank", 1, "bank", "NOUN", (RIVER,)),             # not predicted
    ))  # fmt: skip
    predictions = {"d.s0.t0": _prediction(RIVER), "d.s1.t0": _prediction(RIVER),
                   "d.s2.t0": _prediction(None), "d.s3.t0": _prediction(None)}  # fmt: skip
    ids = set(predictions)
    gold = {s.instances[0].id: s.instances[0].keys for s in corpus}
    system = {i: p.key for i, p in predictions.items() if p.key}
    whole = dataset_result("d", ids, gold, system, {}, {}, {})
    result = Evaluation((whole,), predictions, ())

    table = lemma_error_table(corpus, result, "bank.NOUN", _WordNet())
    assert table.columns == ("sentence", "gold", "gold gloss", "predicted", "predicted gloss")
    assert table.rows == (
        ("a [bank] loan", MONEY, "a financial institution", RIVER, "sloping land"),
        ("[banks] fail", MONEY, "a financial institution", "-", ""),
    )
    assert "bank.NOUN" in table.caption
    assert lemma_error_table(corpus, result, "bank.VERB").rows == (
        ("they [bank] on it", "bank%2:31:00::", "", "-", ""),
    )
