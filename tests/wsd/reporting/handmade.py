"""A hand-made WSD evaluation with known answers, seen counts and candidates (no model).

Six instances over three lemmas, three in senseval2 and three in semeval2007 (the corpus is
``ALL``). WordNet's first senses are B1, P1, H1; SemCor's MFS answers B2, P1, H1.

====  ======  ====  =========  =====  ====  ==========
inst  lemma   gold  predicted  right  seen  candidates
====  ======  ====  =========  =====  ====  ==========
i0    bank    B1    B1         yes    20    3
i1    bank    B2    B1         no     0     3
i2    bank    B3    B3         yes    2     3
i3    play    P1    P2         no     5     2
i4    play    P2    P1         no     0     2
i5    helium  H1    H1         yes    1     1
====  ======  ====  =========  =====  ====  ==========
"""

from __future__ import annotations

from dataclasses import dataclass
from types import SimpleNamespace

from workbench.corpora.readers import Corpus, Instance, Sentence
from workbench.wsd.evaluate import CorpusEvaluation, Evaluation, dataset_result
from workbench.wsd.predict import Prediction
from workbench.wsd.reporting.document import SystemFacts

B1, B2, B3 = "bank%1:17:01::", "bank%1:14:00::", "bank%1:04:00::"
P1, P2 = "play%2:33:00::", "play%2:41:00::"
H1 = "helium%1:27:00::"
GLOSSES = {B1: "sloping land", B2: "a financial institution", B3: "a flight maneuver",
           P1: "participate in games", P2: "play on an instrument", H1: "a light gas"}  # fmt: skip
SEEN = {B1: 20, B2: 0, B3: 2, P1: 5, P2: 0, H1: 1}
CANDIDATES = {("bank", "NOUN"): (B1, B2, B3), ("play", "VERB"): (P1, P2), ("helium", "NOUN"): (H1,)}
#: instance: (dataset, lemma, pos, gold, predicted, score, runner-up score, words, position)
ROWS = (
    ("senseval2", "bank", "NOUN", B1, B1, 0.9, 0.2, "the river bank", 2),
    ("senseval2", "bank", "NOUN", B2, B1, 0.5, 0.4, "a bank loan", 1),
    ("senseval2", "bank", "NOUN", B3, B3, 0.7, 0.6, "the plane did a bank", 4),
    ("semeval2007", "play", "VERB", P1, P2, 0.6, 0.3, "kids play football", 1),
    ("semeval2007", "play", "VERB", P2, P1, 0.55, 0.5, "they play violin", 1),
    ("semeval2007", "helium", "NOUN", H1, H1, 0.8, float("nan"), "helium rises", 0),
)


class StandInWordNet:
    """What the report asks of WordNet, for the six instances."""

    def candidates(self, lemma, pos):
        return CANDIDATES.get((lemma, pos), ())

    def first_sense(self, lemma, pos):
        found = self.candidates(lemma, pos)
        return found[0] if found else None

    def has_key(self, key):
        return key in GLOSSES

    def synset(self, key):
        return key

    def gloss(self, synset):
        return GLOSSES[synset]


class StandInIndex:
    def count_of(self, key):
        return SEEN.get(key, 0)


@dataclass(frozen=True)
class HandMade:
    run: CorpusEvaluation
    corpus: Corpus
    wordnet: StandInWordNet
    facts: SystemFacts


def hand_made(rows=ROWS, predicted: dict[int, str] | None = None, name: str = "ALL") -> HandMade:
    """The evaluation of ``rows`` (``predicted``: instance number -> another answer) as the
    corpus ``name`` (the framework's sets among the rows' are scored apart)."""
    sentences, preds, ids = [], {}, []
    for n, (dataset, lemma, pos, gold, pred, score, runner, words, at) in enumerate(rows):
        pred = (predicted or {}).get(n, pred)
        iid = f"{dataset}.d000.s{n:03d}.t000"
        w = tuple(words.split())
        inst = Instance(iid, at, lemma, pos, (gold,))
        sentences.append(Sentence(iid.rsplit(".", 1)[0], w, w, ("X",) * len(w), (inst,)))
        runner_key = None if runner != runner else "x"
        preds[iid] = Prediction(
            pred, score, runner_key, runner, "gloss", len(CANDIDATES[(lemma, pos)])
        )
        ids.append(iid)
    corpus = Corpus(name, tuple(sentences))
    gold = {i: (r[3],) for i, r in zip(ids, rows)}
    system = {i: p.key for i, p in preds.items()}
    pos_of = {i: r[2] for i, r in zip(ids, rows)}
    sources = {i: "gloss" for i in ids}
    wordnet = StandInWordNet()
    baselines = {
        "wordnet_first_sense": {i: wordnet.first_sense(r[1], r[2]) for i, r in zip(ids, rows)},
        "semcor_mfs": {i: {"bank": B2, "play": P1, "helium": H1}[r[1]] for i, r in zip(ids, rows)},
    }
    sets = [d for d in dict.fromkeys(r[0] for r in rows) if d in ("senseval2", "semeval2007")]
    parts = [(d, {i for i, r in zip(ids, rows) if r[0] == d}) for d in sets]
    parts.append((name, set(ids)))
    results = tuple(
        dataset_result(name, members, gold, system, sources, pos_of, baselines)
        for name, members in parts
    )
    evaluation = Evaluation(results, preds, (), {}, baselines)
    instances = SimpleNamespace(
        ids=tuple(ids), lemmas=tuple(r[1] for r in rows), pos=tuple(r[2] for r in rows),
        keys=tuple((r[3],) for r in rows),
    )  # fmt: skip
    run = CorpusEvaluation(instances, StandInIndex(), evaluation, {})  # type: ignore[arg-type]
    facts = SystemFacts("biencoder", "a test system", "tiny-model", "hand-made", 28, True)
    return HandMade(run, corpus, wordnet, facts)
