"""What a trained WSD bi-encoder scores.

:func:`evaluate_wsd_model` scores an encoder and a sense index through the WSD machinery
(:func:`workbench.wsd.evaluate.evaluate`: the framework's scoring, per dataset of ``ALL`` and per
POS, next to WordNet's first sense and the training data's most frequent sense) and adds the
*zero-shot* view: the test instances none of whose gold senses occurs in the training data,
where a system can only answer from what it knows of the sense (its gloss), not from examples.
A training run scores its test data this way at its end
(:func:`workbench.finetune.tasks.wsd.finish.finish_wsd_model`).

Example::

    bi = BiEncoder("runs/wsd")
    report = evaluate_wsd_model(bi.encoder, bi.index(lemmas_of_all), load_dataset("ALL"), semcor)
    report["datasets"]["ALL"]["f1"], report["zero_shot"]["f1"]
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from workbench.corpora.readers import Corpus
from workbench.encoding.encoder import Encoder
from workbench.finetune.data.readers import DataFile
from workbench.lexicon.wordnet import load_wordnet
from workbench.wsd.evaluate import DatasetResult, Evaluation, baseline_answers, evaluate
from workbench.wsd.index import SenseIndex
from workbench.wsd.predict import InstanceSet, answers, encode_instances
from workbench.wsd.scoring import Score, score


def corpus_of(data: DataFile) -> Corpus:
    """The sentences of WSD task data as a :class:`Corpus` (named after its source)."""
    return Corpus(Path(data.source).name, tuple(data.examples), sha256=data.sha256)


def training_keys(corpus: Corpus) -> set[str]:
    """Every gold sense key of a corpus."""
    return {key for _, inst in corpus.instances() for key in inst.keys}


def zero_shot_ids(test: Corpus, seen: set[str]) -> set[str]:
    """Ids of the test instances none of whose gold keys is in ``seen`` (the training keys)."""
    return {i.id for _, i in test.instances() if i.keys and not set(i.keys) & seen}


def subset_score(
    gold: Mapping[str, Sequence[str]], system: Mapping[str, str], ids: set[str]
) -> Score:
    """The official score restricted to the instances ``ids``."""
    return score(
        {i: k for i, k in gold.items() if i in ids}, {i: k for i, k in system.items() if i in ids}
    )


def _dataset(d: DatasetResult) -> dict[str, Any]:
    return {
        "n": d.n_instances,
        "f1": d.system.f1,
        "by_pos": {p: s.f1 for p, s in d.by_pos.items()},
        "n_by_pos": {p: s.total for p, s in d.by_pos.items()},
        "baselines": {b: s.f1 for b, s in d.baselines.items()},
    }


def zero_shot(
    result: Evaluation,
    test: Corpus,
    seen: set[str],
    baselines: Mapping[str, Mapping[str, str]],
) -> dict[str, Any]:
    """F1 of the system and the baselines on the zero-shot instances of ``test``."""
    ids = zero_shot_ids(test, seen)
    gold = test.gold()
    system = answers(list(result.predictions), list(result.predictions.values()))
    return {
        "n": len(ids),
        "f1": subset_score(gold, system, ids).f1,
        "baselines": {b: subset_score(gold, a, ids).f1 for b, a in baselines.items()},
    }


def evaluate_wsd_model(
    encoder: Encoder,
    index: SenseIndex,
    test: Corpus,
    training: Corpus | None = None,
    instances: InstanceSet | None = None,
    seen_before: Iterable[str] = (),
) -> dict[str, Any]:
    """Score ``index`` with ``encoder``'s vectors on ``test`` (see the module docstring);
    ``instances``: ``test`` already encoded by ``encoder`` (else it is encoded here);
    ``seen_before``: sense keys an earlier training run saw (a run continued from it): they
    are not zero-shot either.

    Returns:
        ``{"datasets": {name: {n, f1, by_pos, n_by_pos, baselines}}, "zero_shot": {n, f1,
        baselines}, "seconds": ...}`` (``zero_shot`` only with ``training``); F1 as fractions.
    """
    t0 = time.perf_counter()
    wordnet = load_wordnet()
    if instances is None:
        instances = encode_instances(encoder, test, cache=False)
    bases = baseline_answers(test, training, wordnet)
    result = evaluate(index, instances, bases, backoff=wordnet.first_sense)
    out: dict[str, Any] = {"datasets": {d.name: _dataset(d) for d in result.datasets}}
    if training is not None:
        seen = training_keys(training) | set(seen_before)
        out["zero_shot"] = zero_shot(result, test, seen, bases)
    out["seconds"] = time.perf_counter() - t0
    return out
