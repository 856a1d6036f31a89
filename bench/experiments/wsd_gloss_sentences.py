"""Do gloss sentences help a trained bi-encoder's centroids beyond WordNet's usage examples?

Run:  python -m bench run wsd_gloss_sentences runs/wsd-glosses-50k [--weights 0.3,0.4,0.5,0.6,0.7]
                                          [--json docs/bench_runs/wsd_gloss_sentences_50k.json]

Three training corpora for the tuned context encoder's centroids, each with lexname propagation
and the model's trained gloss vectors concatenated at weight ``w`` (the ``--system best
--gloss-pooling trained --gloss-weight w`` index of ``workbench wsd eval``), ``w`` chosen on
SemEval-2007:

* ``semcor+examples``: SemCor followed by WordNet's usage examples (``--train semcor+examples``);
* ``semcor+examples+glosses``: the same followed by one LMMS-style gloss sentence per sense key
  of the test set's lemmas (``"<lemma> : <definition>"``, the lemma tagged,
  :class:`~workbench.corpora.wordnet_examples.ExampleConfig` ``glosses="all"``), so every
  candidate sense of every test instance has a centroid of its own and none is propagated.
  Restricting the gloss sentences to the test lemmas' senses gives the same answers as all of
  WordNet's 206,941 would (1-NN among a lemma's candidates, no correction fitted on the
  training vectors, and propagation only reaches senses without a centroid) at a twentieth of
  the encoding;
* ``semcor+examples+unseen glosses``: the same gloss sentences for only the senses with neither a
  SemCor occurrence nor a usage example: they replace lexname propagation as the source of those
  senses' centroids and leave every other centroid as it was.

Reported per dataset of ALL, and on two zero-shot views: the test instances none of whose gold
senses occurs in SemCor, and those whose gold senses occur in neither SemCor nor the examples
(the instances gloss sentences can newly reach). Quality only; the seconds are recorded.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from bench.lib.machine import machine_facts
from bench.lib.record import write_json
from workbench.corpora.datasets import load_dataset
from workbench.corpora.readers import Corpus
from workbench.corpora.wordnet_examples import (
    ExampleConfig,
    example_corpus,
    iter_examples,
    with_examples,
)
from workbench.encoding.encoder import Encoder
from workbench.fileio import sha256_json
from workbench.finetune.tasks.wsd.evaluation import evaluate_wsd_model, training_keys
from workbench.lexicon.wordnet import load_wordnet
from workbench.wsd.biencoder import CONTEXT_LAYERS, CONTEXT_POOLING
from workbench.wsd.config import EncoderInfo, SenseIndexConfig
from workbench.wsd.predict import encode_instances, train_index
from workbench.wsd.sources import gloss_vectors, sense_graph

DEV = "semeval2007"


def say(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def gloss_sentences_of(test: Corpus) -> Corpus:
    """One gloss sentence per sense key of the lemmas (and POS) of ``test``'s instances."""
    wanted = {(inst.lemma, inst.pos) for _, inst in test.instances()}
    config = ExampleConfig(examples=False, glosses="all")
    sentences = tuple(
        s for s in iter_examples(config) if (s.instances[0].lemma, s.instances[0].pos) in wanted
    )
    return Corpus("glosses", sentences, (), sha256_json([repr(config), test.sha256]))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("model", type=Path, help="a model directory of `workbench finetune wsd`")
    ap.add_argument("--weights", default="0.3,0.4,0.5,0.6,0.7", help="gloss weights tried on SE07")
    ap.add_argument("--json", type=Path, default=None)
    args = ap.parse_args()
    t0 = time.perf_counter()
    wordnet = load_wordnet()
    test, dev, semcor = load_dataset("ALL"), load_dataset(DEV), load_dataset("semcor")
    examples = example_corpus()
    glosses = gloss_sentences_of(test)
    with_wordnet = with_examples(semcor, examples)
    seen = training_keys(with_wordnet)
    unseen = Corpus("unseen glosses", tuple(s for s in glosses.sentences
                                             if not set(s.instances[0].keys) & seen),
                    (), sha256_json([glosses.sha256, "unseen"]))  # fmt: skip
    corpora = {"semcor+examples": with_wordnet}
    for name, extra in (("glosses", glosses), ("unseen glosses", unseen)):
        corpora[f"semcor+examples+{name}"] = with_examples(
            semcor, Corpus(f"examples+{name}", examples.sentences + extra.sentences, (),
                           sha256_json([examples.sha256, extra.sha256])))  # fmt: skip
    say(
        f"{len(glosses)} gloss sentences for the senses of {test.name}'s lemmas, {len(unseen)} "
        "for those with neither a SemCor occurrence nor a usage example"
    )
    enc = Encoder(model=str(args.model), pooling=CONTEXT_POOLING)
    info = EncoderInfo.of(enc)
    graph = sense_graph(wordnet)
    trained = gloss_vectors(enc, wordnet, CONTEXT_LAYERS, pooling="trained")
    tested = encode_instances(enc, test)
    dev_set = encode_instances(enc, dev)
    rows: dict[str, dict] = {}
    seconds: dict[str, float] = {}
    for name, corpus in corpora.items():
        t = time.perf_counter()
        training = encode_instances(enc, corpus)
        seconds[f"encode {name}"] = time.perf_counter() - t
        cells = []
        for w in (float(x) for x in args.weights.split(",")):
            config = SenseIndexConfig(layers=CONTEXT_LAYERS, propagate="lexname", gloss="concat",
                                      gloss_weight=w, gloss_pooling="trained")  # fmt: skip
            index = train_index(training, config, info, graph=graph, gloss=trained)
            on_dev = evaluate_wsd_model(enc, index, dev, semcor, dev_set)["datasets"][DEV]["f1"]
            report = evaluate_wsd_model(enc, index, test, semcor, tested)
            beyond = evaluate_wsd_model(enc, index, test, with_wordnet, tested)["zero_shot"]
            cell = {
                "gloss_weight": w,
                "f1": {n: round(100 * d["f1"], 2) for n, d in report["datasets"].items()},
                "dev_f1": round(100 * on_dev, 2),
                "zero_shot_semcor": {"n": report["zero_shot"]["n"],
                                     "f1": round(100 * report["zero_shot"]["f1"], 2)},
                "zero_shot_semcor_examples": {"n": beyond["n"], "f1": round(100 * beyond["f1"], 2)},
            }  # fmt: skip
            cells.append(cell)
            say(f"{name} w={w:g}: {DEV} {cell['dev_f1']:.1f}, ALL {cell['f1']['ALL']:.1f}, "
                f"zero-shot {cell['zero_shot_semcor']['f1']:.1f} / "
                f"{cell['zero_shot_semcor_examples']['f1']:.1f}")  # fmt: skip
        chosen = max(cells, key=lambda c: c["dev_f1"])  # the first on a tie
        rows[name] = {"sentences": len(corpus), "instances": corpus.n_instances,
                      "dev_choice": chosen, "cells": cells}  # fmt: skip
    summary = {
        name: (row["dev_choice"]["gloss_weight"], row["dev_choice"]["dev_f1"],
               row["dev_choice"]["f1"]["ALL"])
        for name, row in rows.items()
    }  # fmt: skip
    print(summary)
    out = {
        "model": str(args.model),
        "gloss_sentences": {"all": len(glosses), "unseen": len(unseen)},
        "rows": rows,
        "machine": machine_facts(),
        "seconds": {**seconds, "total": time.perf_counter() - t0},
    }
    write_json(args.json, out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
