"""What a trained WSD bi-encoder scores, and the end of its training run.

:func:`evaluate_wsd_model` scores an encoder and a sense index through the WSD machinery
(:func:`workbench.wsd.evaluate.evaluate`: the framework's scoring, per dataset of ``ALL`` and per
POS, next to WordNet's first sense and the training data's most frequent sense) and adds the
*zero-shot* view: the test instances none of whose gold senses occurs in the training data,
where a system can only answer from what it knows of the sense (its gloss), not from examples.

:func:`finish_wsd_model` runs once after training, in the main process: it embeds the glosses
into the model directory's sense index (:mod:`workbench.finetune.gloss_index`), scores the test
data through it, and reports training throughput; the result goes into the training card. A run
that continued a trained bi-encoder (its directory as the base model) goes on from that training:
its index names both runs' data, sums their sense counts and (``wsd_index="data"``) covers
the senses of both runs' indexes, and its zero-shot instances are
those whose senses neither run saw (the ``semcor_mfs`` baseline stays this run's data's).

Example::

    enc = Encoder(model="runs/wsd")
    report = evaluate_wsd_model(enc, model_index(enc), load_dataset("ALL"), semcor_subset)
    report["datasets"]["ALL"]["f1"], report["zero_shot"]["f1"]
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from workbench.corpora.readers import Corpus
from workbench.encoding.device import choose_device
from workbench.encoding.encoder import Encoder
from workbench.errors import ModelLoadError
from workbench.fileio import sha256_json
from workbench.finetune.config import TrainConfig
from workbench.finetune.data import DataFile
from workbench.finetune.gloss_index import CONTEXT_POOLING, embed_synsets, gloss_index
from workbench.finetune.glosses import GlossTable
from workbench.finetune.modeling import BiEncoderModel
from workbench.finetune.store import bi_encoder_head, load_finetuned
from workbench.lexicon.wordnet import load_wordnet
from workbench.wsd.config import TrainingInfo
from workbench.wsd.evaluate import DatasetResult, Evaluation, baseline_answers, evaluate
from workbench.wsd.index import SenseIndex
from workbench.wsd.predict import InstanceSet, answers, encode_instances
from workbench.wsd.scoring import Score, score
from workbench.wsd.sources import sense_graph
from workbench.wsd.store import (
    MODEL_INDEX,
    load_index_senses,
    model_index_path,
    save_model_index,
)


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


def throughput(epochs: Iterable[Mapping[str, Any]]) -> dict[str, float]:
    """Training speed over the epochs of a card: optimizer steps and tokens (context, gloss,
    both; padding excluded) per second of training, dev evaluation excluded."""
    history = list(epochs)
    seconds = sum(e["seconds"] - e.get("eval_seconds", 0.0) for e in history)
    steps = history[-1]["steps"] if history else 0  # counted from the run's start
    stats = Counter[str]()
    for e in history:
        stats.update(e.get("stats", {}))
    ctx, gloss = stats["context_tokens"], stats["gloss_tokens"]
    per = 1.0 / seconds if seconds > 0 else float("nan")
    return {
        "train_seconds": seconds,
        "steps_per_s": steps * per,
        "batches_per_s": stats["batches"] * per,
        "instances_per_s": stats["instances"] * per,
        "context_tokens_per_s": ctx * per,
        "gloss_tokens_per_s": gloss * per,
        "tokens_per_s": (ctx + gloss) * per,
    }


def bi_encoder_corpus(source: str, gloss_text: str) -> str:
    """How a trained bi-encoder's gloss index names its training (its ``TrainingInfo.corpus``,
    shown as "trained on ..." with every answer)."""
    return f"{source}, as a bi-encoder with {gloss_text} glosses"


@dataclass(frozen=True)
class EarlierTraining:
    """What a trained bi-encoder that a run continued had been trained on (its own gloss
    index's provenance): the data, without the gloss phrase; its sense counts; the senses its
    index covered."""

    data: str
    training: TrainingInfo
    counts: dict[str, int]
    keys: tuple[str, ...]


def earlier_training(base: str | Path) -> EarlierTraining | None:
    """The training of ``base`` when it is a trained WSD bi-encoder's directory with its gloss
    index (a run from it continues that training), else None."""
    head = bi_encoder_head(base)
    path = model_index_path(base) if head is not None else None
    if head is None or path is None:
        return None
    senses = load_index_senses(path)  # its vectors are not needed (318 MB over all of WordNet)
    suffix = bi_encoder_corpus("", head["gloss_text"])
    counts = {k: int(c) for k, c in zip(senses.keys, senses.counts, strict=True) if c}
    data = senses.training.corpus.removesuffix(suffix)
    return EarlierTraining(data, senses.training, counts, senses.keys)


def run_training(
    train: DataFile, n_instances: int, gloss_text: str, earlier: EarlierTraining | None
) -> TrainingInfo:
    """The provenance of a run's gloss index: its training data, after ``earlier``'s when the
    run continued a trained bi-encoder."""
    if earlier is None:
        return TrainingInfo(
            corpus=bi_encoder_corpus(train.source, gloss_text),
            sha256=train.sha256,
            n_sentences=len(train.examples),
            n_occurrences=n_instances,
        )
    return TrainingInfo(
        corpus=bi_encoder_corpus(f"{earlier.data} then {train.source}", gloss_text),
        sha256=sha256_json([earlier.training.sha256, train.sha256]),
        n_sentences=earlier.training.n_sentences + len(train.examples),
        n_occurrences=earlier.training.n_occurrences + n_instances,
    )


def finish_wsd_model(
    output: Path,
    model: BiEncoderModel,
    table: GlossTable,
    cfg: TrainConfig,
    card: Mapping[str, Any],
    data: tuple[DataFile, DataFile | None, DataFile | None],
    data_keys: Iterable[str] = (),
) -> dict[str, Any]:
    """Build and save the model directory's gloss index; score the test data through it.

    Args:
        output: the model directory (already written).
        model: the selected bi-encoder.
        table: the run's gloss table (its tokenizer and gloss text).
        cfg: the run's options (``wsd_index``: all WordNet senses, or ``data_keys``).
        card: the training card so far (its epochs give the throughput).
        data: train, dev, test.
        data_keys: the candidate keys of the run's data (for ``wsd_index="data"``).

    Returns:
        Entries for the training card: ``gloss_index``, ``throughput`` and, with test data,
        ``wsd_eval`` (:func:`evaluate_wsd_model`) and ``test`` (F1 on the whole test data).
    """
    t0 = time.perf_counter()
    train, _, test = data
    earlier = earlier_training(card["base_location"]) if "base_location" in card else None
    keys = None
    if cfg.wsd_index != "wordnet":
        keys = sorted(set(data_keys) | set(earlier.keys if earlier is not None else ()))
    train_corpus = corpus_of(train)
    counts = Counter(k for _, inst in train_corpus.instances() for k in inst.keys)
    if earlier is not None:  # a continued run: its index and zero-shot count both trainings
        counts.update(earlier.counts)
    training = run_training(train, train_corpus.n_instances, cfg.gloss_text, earlier)
    index, encoder, n_synsets = build_model_index(output, model, table, training, keys, counts)
    out: dict[str, Any] = {
        "gloss_index": {
            "path": MODEL_INDEX,
            "senses": len(index),
            "synsets": n_synsets,
            "scope": cfg.wsd_index,
            "seconds": time.perf_counter() - t0,
        },
        "throughput": throughput(card.get("epochs", [])),
    }
    if test is not None:
        seen = earlier.counts if earlier is not None else ()
        report = evaluate_wsd_model(encoder, index, corpus_of(test), train_corpus, None, seen)
        if earlier is not None:
            report["earlier_training"] = earlier.data
        whole = list(report["datasets"].values())[-1]
        out["wsd_eval"] = report
        out["test"] = {"f1": whole["f1"], "n_instances": float(whole["n"])}
    return out


def build_model_index(
    output: Path,
    model: BiEncoderModel,
    table: GlossTable,
    training: TrainingInfo,
    keys: Sequence[str] | None = None,
    counts: Mapping[str, int] | None = None,
) -> tuple[SenseIndex, Encoder, int]:
    """Embed the glosses of ``keys`` (None: every WordNet 3.0 sense) with ``model``'s gloss
    encoder into the model directory ``output``'s own index
    (:func:`workbench.wsd.store.save_model_index`).

    Returns:
        ``(index, the context encoder loaded from output, number of glosses embedded)``.
    """
    graph = sense_graph(table.wordnet)
    wanted = sorted(graph.keys) if keys is None else list(keys)
    synset_of = [graph.synsets[graph.key_synset[graph.key_row[k]]] for k in wanted]
    synsets = sorted(set(synset_of))
    vectors = embed_synsets(model, table, synsets)
    row = {s: i for i, s in enumerate(synsets)}
    key_vectors = vectors[np.array([row[s] for s in synset_of], dtype=np.int64)]
    device = str(next(model.parameters()).device)
    encoder = Encoder(model=str(output), device=device, pooling=CONTEXT_POOLING)
    index = gloss_index(encoder, wanted, key_vectors, training, dict(counts or {}))
    save_model_index(index, output)
    return index, encoder, len(synsets)


def rebuild_model_index(
    model_dir: str | Path, keys: Sequence[str] | None = None, device: str | None = None
) -> SenseIndex:
    """Rebuild a trained bi-encoder's own gloss index from its model directory, for every
    WordNet sense (``keys`` None; e.g. after a quick run with ``wsd_index="data"``) or for
    ``keys``; its training provenance is kept when there was an index before."""
    model_dir = Path(model_dir)
    model, tokenizer, head = load_finetuned(model_dir)
    if not isinstance(model, BiEncoderModel):
        raise ModelLoadError(f"{model_dir} holds a '{head['task']}' model, not a WSD bi-encoder")
    model.to(choose_device(device))
    table = GlossTable(tokenizer, load_wordnet(), head["gloss_text"], head["gloss_max_length"])
    previous = earlier_training(model_dir)
    training = TrainingInfo(corpus=bi_encoder_corpus("unrecorded data", head["gloss_text"]))
    counts: dict[str, int] = {}
    if previous is not None:
        training, counts = previous.training, previous.counts
    return build_model_index(model_dir, model, table, training, keys, counts)[0]
