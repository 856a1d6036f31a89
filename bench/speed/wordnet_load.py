"""Opening WordNet 3.0 and answering one word: workbench's way against NLTK's reader.

Each measurement is a new Python process (what a ``workbench wsd ...`` command or the app's
start pays), run ``--repeats`` times, the two ways interleaved within each repeat, medians
reported:

* baseline (kept here, not in the library): import NLTK, make its ``WordNetCorpusReader`` over
  the normalised copy, parse ``index.sense`` whole into frozen dataclasses grouped per lemma
  (the workbench's previous loader); then the calls one ``disambiguate`` of WORD makes
  (candidates of every POS, each candidate's synset name, gloss and tag count) through NLTK;
* workbench: :func:`workbench.lexicon.wordnet.load_wordnet` and the same calls; it also
  records whether the process imported NLTK;
* lookups for an evaluation: ``candidates`` of ``--pairs`` seeded ``(lemma, POS)`` pairs in
  one process, first and second time, against a dict built from the whole parse;
* with ``--before REF``: the whole command ``workbench wsd disambiguate SENTENCE --word WORD``
  from a copy of the repository at REF (``git archive``) against the working tree, with the
  cache the caller's environment names (run each once first so that both are warm).

Run::

    python -m bench run wordnet_load --repeats 5 --before HEAD~1 \\
        --json docs/bench_runs/wordnet_load_cpu_2core.json
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench.lib.machine import machine_facts
from bench.lib.record import write_json
from workbench.lexicon.wordnet import normalised_copy

REPO = Path(__file__).resolve().parents[2]
SENTENCE = "He sat on the bank of the river"
WORD = "bank"

#: Shared by both ways: the timing harness and the calls one disambiguate of WORD makes.
PRELUDE = """
import json, sys, time
t0 = time.perf_counter()
"""
CALLS = """
def answer(candidates, synset, gloss, tag_count):
    out = []
    for pos in ("NOUN", "VERB", "ADJ", "ADV"):
        for key in candidates(WORD, pos):
            name = synset(key)
            out.append((key, name, gloss(name), tag_count(key)))
    return out
"""

BASELINE = (
    PRELUDE
    + """
import warnings
from dataclasses import dataclass
import nltk.data
from nltk.corpus.reader.wordnet import WordNetCorpusReader
t_import = time.perf_counter()

class Reader(WordNetCorpusReader):
    def map_wn(self, version="wordnet"):
        return None  # this is WordNet 3.0: no mapping

@dataclass(frozen=True)
class SenseEntry:
    key: str
    offset: int
    sense_number: int
    tag_count: int

POS = {"1": "NOUN", "2": "VERB", "3": "ADJ", "4": "ADV", "5": "ADJ"}
WN = {"1": "n", "2": "v", "3": "a", "4": "r", "5": "s"}
root = sys.argv[1]
nltk.data.path.append(root)
with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    reader = Reader(root, None)
by_key, by_lemma = {}, {}
with reader.open("index.sense") as fh:
    text = fh.read()
for line in text.splitlines():
    fields = line.split()
    if len(fields) != 4:
        continue
    entry = SenseEntry(fields[0], int(fields[1]), int(fields[2]), int(fields[3]))
    by_key[entry.key] = entry
    lemma, _, rest = entry.key.partition("%")
    by_lemma.setdefault((lemma.lower(), POS[rest[0]]), []).append(entry)
by_lemma = {k: tuple(e.key for e in sorted(v, key=lambda e: e.sense_number))
            for k, v in by_lemma.items()}
t_open = time.perf_counter()
"""
    + CALLS
    + """
found = answer(
    lambda lemma, pos: by_lemma.get((lemma, pos), ()),
    lambda key: reader.synset_from_pos_and_offset(
        WN[key.partition("%")[2][0]], by_key[key].offset).name(),
    lambda name: reader.synset(name).definition(),
    lambda key: by_key[key].tag_count,
)
t_calls = time.perf_counter()
"""
)

WORKBENCH = (
    PRELUDE
    + """
from workbench.lexicon.wordnet import load_wordnet
t_import = time.perf_counter()
wn = load_wordnet()
t_open = time.perf_counter()
"""
    + CALLS
    + """
found = answer(wn.candidates, wn.synset, wn.gloss, lambda key: wn.senses[key].tag_count)
t_calls = time.perf_counter()
"""
)

REPORT = """
print(json.dumps({"import": t_import - t0, "open": t_open - t_import, "calls": t_calls - t_open,
                  "total": t_calls - t0, "nltk_imported": "nltk" in sys.modules,
                  "answer": found}))
"""

LOOKUPS = """
import json, random, sys, time
from workbench.lexicon.wordnet import key_lemma_pos, load_wordnet
wn = load_wordnet()
pairs = sorted({key_lemma_pos(k) for k in wn.senses})
pairs = random.Random(0).sample(pairs, int(sys.argv[1]))
t = time.perf_counter(); first = [wn.candidates(l, p) for l, p in pairs]
t_first = time.perf_counter() - t
t = time.perf_counter(); second = [wn.candidates(l, p) for l, p in pairs]
t_second = time.perf_counter() - t
t = time.perf_counter()
by_lemma = {}
for key in wn.senses:
    by_lemma.setdefault(key_lemma_pos(key), []).append(wn.senses[key])
by_lemma = {k: tuple(e.key for e in sorted(v, key=lambda e: e.sense_number))
            for k, v in by_lemma.items()}
t_build = time.perf_counter() - t
t = time.perf_counter(); plain = [by_lemma.get(pair, ()) for pair in pairs]
t_dict = time.perf_counter() - t
assert first == second == plain
print(json.dumps({"first": t_first, "second": t_second, "dict_build": t_build, "dict": t_dict}))
"""


def python(code: str, *args: str, env: dict[str, str] | None = None) -> dict:
    """The JSON a new ``python -c code args`` prints last (exit 0 required)."""
    done = subprocess.run(
        [sys.executable, "-c", f"WORD = {WORD!r}\n{code}", *args],
        capture_output=True, text=True, env=env, cwd=REPO,
    )  # fmt: skip
    if done.returncode != 0:
        raise SystemExit(f"failed: {done.stderr[-2000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def command(source: Path, env: dict[str, str]) -> float:
    """Wall seconds of ``workbench wsd disambiguate SENTENCE --word WORD`` run from ``source``."""
    argv = [sys.executable, "-m", "workbench", "wsd", "disambiguate", SENTENCE, "--word", WORD]
    run_env = {**env, "PYTHONPATH": str(source)}
    t = time.perf_counter()
    done = subprocess.run(argv, capture_output=True, text=True, env=run_env, cwd=source)
    seconds = time.perf_counter() - t
    if done.returncode != 0:
        raise SystemExit(f"disambiguate from {source} failed: {done.stderr[-2000:]}")
    return seconds


def summary(runs: list[dict], field: str) -> float:
    return statistics.median(r[field] for r in runs)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--pairs", type=int, default=5000, help="(lemma, POS) pairs looked up")
    ap.add_argument("--before", default=None, help="git ref of the 'before' command run")
    ap.add_argument("--json", type=Path, default=None)
    args = ap.parse_args()
    root = str(normalised_copy())
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    results: dict = {"machine": machine_facts(), "word": WORD, "sentence": SENTENCE, "runs": {}}
    runs: dict[str, list] = {"baseline": [], "workbench": []}
    for _ in range(args.repeats):
        runs["baseline"].append(python(BASELINE + REPORT, root, env=env))
        runs["workbench"].append(python(WORKBENCH + REPORT, env=env))
    answers = {json.dumps(r.pop("answer")) for way in runs.values() for r in way}
    assert len(answers) == 1, "the two ways answered differently"
    results["runs"].update(runs)
    print(f"WordNet 3.0, opened and asked for {WORD!r} (new process, median of {args.repeats}):")
    print(f"{'':10} {'import':>8} {'open':>8} {'calls':>8} {'total':>8}  NLTK imported")
    for way, found in runs.items():
        cells = " ".join(f"{summary(found, f):7.3f}s" for f in ("import", "open", "calls", "total"))
        print(f"{way:10} {cells}  {found[0]['nltk_imported']}")
    ratio = summary(runs["baseline"], "total") / summary(runs["workbench"], "total")
    print(f"baseline / workbench (total): {ratio:.1f}x")
    write_json(args.json, results)

    lookups = [python(LOOKUPS, str(args.pairs), env=env) for _ in range(args.repeats)]
    results["runs"]["lookups"] = lookups
    print(f"candidates of {args.pairs} seeded (lemma, POS) pairs in one process: first "
          f"{summary(lookups, 'first'):.3f} s, again {summary(lookups, 'second'):.3f} s; a dict "
          f"of all pairs: {summary(lookups, 'dict_build'):.3f} s to build, "
          f"{summary(lookups, 'dict'):.3f} s to look up")  # fmt: skip
    write_json(args.json, results)

    if args.before:
        with tempfile.TemporaryDirectory(prefix="wb-before-") as before:
            archive = subprocess.run(
                ["git", "archive", args.before], cwd=REPO, capture_output=True, check=True
            )
            subprocess.run(["tar", "-x", "-C", before], input=archive.stdout, check=True)
            sources = {"before": Path(before), "after": REPO}
            for source in sources.values():
                command(source, env)  # warm: the page cache, the index the command opens
            times: dict[str, list[float]] = {"before": [], "after": []}
            for _ in range(args.repeats):
                for name, source in sources.items():
                    times[name].append(command(source, env))
        results["runs"]["command"] = {"before_ref": args.before, **times}
        b, a = statistics.median(times["before"]), statistics.median(times["after"])
        print(f"workbench wsd disambiguate {SENTENCE!r} --word {WORD} (new process, median of "
              f"{args.repeats}): before ({args.before}) {b:.2f} s, after {a:.2f} s")  # fmt: skip
        write_json(args.json, results)


if __name__ == "__main__":
    main()
