"""WordNet's gloss-and-example corpus (the reference corpus of a machine without the WSD data,
and the Geometry page's second corpus): read from WordNet's data files
(:func:`workbench.corpora.reference.wordnet_corpus`, through ``WordNet.synset_texts``) against
the baseline, the same texts gathered through NLTK's reader (``all_synsets()``, each synset's
``definition()`` and ``examples()``: the workbench's previous way), then the same
``corpus_from_texts``. Both in this process, interleaved, medians of ``--repeats``; the two
corpora are checked equal. NLTK's reader keeps the synsets it parsed, so each baseline run
makes a new reader (as each new process does).

Run::

    python -m bench run wordnet_corpus --repeats 3 \\
        --json docs/bench_runs/wordnet_corpus_cpu_2core.json
"""

from __future__ import annotations

import argparse
import os
import statistics
import time
from typing import Any

from bench.lib.machine import machine_facts
from bench.lib.record import write_json
from workbench.corpora.readers import Corpus, corpus_from_texts
from workbench.corpora.reference import WORDNET_CORPUS_NAME, wordnet_corpus
from workbench.lexicon.wordnet import read_wordnet


def through_nltk() -> Corpus:
    """The baseline: a new WordNet (so a new NLTK reader), its synsets' texts through NLTK."""
    texts: list[str] = []
    for synset in read_wordnet().reader.all_synsets():
        texts.append(synset.definition())
        texts.extend(synset.examples())
    return corpus_from_texts(texts, name=WORDNET_CORPUS_NAME)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--json", default=None)
    args = parser.parse_args(argv)
    out: dict[str, Any] = {"machine": machine_facts(), "repeats": args.repeats,
                           "load_average_start": os.getloadavg()[0]}  # fmt: skip
    kinds = {"data files (workbench)": wordnet_corpus, "NLTK's reader (baseline)": through_nltk}
    runs: dict[str, list[float]] = {name: [] for name in kinds}
    made: dict[str, Corpus] = {}
    for _ in range(args.repeats):
        for name, build in kinds.items():
            t = time.perf_counter()
            made[name] = build()
            runs[name].append(time.perf_counter() - t)
    first, second = made.values()
    assert first.sha256 == second.sha256 and first.sentences == second.sentences
    for name in kinds:
        out[name] = {"median_s": statistics.median(runs[name]), "runs": runs[name]}
        print(f"{name:26s} {out[name]['median_s']:6.2f} s")
    out["texts"] = first.n_sentences
    out["ratio baseline / workbench"] = (
        out["NLTK's reader (baseline)"]["median_s"] / out["data files (workbench)"]["median_s"]
    )
    print(f"{first.n_sentences:,} texts, equal; baseline / workbench: "
          f"{out['ratio baseline / workbench']:.1f}x")  # fmt: skip
    out["load_average_end"] = os.getloadavg()[0]
    write_json(args.json, out)


if __name__ == "__main__":
    main()
