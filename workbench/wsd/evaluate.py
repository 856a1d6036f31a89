"""Evaluation of a sense index on the framework's datasets: scores, baselines, layer sweep.

:func:`evaluate` scores one set of predictions the way the official scorer does, overall, per
dataset (the ``ALL`` ids carry their set's name), per POS and per prediction type, next to the
two baselines computed on the same instances (WordNet first sense, SemCor most frequent sense),
and collects the lemmas with most errors. :func:`evaluate_corpus` is the whole run on one test
corpus as the command line and the app start it with a system opened by
:func:`workbench.wsd.systems.open_system`: encode its instances, get the system's index for
their lemmas, compute the baselines, then :func:`evaluate`.
:func:`layer_sweep` fits one plain 1-NN index per layer spec and correction on cached
training vectors and scores each (array work only).

Example::

    result = evaluate(index, test, baselines={"wordnet_first_sense": wn1}, backoff=wn.first_sense)
    result.datasets[-1].system.f1
    run = evaluate_corpus(open_system("best"), load_corpus("semeval2007"), load_wordnet())
    run.evaluation.datasets[-1].system.f1, run.seconds
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from workbench.corpora.datasets import EVALUATION_SETS, load_dataset
from workbench.corpora.readers import Corpus, read_xml
from workbench.corpora.wordnet_examples import split_examples, with_examples
from workbench.encoding.pooling import LayerSpec
from workbench.encoding.rows import Progress
from workbench.errors import InputError
from workbench.lexicon.wordnet import WordNet
from workbench.wsd.baselines import SenseCounts, first_sense_predictions, mfs_predictions
from workbench.wsd.config import EncoderInfo, SenseIndexConfig
from workbench.wsd.disambiguate import instance_lemmas
from workbench.wsd.index import SenseIndex
from workbench.wsd.opened import OpenedSystem
from workbench.wsd.predict import (
    InstanceSet,
    Prediction,
    answers,
    encode_instances,
    predict,
    train_index,
)
from workbench.wsd.scoring import Score, dataset_groups, score, score_by_group

#: Names of the baselines, as they appear in reports and JSON.
BASELINES = ("wordnet_first_sense", "semcor_mfs")


@dataclass(frozen=True)
class DatasetResult:
    """Scores on one dataset.

    Attributes:
        name: the dataset (``senseval2`` ... ``ALL``, or a file stem).
        n_instances: gold instances.
        system: the index's score.
        baselines: baseline name -> score on the same instances.
        by_pos: universal POS -> system score; baselines_by_pos: baseline -> POS -> score.
        by_source: prediction type (centroid, propagated, gloss, backoff, none) -> system
            score on the instances answered that way; source_counts: their numbers.
    """

    name: str
    n_instances: int
    system: Score
    baselines: dict[str, Score]
    by_pos: dict[str, Score]
    baselines_by_pos: dict[str, dict[str, Score]]
    by_source: dict[str, Score]
    source_counts: dict[str, int]


@dataclass(frozen=True)
class LemmaErrors:
    """A lemma the system gets wrong often, and how."""

    lemma: str  # "lemma.POS"
    n_instances: int
    n_wrong: int
    confusions: tuple[tuple[str, str, int], ...]  # (gold key, predicted key, count), top first


@dataclass(frozen=True)
class Evaluation:
    """Everything :func:`evaluate` measured (``datasets`` ends with the whole test corpus);
    ``baseline_answers``: baseline name -> ``{instance id: key}``, as given to it (for the
    report's per-instance splits and paired tests)."""

    datasets: tuple[DatasetResult, ...]
    predictions: dict[str, Prediction]
    errors: tuple[LemmaErrors, ...]
    seconds: dict[str, float] = field(default_factory=dict)
    baseline_answers: dict[str, dict[str, str]] = field(default_factory=dict)


def _subset(keys: Mapping[str, object], ids: set[str]) -> dict:
    return {i: v for i, v in keys.items() if i in ids}


def dataset_result(
    name: str,
    ids: set[str],
    gold: Mapping[str, Sequence[str]],
    system: Mapping[str, str],
    source_of: Mapping[str, str],
    pos_of: Mapping[str, str],
    baselines: Mapping[str, Mapping[str, str]],
) -> DatasetResult:
    """Scores of one dataset (the instances ``ids``) for the system and each baseline."""
    gold = _subset(gold, ids)
    system = _subset(system, ids)
    pos = _subset(pos_of, ids)
    sources = _subset(source_of, ids)
    base = {b: _subset(answers_, ids) for b, answers_ in baselines.items()}
    return DatasetResult(
        name=name,
        n_instances=len(gold),
        system=score(gold, system),
        baselines={b: score(gold, a) for b, a in base.items()},
        by_pos=score_by_group(gold, system, pos),
        baselines_by_pos={b: score_by_group(gold, a, pos) for b, a in base.items()},
        by_source=score_by_group(gold, system, sources),
        source_counts=dict(Counter(sources[i] for i in gold if i in sources)),
    )


def lemma_errors(
    test: InstanceSet, predictions: Sequence[Prediction], top: int = 20, n_confusions: int = 3
) -> tuple[LemmaErrors, ...]:
    """The ``top`` lemmas with most wrong answers, each with its commonest confusions."""
    total: Counter = Counter()
    wrong: Counter = Counter()
    confusions: dict[str, Counter] = {}
    for lemma, pos, keys, pred in zip(test.lemmas, test.pos, test.keys, predictions):
        if not keys:
            continue
        name = f"{lemma}.{pos}"
        total[name] += 1
        if pred.key not in keys:
            wrong[name] += 1
            confusions.setdefault(name, Counter())[(keys[0], pred.key or "(none)")] += 1
    ranked = sorted(wrong, key=lambda n: (-wrong[n], -total[n], n))[:top]
    return tuple(
        LemmaErrors(
            n,
            total[n],
            wrong[n],
            tuple((g, p, c) for (g, p), c in confusions[n].most_common(n_confusions)),
        )  # fmt: skip
        for n in ranked
    )


def evaluate(
    index: SenseIndex,
    test: InstanceSet,
    baselines: Mapping[str, Mapping[str, str]] | None = None,
    backoff: Callable[[str, str], str | None] | None = None,
    split_datasets: bool = True,
    threads: int | None = 1,
) -> Evaluation:
    """Predict every instance of ``test`` and score it.

    Args:
        index: the sense index (its layer spec selects the test vectors).
        test: the encoded test instances with gold keys.
        baselines: baseline name -> ``{instance id: key}`` on the same instances.
        backoff: ``(lemma, pos) -> key`` when no candidate has a row (WordNet first sense).
        split_datasets: also score each dataset named in the ids (``ALL``: ``semeval2007.``...).
        threads: FAISS threads for the search.
    """
    index.check_encoder(EncoderInfo.of(test.embeddings), index.config.layers)
    t0 = time.perf_counter()
    vectors = test.vectors(index.config.layers)
    t1 = time.perf_counter()
    preds = predict(index, vectors, test.lemmas, test.pos, backoff=backoff, threads=threads)
    t2 = time.perf_counter()
    system = answers(test.ids, preds)
    sources = {i: p.source for i, p in zip(test.ids, preds)}
    gold, pos_of, baselines = test.gold(), test.pos_of(), dict(baselines or {})
    parts: list[tuple[str, set[str]]] = []
    if split_datasets:
        groups = dataset_groups(test.ids)
        names = list(dict.fromkeys(groups.values()))
        sets = set(EVALUATION_SETS) - {"ALL"}  # ALL: ids start with their dataset's name
        if set(names) <= sets:
            parts = [(n, {i for i, g in groups.items() if g == n}) for n in names]
    parts.append((test.corpus, set(test.ids)))
    results = tuple(
        dataset_result(name, ids, gold, system, sources, pos_of, baselines) for name, ids in parts
    )
    return Evaluation(
        datasets=results,
        predictions=dict(zip(test.ids, preds)),
        errors=lemma_errors(test, preds),
        seconds={"select_vectors": t1 - t0, "predict": t2 - t1, "score": time.perf_counter() - t2},
        baseline_answers={b: dict(a) for b, a in baselines.items()},
    )


@dataclass(frozen=True)
class SweepPoint:
    """One cell of the layer sweep."""

    layers: str
    label: str
    correction: str
    all: Score
    datasets: dict[str, Score]


def default_specs(n_hidden: int) -> tuple[str, ...]:
    """Every hidden state and the sum of the last four: ``("0", ..., "6", "last4-sum")``."""
    return (*(str(i) for i in range(n_hidden)), "last4-sum")


def sweep_configs(
    specs: Sequence[str], corrections: Sequence[str], n_hidden: int | None = None
) -> list[SenseIndexConfig]:
    """The index configs of a sweep, every layer spec x correction, each checked
    (:class:`~workbench.wsd.config.SenseIndexConfig`), and each spec's layers against a model
    of ``n_hidden`` hidden states where given: what :func:`layer_sweep` builds, known good
    before anything is encoded.

    Raises:
        InputError: a layer spec or a correction that is not one, or a layer the model does
            not have (named).
    """
    if not specs or not corrections:
        raise InputError("a sweep needs at least one layer spec and one correction")
    configs = [SenseIndexConfig(layers=s, correction=c) for s in specs for c in corrections]
    if n_hidden is not None:
        for spec in specs:
            LayerSpec.parse(spec).resolve(n_hidden)
    return configs


def layer_sweep(
    training: InstanceSet,
    test: InstanceSet,
    info: EncoderInfo,
    specs: Sequence[str],
    corrections: Sequence[str] = ("none", "zscore"),
    backoff: Callable[[str, str], str | None] | None = None,
    progress: Callable[[str], None] | None = None,
) -> list[SweepPoint]:
    """Plain 1-NN (no propagation, no glosses) for every layer spec x correction (``info``:
    the identity of the encoder of ``training`` and ``test``, ``EncoderInfo.of(encoder)``)."""
    points = []
    for config in sweep_configs(specs, corrections):
        spec, post = config.layers, config.correction
        result = evaluate(train_index(training, config, info), test, backoff=backoff)
        points.append(
            SweepPoint(
                spec,
                LayerSpec.parse(spec).label,
                post,
                result.datasets[-1].system,
                {d.name: d.system for d in result.datasets[:-1]},
            )  # fmt: skip
        )
        if progress is not None:
            progress(f"{spec:>10} {post:<7} F1 {100 * points[-1].all.f1:.1f}")
    return points


def load_corpus(name: str, gold: str | None = None) -> Corpus:
    """A framework dataset by name (``semcor``, ``ALL``, ...) or a ``*.data.xml`` path (with
    its gold key file, found beside it when not given); either with ``+examples`` appended:
    followed by WordNet's usage examples (``semcor+examples``,
    :func:`~workbench.corpora.wordnet_examples.with_examples`)."""
    base, examples = split_examples(name)
    if examples:
        return with_examples(load_corpus(base, gold))
    if name.endswith((".xml", ".xml.xz")) or Path(name).is_file():
        return read_xml(name, gold)
    return load_dataset(name)


def baseline_answers(
    test: Corpus, training: Corpus | SenseCounts | None = None, wordnet: WordNet | None = None
) -> dict[str, dict[str, str]]:
    """WordNet first sense (and, given a training corpus or its sense counts, its most frequent
    sense) on ``test``."""
    out = {"wordnet_first_sense": first_sense_predictions(test, wordnet)}
    if training is not None:
        out["semcor_mfs"] = mfs_predictions(test, training, wordnet)
    return out


@dataclass(frozen=True)
class Stage:
    """A stage of :func:`evaluate_corpus` that starts (``seconds`` None) or is done.

    Attributes:
        name: ``encode`` (the test instances), ``index`` (the WordNet-only index of their
            lemmas, only when no index is given) or ``predict`` (baselines, prediction and
            scoring), in this order.
        label: its key in :attr:`CorpusEvaluation.seconds` (``encode semeval2007``,
            ``wordnet index for semeval2007``, ``predict semeval2007``).
        seconds: None when it starts; once done, its entry in ``CorpusEvaluation.seconds``.
    """

    name: str
    label: str
    seconds: float | None = None


@dataclass(frozen=True)
class CorpusEvaluation:
    """What :func:`evaluate_corpus` computed on one test corpus.

    Attributes:
        instances: the encoded test instances.
        index: the index that answered (the one given, or the WordNet-only one built).
        evaluation: the scores (:func:`evaluate`).
        seconds: stage label -> seconds: ``encode X``, ``wordnet index for X`` (when built)
            and ``predict X`` (the nearest-sense search alone), for the test corpus ``X``.
        context: sentences of each instance's document read with it on each side (0: none).
    """

    instances: InstanceSet
    index: SenseIndex
    evaluation: Evaluation
    seconds: dict[str, float]
    context: int = 0


def evaluate_corpus(
    system: OpenedSystem,
    corpus: Corpus,
    wordnet: WordNet,
    training: Corpus | SenseCounts | None = None,
    *,
    baselines: bool = True,
    threads: int | None = 1,
    progress: Progress = None,
    on_stage: Callable[[Stage], None] | None = None,
    context: int = 0,
) -> CorpusEvaluation:
    """Evaluate a system on one test corpus, every stage included.

    Encodes the instances of ``corpus`` with the system's encoder (through the encoding
    cache); gets the system's index for the ``(lemma, POS)`` pairs the instances can be
    (:func:`workbench.wsd.disambiguate.instance_lemmas`: a bi-encoder's glosses or WordNet's are
    encoded when first needed, a SemCor system's index is built or loaded once); computes the
    baselines (:func:`baseline_answers`); predicts (back-off: WordNet's first sense) and scores
    (:func:`evaluate`).

    Args:
        system: the system (:func:`workbench.wsd.systems.open_system`).
        corpus: the test corpus, with gold keys.
        wordnet: WordNet (candidates, the first-sense back-off and baseline).
        training: the training corpus of the most-frequent-sense baseline, or its sense counts
            (:func:`workbench.wsd.builds.semcor_frequencies`; None: no MFS).
        baselines: compute the baselines (False: none are scored).
        threads: FAISS threads for the search.
        progress: passed to the encoding of the instances and of the index.
        on_stage: called with a :class:`Stage` as each stage starts and once it is done
            (no ``index`` stage when the system's index is in hand already).
        context: sentences of each instance's document read with it on each side
            (:func:`workbench.wsd.predict.instance_sequences`; 0: the sentence alone).
    """
    seconds: dict[str, float] = {}

    def stage(name: str, label: str, took: float | None = None) -> None:
        if took is not None:
            seconds[label] = took
        if on_stage is not None:
            on_stage(Stage(name, label, took))

    label = f"encode {corpus.name}"
    stage("encode", label)
    t0 = time.perf_counter()
    instances = encode_instances(system.encoder, corpus, progress, context=context)
    stage("encode", label, time.perf_counter() - t0)
    if system.ready:
        index = system.index()
    else:
        label = f"{system.index_kind} index for {corpus.name}"
        stage("index", label)
        t0 = time.perf_counter()
        index = system.index(instance_lemmas(instances, wordnet), progress)
        stage("index", label, time.perf_counter() - t0)
    label = f"predict {corpus.name}"
    stage("predict", label)
    answers_ = baseline_answers(corpus, training, wordnet) if baselines else {}
    result = evaluate(index, instances, answers_, backoff=wordnet.first_sense, threads=threads)
    stage("predict", label, result.seconds["predict"])
    return CorpusEvaluation(instances, index, result, seconds, context)
