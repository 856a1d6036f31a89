"""Built-in word-in-context (WiC) pair task made from SemCor: same sense or not.

Construction (deterministic for a seed):

1. SemCor's sense-annotated instances are grouped by (lemma, POS); an instance's sense is its
   gold key set (two instances have the *same* sense when their key sets intersect).
2. Lemmas are split into train/dev/test (80/10/10 of the sorted lemma list, shuffled with the
   seed): a lemma, in any POS, is in one split only, so dev and test measure generalisation to
   unseen words.
3. Per (lemma, POS) group with at least two senses, ``n`` *same* and ``n`` *different* pairs are
   drawn (two instances from different sentences), with ``n`` = min(available same, available
   different, ``max_per_lemma``): every lemma is balanced, so the lemma itself says nothing
   about the label, and so is every split.
4. Each sentence is cut to ``context`` words either side of the target; as a pair input the
   target word is marked with quotes: ``He sat on the " bank " .``

Example::

    splits = build_wic(load_dataset("semcor"), seed=0)
    train = splits.data("train")            # DataFile of PairExample(text_a, text_b, label)
"""

from __future__ import annotations

import json
import random
from collections import defaultdict
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, TypeAlias

from workbench.corpora.readers import Corpus, Instance, Sentence
from workbench.corpora.text import read_text_file
from workbench.errors import DataError
from workbench.finetune.data.readers import DataFile, PairExample, in_memory
from workbench.outputs import output_file

SPLITS = ("train", "dev", "test")
SAME, DIFFERENT = "same", "different"
MARK = '"'

#: One sense-annotated use of a lemma: the sentence and the instance in it.
Use: TypeAlias = tuple[Sentence, Instance]


@dataclass(frozen=True)
class WicPair:
    """Two uses of one lemma, and whether they share a sense.

    Attributes:
        lemma, pos: the target's lemma and universal POS.
        words_a, words_b: the (cropped) sentences as words.
        index_a, index_b: the target's position in each.
        keys_a, keys_b: gold sense keys of the two uses.
        label: ``"same"`` or ``"different"``.
    """

    lemma: str
    pos: str
    words_a: tuple[str, ...]
    index_a: int
    words_b: tuple[str, ...]
    index_b: int
    keys_a: tuple[str, ...]
    keys_b: tuple[str, ...]
    label: str

    def to_example(self) -> PairExample:
        """The pair as marked text: ``text_a [SEP] text_b`` with the targets in quotes."""
        return PairExample(
            _marked(self.words_a, self.index_a), _marked(self.words_b, self.index_b), self.label
        )


def _marked(words: tuple[str, ...], index: int) -> str:
    return " ".join([*words[:index], MARK, words[index], MARK, *words[index + 1 :]])


def _crop(words: tuple[str, ...], index: int, context: int) -> tuple[tuple[str, ...], int]:
    start = max(0, index - context)
    return words[start : index + context + 1], index - start


@dataclass(frozen=True)
class WicSplits:
    """The three splits, and how they were made (for the training card); ``name``: the
    built-in task's name, in its data's source (``builtin:wic/train(...)``)."""

    train: tuple[WicPair, ...]
    dev: tuple[WicPair, ...]
    test: tuple[WicPair, ...]
    params: dict[str, Any]
    name: str = "wic"

    def pairs(self, split: str) -> tuple[WicPair, ...]:
        """The pairs of one split (``train``, ``dev`` or ``test``)."""
        if split not in SPLITS:
            raise DataError(f"Unknown split '{split}': choose one of {', '.join(SPLITS)}.")
        return getattr(self, split)

    def data(self, split: str, limit: int | None = None) -> DataFile:
        """A split as a :class:`DataFile` of pair examples (the first ``limit`` pairs)."""
        pairs = self.pairs(split)[:limit]
        name = f"builtin:{self.name}/{split}(seed={self.params['seed']},n={len(pairs)})"
        return in_memory([p.to_example() for p in pairs], name)


def _group(corpus: Corpus) -> dict[tuple[str, str], list[Use]]:
    groups: dict[tuple[str, str], list[Use]] = defaultdict(list)
    for sentence, inst in corpus.instances():
        if inst.keys:
            groups[(inst.lemma, inst.pos)].append((sentence, inst))
    return groups


def _draw(uses: list[Use], want_same: bool, n: int, rng: random.Random) -> list[tuple[Use, Use]]:
    """Up to ``n`` distinct pairs of uses from different sentences, same or different sense."""
    found: dict[tuple[str, ...], tuple[Use, Use]] = {}
    for _ in range(40 * n):
        if len(found) >= n:
            break
        a, b = rng.sample(uses, 2)
        if a[0].id == b[0].id or bool(set(a[1].keys) & set(b[1].keys)) != want_same:
            continue
        key = tuple(sorted((a[1].id, b[1].id)))
        found.setdefault(key, (a, b))
    return [found[k] for k in sorted(found)]


def _pair(a: Use, b: Use, label: str, context: int) -> WicPair:
    (sa, ia), (sb, ib) = a, b
    words_a, index_a = _crop(sa.words, ia.index, context)
    words_b, index_b = _crop(sb.words, ib.index, context)
    return WicPair(ia.lemma, ia.pos, words_a, index_a, words_b, index_b, ia.keys, ib.keys, label)


def build_wic(
    corpus: Corpus,
    seed: int = 0,
    max_per_lemma: int = 5,
    context: int = 20,
    fractions: tuple[float, float] = (0.8, 0.1),
) -> WicSplits:
    """Build the WiC splits from a sense-annotated corpus (SemCor; see the module docstring).

    Args:
        corpus: a :class:`workbench.corpora.readers.Corpus` with gold keys.
        seed: seeds the lemma split and the pair sampling.
        max_per_lemma: at most this many same and this many different pairs per (lemma, POS).
        context: words kept on each side of the target.
        fractions: shares of lemmas in train and dev (test gets the rest).

    Raises:
        DataError: the corpus yields no pairs (no gold keys, or no lemma with two senses).
    """
    rng = random.Random(seed)
    groups = _group(corpus)
    lemmas = sorted({lemma for lemma, _ in groups})
    random.Random(seed).shuffle(lemmas)
    cut1 = int(len(lemmas) * fractions[0])
    cut2 = int(len(lemmas) * (fractions[0] + fractions[1]))
    split_of = {
        lem: SPLITS[0 if i < cut1 else 1 if i < cut2 else 2] for i, lem in enumerate(lemmas)
    }
    out: dict[str, list[WicPair]] = {s: [] for s in SPLITS}
    for key in sorted(groups):
        uses = groups[key]
        senses = {k for _, inst in uses for k in inst.keys}
        if len(uses) < 3 or len(senses) < 2:
            continue
        same = _draw(uses, True, max_per_lemma, rng)
        diff = _draw(uses, False, max_per_lemma, rng)
        n = min(len(same), len(diff))
        pairs = [_pair(a, b, SAME, context) for a, b in same[:n]]
        pairs += [_pair(a, b, DIFFERENT, context) for a, b in diff[:n]]
        out[split_of[key[0]]].extend(pairs)
    for split in SPLITS:
        rng.shuffle(out[split])
    if not out["train"]:
        raise DataError(f"Corpus '{corpus.name}' yields no word-in-context pairs.")
    params = {
        "corpus": corpus.name,
        "corpus_sha256": corpus.sha256,
        "seed": seed,
        "max_per_lemma": max_per_lemma,
        "context": context,
        "fractions": list(fractions),
    }
    return WicSplits(tuple(out["train"]), tuple(out["dev"]), tuple(out["test"]), params)


def write_jsonl(pairs: tuple[WicPair, ...], path: str | Path, overwrite: bool = False) -> Path:
    """Write pairs as JSONL readable by :func:`workbench.finetune.data.readers.read_table`
    (pair=True): ``text_a``, ``text_b``, ``label`` plus the lemma, POS, words, indices and keys;
    whole or not at all, a file there that the workbench did not write replaced only with
    ``overwrite``."""
    path = Path(path)
    with output_file(path, overwrite=overwrite) as tmp, tmp.open("w", encoding="utf-8") as fh:
        for p in pairs:
            ex = p.to_example()
            row = {"text_a": ex.text_a, "text_b": ex.text_b, "label": p.label, **asdict(p)}
            fh.write(json.dumps(row, ensure_ascii=False) + "\n")
    return path


def read_jsonl(path: str | Path) -> tuple[WicPair, ...] | None:
    """Pairs back from a file :func:`write_jsonl` wrote; None if it lacks the WiC fields."""
    names = [f for f in WicPair.__dataclass_fields__]
    pairs = []
    for line in read_text_file(path, error=DataError).splitlines():
        if not line.strip():
            continue
        row = json.loads(line)
        if not all(k in row for k in names):
            return None
        values: dict[str, Any] = {
            k: tuple(row[k]) if isinstance(row[k], list) else row[k] for k in names
        }
        pairs.append(WicPair(**values))
    return tuple(pairs)
