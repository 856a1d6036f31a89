"""What a trained WSD bi-encoder scores against nearest-centroid systems on the same data.

Run:  python -m bench run wsd_biencoder runs/wsd [--test ALL]
          [--weights 0.2,0.3,0.4,0.5,0.6,0.7,0.8] [--json docs/bench_runs/wsd_biencoder.json]

The model directory is one written by ``workbench finetune wsd`` (its training card names the
training data: the built-in SemCor split with its seed and size, or files). A run that continued
another WSD run (``--model runs/...``) is measured against the whole chain: its training data is
every run's sentences (each sentence once) and its base model is the first run's. Every system is
scored with the framework's rules on ``--test`` (per dataset of ALL and per POS), with WordNet's
first sense as the back-off when no candidate has a row, and on the *zero-shot* instances (none
of whose gold senses occurs in the training data):

* ``bi-encoder``: the model as it answers (:class:`workbench.wsd.biencoder.BiEncoder`: its
  context encoder against its gloss vectors);
* ``bi-encoder untrained``: the same architecture before training (the base model as context
  and gloss encoder, the same gloss text and pooling), for the same senses;
* ``centroids base`` / ``centroids tuned``: plain nearest-centroid WSD (last layer, no
  propagation, no glosses) trained on the same training sentences, with the base model and with
  the tuned context encoder;
* ``centroids tuned + glosses w``: the tuned encoder's centroids concatenated with the trained
  gloss vectors at weight ``w`` (:class:`~workbench.wsd.config.SenseIndexConfig` ``gloss=concat``,
  ``gloss_pooling=trained``: ``workbench wsd eval --model DIR --system plain --gloss concat
  --gloss-pooling trained --gloss-weight w``; senses without a centroid keep their gloss vector);
  ``w`` chosen on SemEval-2007;
* ``centroids tuned + lexname + glosses w``: the same with LMMS propagation (lexname) to the senses
  without a centroid (``--system best --gloss-pooling trained --gloss-weight w``);
* ``centroids tuned + examples + lexname + glosses w``: the same with the centroids trained on the
  training sentences followed by WordNet's usage examples (``--train semcor+examples``), so a
  sense the training data lacks has a centroid from its examples where it has some. Its
  zero-shot instances are the same as every other row's (gold senses absent from the training
  sentences).

Quality only: timings of training are in the training card (``throughput``).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np
import torch

from bench.lib.record import write_json
from workbench.corpora.datasets import load_dataset
from workbench.corpora.readers import Corpus, Sentence
from workbench.corpora.wordnet_examples import with_examples
from workbench.encoding.encoder import Encoder
from workbench.fileio import sha256_json
from workbench.finetune.data.readers import read_wsd
from workbench.finetune.data.splits import wsd_splits
from workbench.finetune.tasks.wsd.evaluation import corpus_of, evaluate_wsd_model
from workbench.finetune.tasks.wsd.glosses import GlossTable
from workbench.finetune.tasks.wsd.model import BiEncoderModel
from workbench.lexicon.wordnet import load_wordnet
from workbench.wsd.biencoder import (
    CONTEXT_LAYERS,
    CONTEXT_POOLING,
    BiEncoder,
    bi_encoder_head,
    finished_card,
    gloss_sense_index,
)
from workbench.wsd.config import EncoderInfo, SenseIndexConfig, TrainingInfo
from workbench.wsd.disambiguate import instance_lemmas
from workbench.wsd.predict import encode_instances, train_index
from workbench.wsd.sources import gloss_vectors, sense_graph


def training_corpus(card: dict) -> Corpus:
    """The training sentences of the run described by ``card``."""
    builtin = card.get("builtin")
    if builtin and builtin.get("name") == "semcor":
        n = builtin["sizes"]["train"]
        return corpus_of(wsd_splits(seed=builtin["seed"], limits=(n, None, None)).train)
    return corpus_of(read_wsd(card["data"]["train"]["source"]))


def lineage(model: Path) -> list[dict]:
    """The training cards of ``model`` and of the WSD runs it continued, newest first (a run
    whose base model is a trained bi-encoder's directory went on from that run)."""
    cards = [finished_card(model)]
    while bi_encoder_head(cards[-1]["base_location"]) is not None:
        cards.append(finished_card(Path(cards[-1]["base_location"])))
    return cards


def chain_corpus(cards: list[dict]) -> Corpus:
    """Every sentence the runs of ``cards`` trained on, each once (by sentence id)."""
    corpora = [training_corpus(card) for card in reversed(cards)]
    if len(corpora) == 1:
        return corpora[0]
    seen: dict[str, Sentence] = {}
    for corpus in corpora:
        seen.update((s.id, s) for s in corpus.sentences if s.id not in seen)
    name = " + ".join(c.name for c in corpora)
    digest = sha256_json([c.sha256 for c in corpora])
    return Corpus(name, tuple(seen.values()), sha256=digest)


def say(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def summary(report: dict) -> dict:
    datasets = {n: round(100 * d["f1"], 1) for n, d in report["datasets"].items()}
    zero = report.get("zero_shot", {})
    return {"f1": datasets, "zero_shot": round(100 * zero.get("f1", float("nan")), 1)}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("model", type=Path, help="a model directory of `workbench finetune wsd`")
    ap.add_argument("--test", default="ALL")
    ap.add_argument(
        "--weights", default="0.2,0.3,0.4,0.5,0.6,0.7,0.8", help="gloss weights tried on SE07"
    )
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--json", type=Path, default=None)
    args = ap.parse_args()
    t0 = time.perf_counter()
    cards = lineage(args.model)
    card = cards[0]
    head = json.loads((args.model / "head.json").read_text())
    base_name = cards[-1]["base_location"]
    train = chain_corpus(cards)
    test = load_dataset(args.test)
    dev = load_dataset("semeval2007")
    say(f"training data: {train.name}, {train.n_instances} instances")
    tuned = Encoder(model=str(args.model), device=args.device, pooling=CONTEXT_POOLING)
    base = Encoder(model=base_name, device=args.device, pooling=CONTEXT_POOLING)
    systems: dict[str, dict] = {}
    seconds: dict[str, float] = {}

    def run(name: str, enc: Encoder, index, test_set, instances) -> dict:
        t = time.perf_counter()
        report = evaluate_wsd_model(enc, index, test_set, train, instances)
        seconds[name] = time.perf_counter() - t
        say(f"{name}: {summary(report)}")
        return report

    wordnet = load_wordnet()
    bi = BiEncoder(args.model, device=args.device)
    tuned_test = encode_instances(tuned, test, cache=False)
    base_test = encode_instances(base, test, cache=False)
    own = bi.index(instance_lemmas(tuned_test, wordnet), wordnet)
    systems["bi-encoder"] = run("bi-encoder", tuned, own, test, tuned_test)

    # the same architecture before training, for the same senses
    graph = sense_graph(wordnet)
    keys = list(own.keys_)
    synset_of = [wordnet.synset(k) for k in keys]
    synsets = sorted(set(synset_of))
    untrained = BiEncoderModel(base.model, base.model, head["gloss_pooling"]).eval()
    table = GlossTable(base.tokenizer, wordnet, head["gloss_text"], head["gloss_max_length"])
    t = time.perf_counter()
    rows = table.rows_of(synsets)
    order = table.by_length(rows)
    ids, mask = table.batch(order, base.tokenizer.pad_token_id or 0)
    with torch.inference_mode():
        encoded = untrained.encode_glosses(torch.from_numpy(ids), torch.from_numpy(mask)).numpy()
    by_row = dict(zip(order, encoded, strict=True))
    seconds["embed untrained glosses"] = time.perf_counter() - t
    row_of = dict(zip(synsets, rows, strict=True))
    key_vectors = np.stack([by_row[row_of[s]] for s in synset_of])
    info = TrainingInfo(corpus="untrained bi-encoder gloss vectors")
    before = gloss_sense_index(keys, key_vectors, EncoderInfo.of(base), info)
    systems["bi-encoder untrained"] = run("bi-encoder untrained", base, before, test, base_test)

    plain = SenseIndexConfig(layers=CONTEXT_LAYERS)
    for label, enc, tested in (("base", base, base_test), ("tuned", tuned, tuned_test)):
        training = encode_instances(enc, train, cache=False)
        index = train_index(training, plain, EncoderInfo.of(enc))
        systems[f"centroids {label}"] = run(f"centroids {label}", enc, index, test, tested)
        if label != "tuned":
            continue
        dev_set = encode_instances(enc, dev, cache=False)
        trained_glosses = gloss_vectors(enc, load_wordnet(), CONTEXT_LAYERS, pooling="trained")
        with_wordnet = encode_instances(enc, with_examples(train), cache=False)
        variants = (
            ("none", "", training),
            ("lexname", " + lexname", training),
            ("lexname", " + examples + lexname", with_wordnet),
        )
        for propagate, suffix, centroids in variants:
            best_w, best_f1, best_index = None, -1.0, None
            for w in (float(x) for x in args.weights.split(",")):
                config = SenseIndexConfig(
                    layers=CONTEXT_LAYERS,
                    propagate=propagate,
                    gloss="concat",
                    gloss_weight=w,
                    gloss_pooling="trained",
                )
                combined = train_index(centroids, config, EncoderInfo.of(enc),
                                       graph=graph if propagate != "none" else None,
                                       gloss=trained_glosses)  # fmt: skip
                on_dev = evaluate_wsd_model(enc, combined, dev, train, dev_set)["datasets"]
                f1 = on_dev["semeval2007"]["f1"]
                say(f"  {suffix or 'no propagation'}, gloss weight {w}: SE07 F1 {100 * f1:.1f}")
                if f1 > best_f1:
                    best_w, best_f1, best_index = w, f1, combined
            name = f"centroids tuned{suffix} + glosses {best_w:g}"
            systems[name] = run(name, enc, best_index, test, tested)
    out = {
        "model": str(args.model),
        "base": base_name,
        "continues": [c["base_location"] for c in cards[:-1]],
        "training": {"name": train.name, "sentences": len(train), "instances": train.n_instances},
        "test": test.name,
        "training_card": {
            k: card.get(k)
            for k in ("options", "throughput", "train_seconds", "device", "best_metric")
        },  # fmt: skip
        "systems": {name: summary(r) for name, r in systems.items()},
        "reports": systems,
        "seconds": {**seconds, "total": time.perf_counter() - t0},
    }
    print(json.dumps(out["systems"], indent=1))
    write_json(args.json, out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
