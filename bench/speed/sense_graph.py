"""WordNet's sense graph for propagation: read from WordNet's data files against NLTK's synsets.

Both ways build the same :class:`~workbench.wsd.vectors.SenseGraph` inputs (key -> synset,
synset -> hypernyms, synset -> lexicographer file) in one process, interleaved, ``--repeats``
times, medians reported:

* baseline (kept here, not in the library): make NLTK's reader over the normalised copy, iterate
  its ``all_synsets()`` and ask each synset for its name, lexname, hypernyms, instance hypernyms
  and lemma keys (the workbench's previous way);
* workbench: :func:`workbench.wsd.sources.sense_graph_from`, one pass over the data files
  (:meth:`workbench.lexicon.wordnet.WordNet.synset_records`), no NLTK.

Each repeat opens WordNet afresh for each way (NLTK keeps the synsets it made: a second pass over
one reader would be a warm one, which a process building its graph never has).

It also checks that the two agree on every synset, its lexname and its hypernyms (sets), and
reports the keys only NLTK derives.

Run::

    python -m bench run sense_graph --repeats 3 --json docs/bench_runs/sense_graph_cpu_2core.json
"""

from __future__ import annotations

import argparse
import time

from bench.lib.machine import machine_facts
from bench.lib.record import write_json
from workbench.lexicon.wordnet import read_wordnet
from workbench.wsd.sources import sense_graph_from
from workbench.wsd.vectors import SenseGraph


def nltk_graph(reader) -> tuple[dict, dict, dict]:
    """The former way: NLTK's synsets, one by one."""
    key_synsets: dict[str, str] = {}
    hypernyms: dict[str, list[str]] = {}
    lexnames: dict[str, str] = {}
    for synset in reader.all_synsets():
        name = synset.name()
        lexnames[name] = synset.lexname()
        parents = synset.hypernyms() + synset.instance_hypernyms()
        if parents:
            hypernyms[name] = [p.name() for p in parents]
        for lemma in synset.lemmas():
            key_synsets[lemma.key()] = name
    return key_synsets, hypernyms, lexnames


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--json", default=None)
    args = ap.parse_args(argv)
    base_s, ours_s = [], []
    for _ in range(args.repeats):
        wordnet = read_wordnet()  # index.sense read, NLTK's reader not made yet
        t = time.perf_counter()
        ks, hy, lx = nltk_graph(wordnet.reader)
        baseline = SenseGraph.build(ks, hy, lx)
        base_s.append(time.perf_counter() - t)
        wordnet = read_wordnet()
        t = time.perf_counter()
        ours = sense_graph_from(wordnet)
        ours_s.append(time.perf_counter() - t)
    assert ours.synsets == baseline.synsets and ours.lexnames == baseline.lexnames
    assert set(ours.keys) <= set(baseline.keys)
    edges = {(ours.synsets[c], ours.synsets[p]) for c, p in ours.hypernym_edges.tolist()}
    assert edges == {(baseline.synsets[c], baseline.synsets[p])
                     for c, p in baseline.hypernym_edges.tolist()}  # fmt: skip
    median = lambda xs: sorted(xs)[len(xs) // 2]  # noqa: E731
    result = {
        "machine": machine_facts(),
        "repeats": args.repeats,
        "baseline_nltk_s": base_s,
        "workbench_files_s": ours_s,
        "median_baseline_s": median(base_s),
        "median_workbench_s": median(ours_s),
        "speedup": median(base_s) / median(ours_s),
        "n_keys": len(ours.keys),
        "keys_only_nltk_derives": sorted(set(baseline.keys) - set(ours.keys)),
        "n_synsets": ours.n_synsets,
        "n_edges": len(edges),
    }
    print(
        f"NLTK's synsets: {result['median_baseline_s']:.1f} s; WordNet's files: "
        f"{result['median_workbench_s']:.1f} s ({result['speedup']:.1f}x); {result['n_keys']:,} "
        f"keys, {result['n_synsets']:,} synsets, {result['n_edges']:,} edges"
    )
    write_json(args.json, result)


if __name__ == "__main__":
    main()
