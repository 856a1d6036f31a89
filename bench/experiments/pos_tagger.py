"""Accuracy of the plain-text POS tagger against SemCor's gold tags, for docs/results.md.

Run:  python -m bench run pos_tagger --sentences 5000 --json docs/bench_runs/pos_tagger_semcor.json

Tags the words of SemCor's sentences (the first ``--sentences``; 0 = all) with
:func:`workbench.corpora.tagging.tag_words` and compares them with the gold universal tags: the
accuracy over every word, over the content words (NOUN, VERB, ADJ, ADV: the four classes a
WSD bi-encoder's POS probe predicts), per gold tag, the commonest confusions, and the words
tagged per second.

With ``--probe-sentences N``: the other candidate, a POS probe
(:class:`workbench.wsd.pos_probe.PosProbe`) on the packaged encoder's vectors at
``--probe-layer``, fitted on the content words of SemCor's first two thirds of N sentences and
scored, beside the tagger, on the content words of the last third.
"""

from __future__ import annotations

import argparse
import collections
import time

import numpy as np

from bench.lib.machine import machine_facts
from bench.lib.record import write_json
from workbench import Encoder
from workbench.corpora.datasets import load_dataset
from workbench.corpora.tagging import TAGGER_VERSION, tag_words
from workbench.lexicon.wordnet import POS_TAGS, load_wordnet
from workbench.wsd.pos_probe import PosProbe


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sentences", type=int, default=5000, help="SemCor's first N (0 = all)")
    ap.add_argument("--probe-sentences", type=int, default=0, help="also fit and score a probe")
    ap.add_argument("--probe-layer", default="3", help="the probe's layer spec")
    ap.add_argument("--json", default=None, help="write the results here")
    args = ap.parse_args()
    corpus = load_dataset("semcor")
    sentences = corpus.sentences[: args.sentences] if args.sentences else corpus.sentences
    wordnet = load_wordnet()
    tag_words(["warm", "up"], wordnet)  # the morphology tables load once, outside the timing
    per_tag: dict[str, list[int]] = collections.defaultdict(lambda: [0, 0])
    confusions: collections.Counter[tuple[str, str]] = collections.Counter()
    start = time.perf_counter()
    for s in sentences:
        for gold, tag in zip(s.pos, tag_words(s.words, wordnet), strict=True):
            per_tag[gold][0] += gold == tag
            per_tag[gold][1] += 1
            if gold != tag:
                confusions[(gold, tag)] += 1
    seconds = time.perf_counter() - start
    n = sum(t[1] for t in per_tag.values())
    right = sum(t[0] for t in per_tag.values())
    content = [per_tag[p] for p in POS_TAGS]
    tags = {t: {"n": v[1], "accuracy": v[0] / v[1]} for t, v in sorted(per_tag.items())}
    common = [{"gold": g, "tagged": t, "n": k} for (g, t), k in confusions.most_common(15)]
    result = {
        "sentences": len(sentences), "words": n, "tagger_version": TAGGER_VERSION,
        "accuracy": right / n,
        "content_accuracy": sum(c[0] for c in content) / sum(c[1] for c in content),
        "per_gold_tag": tags, "confusions": common,
        "seconds": seconds, "words_per_s": n / seconds, "machine": machine_facts(),
    }  # fmt: skip
    print(
        f"{n:,} words of {len(sentences):,} sentences: accuracy {result['accuracy']:.4f}, "
        f"content words {result['content_accuracy']:.4f}, {n / seconds:,.0f} words/s"
    )
    for tag, v in result["per_gold_tag"].items():
        print(f"  {tag:5} {v['n']:7,}  {v['accuracy']:.3f}")
    if args.probe_sentences:
        result["probe"] = probe_against_tagger(
            corpus.sentences[: args.probe_sentences], args.probe_layer, wordnet
        )
        print("content words of the held-out third:", result["probe"])
    write_json(args.json, {"args": vars(args), **result})


def probe_against_tagger(sentences, layer: str, wordnet) -> dict:
    """A POS probe fitted on the first two thirds' content words, and the tagger, scored on
    the last third's content words."""
    enc = Encoder()
    start = time.perf_counter()
    emb = enc.encode([list(s.words) for s in sentences])
    encode_s = time.perf_counter() - start
    gold = np.array([p for s in sentences for p in s.pos])
    tagged = np.array([t for s in sentences for t in tag_words(s.words, wordnet)])
    part = np.concatenate([np.full(len(s.words), i) for i, s in enumerate(sentences)])
    content = np.isin(gold, POS_TAGS)
    train = content & (part < 2 * len(sentences) // 3)
    test = content & (part >= 2 * len(sentences) // 3)
    x = emb.select(layer)
    probe = PosProbe(layers=layer).fit(x[train], gold[train])
    predicted = np.array(probe.classes_)[probe.predict_proba(x[test]).argmax(1)]
    return {
        "layer": layer, "model": enc.name, "dtype": enc.dtype_name,
        "train_words": int(train.sum()), "test_words": int(test.sum()),
        "probe_accuracy": float((predicted == gold[test]).mean()),
        "tagger_accuracy": float((tagged[test] == gold[test]).mean()), "encode_s": encode_s,
    }  # fmt: skip


if __name__ == "__main__":
    main()
