"""Load time of SemCor (38 MB XML, .xz) with workbench's streaming reader vs a plain baseline.

Baseline: ``xml.etree.ElementTree.parse`` of the whole file, then the same Sentence objects
built from the tree (what a straightforward reader does). Both runs happen in this process, on
the same files; the page cache is warmed first. Also times WordNet loading.

    python -m bench run corpora [--repeat 3]
"""

from __future__ import annotations

import argparse
import lzma
import statistics
import time
import xml.etree.ElementTree as ET

from workbench.corpora.datasets import dataset_paths
from workbench.corpora.parsing import read_gold_keys
from workbench.corpora.readers import Instance, Sentence, read_xml
from workbench.lexicon.wordnet import read_wordnet


def baseline_read(xml_path, gold_path) -> list[Sentence]:
    gold = read_gold_keys(gold_path)
    opener = lzma.open if xml_path.suffix == ".xz" else open
    with opener(xml_path, "rb") as fh:
        root = ET.parse(fh).getroot()
    sentences = []
    for sent in root.iter("sentence"):
        words, lemmas, pos, instances = [], [], [], []
        for tok in sent:
            if tok.tag == "instance":
                iid = tok.get("id")
                instances.append(
                    Instance(iid, len(words), tok.get("lemma"), tok.get("pos"), gold.get(iid, ()))
                )
            words.append(tok.text.strip())
            lemmas.append(tok.get("lemma"))
            pos.append(tok.get("pos"))
        sentences.append(
            Sentence(sent.get("id"), tuple(words), tuple(lemmas), tuple(pos), tuple(instances))
        )
    return sentences


def resource_mb() -> float:
    import resource

    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def timed(fn, repeat: int) -> tuple[float, float, object]:
    """Median wall and CPU seconds of ``repeat`` calls (CPU time is steadier on a busy box)."""
    walls, cpus, result = [], [], None
    for _ in range(repeat):
        wall, cpu = time.perf_counter(), time.process_time()
        result = fn()
        walls.append(time.perf_counter() - wall)
        cpus.append(time.process_time() - cpu)
    return statistics.median(walls), statistics.median(cpus), result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    xml_path, gold_path = dataset_paths("semcor")
    rss0 = resource_mb()
    read_xml(xml_path, gold_path)  # warm the page cache
    print(f"peak RSS after one read_xml: {resource_mb():.0f} MB (before: {rss0:.0f} MB)")
    ours, ours_cpu, corpus = timed(lambda: read_xml(xml_path, gold_path), args.repeat)
    base, base_cpu, sentences = timed(lambda: baseline_read(xml_path, gold_path), args.repeat)
    assert [s.words for s in sentences] == [s.words for s in corpus.sentences]
    print(f"SemCor: {corpus.n_sentences:,} sentences, {corpus.n_instances:,} instances")
    print(f"workbench read_xml (expat, streaming): {ours:.2f} s wall, {ours_cpu:.2f} s CPU")
    print(f"baseline ElementTree.parse + build:    {base:.2f} s wall, {base_cpu:.2f} s CPU")
    ratio = base_cpu / ours_cpu
    print(f"speed ratio baseline/ours (CPU time, median of {args.repeat}): {ratio:.2f}x")

    wall, cpu = time.perf_counter(), time.process_time()
    read_wordnet()
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    print(f"read_wordnet() (normalised copy present): {wall:.2f} s wall, {cpu:.2f} s CPU")


if __name__ == "__main__":
    main()
