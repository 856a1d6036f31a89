"""The bi-encoder's context tower reading the neighbouring sentences too (issue 50, lever 4).

Run:  python -m bench run wsd_context [DIR] [--window 1,2] [--json docs/bench_runs/wsd_context.json]

The framework's evaluation sets keep their documents' sentences in order (ids
``senseval2.d000.s001``), so each instance can be read with the ``W`` sentences before and after
its own, from the same document, in one sequence; the target word's vector is then taken where it
stands in that sequence. This is the test-time form of the lever: the model (DIR, default the
shipped bi-encoder) was trained on single sentences. Each window is scored beside window 0 (the
sentence alone, as ``wsd eval`` reads it) on ALL and its sets, by POS, and on the zero-shot
instances against SemCor, as ``bench run wsd_zero_shot`` counts them. A typed sentence has no
neighbours, so ``wsd disambiguate`` and the app are not changed by this script.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np

from bench.lib.machine import machine_facts
from bench.lib.record import write_json
from workbench.corpora.datasets import load_dataset
from workbench.corpora.readers import Corpus
from workbench.encoding.encoder import Encoder
from workbench.finetune.tasks.wsd.evaluation import evaluate_wsd_model
from workbench.wsd.biencoder import BiEncoder, shipped_biencoder
from workbench.wsd.predict import InstanceSet, encode_instances


def document_of(sentence_id: str) -> str:
    """``senseval2.d000`` of ``senseval2.d000.s001``."""
    return sentence_id.rsplit(".", 1)[0]


def with_context(encoder: Encoder, corpus: Corpus, window: int) -> InstanceSet:
    """``corpus``'s instances encoded with ``window`` sentences of their document on each side
    (the same instances, in the same order, as :func:`encode_instances` gives)."""
    if window == 0:
        return encode_instances(encoder, corpus, cache=False)
    sentences, keep, meta = [], [], []
    all_sentences = corpus.sentences
    for i, sentence in enumerate(all_sentences):
        if not sentence.instances:
            continue
        doc = document_of(sentence.id)
        before = [s for s in all_sentences[max(0, i - window) : i] if document_of(s.id) == doc]
        after = [s for s in all_sentences[i + 1 : i + 1 + window] if document_of(s.id) == doc]
        offset = sum(len(s.words) for s in before)
        words = [w for s in before for w in s.words] + list(sentence.words)
        words += [w for s in after for w in s.words]
        sentences.append(words)
        keep.append(sorted({offset + inst.index for inst in sentence.instances}))
        meta += [(len(sentences) - 1, offset + inst.index, inst) for inst in sentence.instances]
    emb = encoder.encode(sentences, keep=keep, progress=True)
    where = {(int(s), int(w)): r for r, (s, w) in enumerate(zip(emb.sentence_index,
                                                                 emb.word_index))}  # fmt: skip
    insts = [inst for _, _, inst in meta]
    return InstanceSet(
        corpus=corpus.name, sha256=getattr(corpus, "sha256", "") or "",
        n_sentences=len(all_sentences), ids=tuple(i.id for i in insts),
        lemmas=tuple(i.lemma for i in insts), pos=tuple(i.pos for i in insts),
        keys=tuple(tuple(i.keys) for i in insts), embeddings=emb,
        rows=np.array([where[(s, w)] for s, w, _ in meta], dtype=np.int64),
    )  # fmt: skip


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("dir", nargs="?", type=Path, default=None)
    ap.add_argument("--window", default="1", help="sentences on each side, comma-separated")
    ap.add_argument("--json")
    args = ap.parse_args()
    directory = args.dir or shipped_biencoder()
    test, semcor = load_dataset("ALL"), load_dataset("semcor")
    bi = BiEncoder(directory, device="cpu")
    index = bi.index(sorted({(i.lemma, i.pos) for _, i in test.instances()}))
    results = {}
    for window in [0, *(int(w) for w in args.window.split(","))]:
        instances = with_context(bi.encoder, test, window)
        report = evaluate_wsd_model(bi.encoder, index, test, semcor, instances=instances)
        results[window] = report
        sets, zs = report["datasets"], report["zero_shot"]
        print(f"window {window}: " + " ".join(f"{n}={100 * v['f1']:.1f}" for n, v in sets.items())
              + "  " + " ".join(f"{p}={100 * f:.1f}" for p, f in
                                 sorted(sets["ALL"]["by_pos"].items()))
              + f"  zero-shot vs SemCor ({zs['n']})={100 * zs['f1']:.1f}")  # fmt: skip
    if args.json:
        write_json(args.json, {"dir": str(directory), "windows": list(results),
                               "machine": machine_facts(),
                               "results": {str(k): v for k, v in results.items()}})  # fmt: skip


if __name__ == "__main__":
    main()
