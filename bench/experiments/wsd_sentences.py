"""The same everyday sentences through every WSD system, side by side.

Reads ``data/wsd_sentences.tsv`` (sentences written for the workbench, half of them using senses
SemCor has rarely or never seen) and asks each system for the sense of the bracketed word, with
no POS given (what a user of ``workbench wsd disambiguate`` or the app gets by default): the
bi-encoder (the shipped one, or ``--model DIR``), ``best``, ``plain``, ``wordnet``, and WordNet's
first sense. Prints a Markdown table (one row a sentence, one column a system, each answer's gloss
shortened) and the right answers per system for the common and the rare senses.

Run::

    python -m bench run wsd_sentences --json docs/bench_runs/wsd_sentences.json
    python -m bench run wsd_sentences --systems biencoder --smoothing 0.5   # a test-time lever

The SemCor systems build their index the first time (minutes on a CPU; then cached).
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from bench.lib.machine import machine_facts
from bench.lib.record import write_json
from workbench.encoding.alignment import split_words
from workbench.lexicon.wordnet import load_wordnet
from workbench.wsd.disambiguate import disambiguate
from workbench.wsd.levers import TestTimeLevers
from workbench.wsd.systems import open_system

SENTENCES = Path(__file__).resolve().parents[2] / "data" / "wsd_sentences.tsv"
SYSTEMS = ("biencoder", "best", "plain", "wordnet")


def read_sentences(path: Path) -> list[dict]:
    """The sentences: gold keys, frequency group, words and the target's position."""
    out = []
    for line in path.read_text(encoding="utf-8").splitlines():
        if not line.strip() or line.startswith("#"):
            continue
        keys, group, text = line.split("\t")
        before, rest = text.split("[", 1)
        word, after = rest.split("]", 1)
        words = [*split_words(before), word, *split_words(after)]
        out.append(
            {"gold": keys.split(","), "group": group, "text": text,
             "words": words, "target": len(split_words(before))}
        )  # fmt: skip
    return out


def short(gloss: str, n: int = 38) -> str:
    return gloss if len(gloss) <= n else gloss[: n - 1] + "…"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model", default=None, help="a bi-encoder directory (default: shipped)")
    ap.add_argument("--systems", default=",".join(SYSTEMS))
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--json", type=Path, default=None)
    ap.add_argument("--smoothing", type=float, default=None, help="bi-encoder: relation smoothing")
    ap.add_argument("--prior", type=float, default=None, help="bi-encoder: SemCor sense prior")
    args = ap.parse_args()
    given = {
        k: v for k, v in (("smoothing", args.smoothing), ("prior", args.prior)) if v is not None
    }
    levers = TestTimeLevers(**given) if given else None  # None: the folder's own
    wordnet = load_wordnet()
    sentences = read_sentences(SENTENCES)
    answers: dict[str, list[dict]] = {}
    seconds: dict[str, float] = {}
    first: list[dict] = []
    answered_levers: dict[str, float] = {}
    for name in args.systems.split(","):
        t0 = time.perf_counter()
        model = args.model if name == "biencoder" else None
        opened = open_system(name, model, device=args.device,
                             levers=levers if name == "biencoder" else None)  # fmt: skip
        if opened.levers is not None:
            answered_levers = opened.levers.describe()  # the folder's own where none given
        rows = []
        for s in sentences:
            result = disambiguate(opened, s["words"], s["target"], wordnet=wordnet)
            best = result.best
            key = best.key if best else ""
            rows.append({"key": key, "gloss": best.gloss if best else "",
                         "right": key in s["gold"]})  # fmt: skip
            if len(first) < len(sentences):  # WordNet's first sense, the same for every system
                fs = result.first_sense
                fkey = fs.key if fs else ""
                first.append({"key": fkey, "gloss": fs.gloss if fs else "",
                              "right": fkey in s["gold"]})  # fmt: skip
        answers[f"{opened.name}" + (f" ({opened.note})" if opened.note else "")] = rows
        seconds[name] = time.perf_counter() - t0
    answers["WordNet first sense"] = first
    names = list(answers)
    print("| sentence | gold | " + " | ".join(names) + " |")
    print("| --- | --- | " + " | ".join("---" for _ in names) + " |")
    for i, s in enumerate(sentences):
        cells = []
        for n in names:
            a = answers[n][i]
            cells.append(f"{'✓' if a['right'] else '✗'} {short(a['gloss'])}")
        gold = short(wordnet.gloss(wordnet.synset(s["gold"][0])))
        print(f"| {s['text']} ({s['group']}) | {gold} | " + " | ".join(cells) + " |")
    totals = {}
    for n in names:
        totals[n] = {
            g: sum(a["right"] for a, s in zip(answers[n], sentences) if s["group"] == g)
            for g in ("common", "rare")
        }
    n_common = sum(s["group"] == "common" for s in sentences)
    n_rare = len(sentences) - n_common
    print()
    for n, t in totals.items():
        print(f"{n}: common {t['common']}/{n_common}, rare {t['rare']}/{n_rare}")
    write_json(args.json, {"machine": machine_facts(), "sentences": sentences,
                           "levers": answered_levers,
                           "answers": answers, "right": totals, "seconds": seconds})  # fmt: skip


if __name__ == "__main__":
    main()
