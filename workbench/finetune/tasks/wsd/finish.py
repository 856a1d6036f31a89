"""The end of a WSD bi-encoder's training run, and the gloss cache and POS probe of a trained
one.

:func:`finish_wsd_model` runs once after training, in the main process, on the model directory
just written: it saves how often each sense occurred in training (with an earlier run's counts
when the run continued a trained bi-encoder), loads the directory as a
:class:`~workbench.wsd.biencoder.BiEncoder` (the path every later answer takes), scores the test
data through it (:func:`~workbench.finetune.tasks.wsd.evaluation.evaluate_wsd_model`; the
glosses of the test lemmas' candidates encoded and cached), fits its POS probe
(:func:`fit_pos_probe`; again, on a trained directory: :func:`refit_pos_probe`), with
``wsd_index="wordnet"`` encodes every WordNet gloss into the gloss cache too, and reports
training throughput; the result goes into the training card. A run that continued a trained
bi-encoder names both runs' data, sums their sense counts, and counts as zero-shot only the
instances whose senses neither run saw (the ``semcor_mfs`` baseline stays this run's data's).

Example::

    card.update(finish_wsd_model(Path("runs/wsd"), cfg, WsdOptions(), card, (train, dev, test)))
    cache_all_glosses("runs/wsd")          # every WordNet gloss into its gloss cache
"""

from __future__ import annotations

import time
import warnings
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import torch

from workbench.corpora.datasets import load_dataset
from workbench.corpora.readers import Corpus
from workbench.errors import DataError, InputError
from workbench.finetune.data.readers import DataFile
from workbench.finetune.tasks.wsd.evaluation import corpus_of, evaluate_wsd_model
from workbench.finetune.tasks.wsd.options import WsdOptions
from workbench.finetune.training.config import TrainConfig
from workbench.lexicon.wordnet import load_wordnet
from workbench.wsd.biencoder import (
    BiEncoder,
    bi_encoder_head,
    finished_card,
    read_sense_counts,
    write_sense_counts,
)
from workbench.wsd.disambiguate import instance_lemmas
from workbench.wsd.pos_probe import PROBE_FILE, PosProbe
from workbench.wsd.predict import InstanceSet, encode_instances


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


@dataclass(frozen=True)
class EarlierTraining:
    """What a trained bi-encoder that a run continued had been trained on: its data (as its
    card names it) and its sense counts."""

    data: str
    counts: dict[str, int]


def earlier_training(base: str | Path) -> EarlierTraining | None:
    """The training of ``base`` when it is a trained WSD bi-encoder's directory (a run from it
    continues that training), else None."""
    base = Path(base)
    if bi_encoder_head(base) is None:
        return None
    card = finished_card(base)
    data = card.get("data", {}).get("train", {}).get("source", "unrecorded data")
    if card.get("earlier_training"):
        data = f"{card['earlier_training']} then {data}"
    return EarlierTraining(str(data), read_sense_counts(base))


def finish_wsd_model(
    output: Path,
    cfg: TrainConfig,
    options: WsdOptions,
    card: Mapping[str, Any],
    data: tuple[DataFile, DataFile | None, DataFile | None],
) -> dict[str, Any]:
    """Finish a trained bi-encoder's directory and score the test data through it.

    Args:
        output: the model directory (its encoders and head already written).
        cfg: the run's options (``device``, ``seed``).
        options: the task's (``wsd_index``: also cache every WordNet gloss, or only the test
            lemmas' candidates).
        card: the training card so far (its epochs give the throughput).
        data: train, dev, test.

    Returns:
        Entries for the training card: ``earlier_training`` (a continued run), ``glosses``
        (what was encoded into the gloss cache), ``throughput`` and, with test data,
        ``wsd_eval`` (:func:`evaluate_wsd_model`) and ``test`` (F1 on the whole test data).
    """
    t0 = time.perf_counter()
    train, _, test = data
    earlier = earlier_training(card["base_location"]) if "base_location" in card else None
    train_corpus = corpus_of(train)
    counts = Counter(k for _, inst in train_corpus.instances() for k in inst.keys)
    if earlier is not None:  # a continued run: its index and zero-shot count both trainings
        counts.update(earlier.counts)
    write_sense_counts(output, counts)
    out: dict[str, Any] = {"throughput": throughput(card.get("epochs", []))}
    if earlier is not None:
        out["earlier_training"] = earlier.data
    device = "cuda" if cfg.device != "cpu" and torch.cuda.is_available() else "cpu"
    bi = BiEncoder(output, device=device, card={**card, **out})
    wordnet = load_wordnet()
    if options.wsd_index == "wordnet":
        bi.index(None, wordnet)  # every WordNet gloss into the gloss cache
    instances = None
    if test is not None:
        test_corpus = corpus_of(test)
        instances = encode_instances(bi.encoder, test_corpus, cache=False)
        index = bi.index(instance_lemmas(instances, wordnet), wordnet)
        report = evaluate_wsd_model(bi.encoder, index, test_corpus, train_corpus, instances, counts)
        if earlier is not None:
            report["earlier_training"] = earlier.data
        whole = list(report["datasets"].values())[-1]
        out["wsd_eval"] = report
        out["test"] = {"f1": whole["f1"], "n_instances": float(whole["n"])}
    try:  # the probe is an extra: a run's trained model is saved whatever becomes of it
        out["pos_probe"] = fit_pos_probe(bi, train_corpus, instances, cfg.seed)
    except (InputError, ValueError) as exc:
        out["pos_probe"] = skip_probe(bi, f"it could not be fitted ({exc})")
    if "skipped" in out["pos_probe"]:
        out["notes"] = [*card.get("notes", []), out["pos_probe"]["skipped"]]
    out["glosses"] = {
        "cached": len(bi.cache),
        "scope": options.wsd_index,
        "seconds": time.perf_counter() - t0,
    }
    return out


#: At most this many training sentences fit a bi-encoder's POS probe (seeded sample).
PROBE_SENTENCES = 6000


def fit_pos_probe(
    bi: BiEncoder, training: Corpus, test: InstanceSet | None = None, seed: int = 0
) -> dict[str, Any]:
    """Fit the POS probe of ``bi`` (:mod:`workbench.wsd.pos_probe`) on the sense-annotated
    words of at most :data:`PROBE_SENTENCES` sentences of ``training`` (a seeded sample), at the
    layer that predicts the POS of a held-out tenth of them best, save it in its directory and
    load it there; its accuracy on ``test`` (encoded by ``bi.encoder``).

    Training data whose sense-annotated words are all of one POS fits no probe: a warning
    says so and the entry says why (``skipped``); too few words to hold a tenth out fit the
    top layer on all of them.

    Returns:
        Entries for the training card: sentences and instances fitted on, the layer chosen and
        the held-out accuracy of each layer tried, the test accuracy; or ``skipped``.
    """
    sentences = [s for s in training.sentences if s.instances]
    rng = np.random.default_rng(seed)
    if len(sentences) > PROBE_SENTENCES:
        rows = rng.choice(len(sentences), PROBE_SENTENCES, replace=False)
        sentences = [sentences[i] for i in sorted(rows)]
    sample = Corpus(training.name, tuple(sentences), sha256=training.sha256)
    pos_seen = sorted({i.pos for s in sentences for i in s.instances})
    if len(pos_seen) < 2:  # nothing to tell apart: decided before anything is encoded
        what = f"all {pos_seen[0]}" if pos_seen else "none"
        return skip_probe(bi, f"its training data's sense-annotated words are {what}")
    fitted = encode_instances(bi.encoder, sample, cache=False)
    held = rng.random(len(fitted)) < 0.1
    pos = np.asarray(fitted.pos)
    if not held.any() or len(set(pos[~held].tolist())) < 2:
        held[:] = False  # too few words to hold a tenth out: the top layer, fitted on all
    tried: dict[str, float] = {}
    for layer in range(1, bi.encoder.n_hidden) if held.any() else ():  # above the embeddings
        x = fitted.vectors(str(layer))
        probe = PosProbe(str(layer)).fit(x[~held], pos[~held])
        tried[str(layer)] = float(np.mean(np.asarray(probe.predict(x[held])) == pos[held]))
    layers = max(tried, key=lambda k: tried[k]) if tried else str(bi.encoder.n_hidden - 1)
    probe = PosProbe(layers).fit(fitted.vectors(layers), fitted.pos)
    probe.save(bi.directory / PROBE_FILE)
    bi.pos_probe = probe
    out: dict[str, Any] = {"sentences": len(sentences), "instances": len(fitted),
                           "layers": layers, "held_out_accuracy": tried}  # fmt: skip
    if test is not None:
        predicted = probe.predict(test.vectors(layers))
        out["test_accuracy"] = float(np.mean([p == g for p, g in zip(predicted, test.pos)]))
    return out


def skip_probe(bi: BiEncoder, why: str) -> dict[str, Any]:
    """No POS probe for ``bi``: said as a warning, recorded for its training card (answers
    then weigh every POS a word has, as without a probe); the run's model is saved as usual."""
    note = f"no POS probe was fitted: {why} (answers without a POS consider every POS)"
    warnings.warn(note, RuntimeWarning, stacklevel=2)
    bi.pos_probe = None
    return {"skipped": note}


def cache_all_glosses(model_dir: str | Path, device: str | None = None) -> int:
    """Encode every WordNet gloss of the trained bi-encoder in ``model_dir`` into its gloss
    cache (what nearest-sense search over all of WordNet needs); returns the senses covered."""
    bi = BiEncoder(model_dir, device=device)
    return len(bi.index(None, progress=True))


def refit_pos_probe(model_dir: Path, device: str | None = None, seed: int = 0) -> dict[str, Any]:
    """Fit the POS probe of the trained bi-encoder in ``model_dir`` again, on SemCor
    (:func:`fit_pos_probe`), scored on ALL; returns its facts.

    Raises:
        DataError: the probe could not be fitted (its reason).
    """
    bi = BiEncoder(model_dir, device=device)
    test = encode_instances(bi.encoder, load_dataset("ALL"), cache=False)
    facts = fit_pos_probe(bi, load_dataset("semcor"), test, seed=seed)
    if "skipped" in facts:
        raise DataError(facts["skipped"])
    return facts
