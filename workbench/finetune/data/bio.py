"""Pure BIO helpers: validation, entity spans (seqeval's rules), entity-level P/R/F1, and the
word <-> subword label alignment used by token classification.

Tags are IOB2 strings: ``"O"``, ``"B-TYPE"``, ``"I-TYPE"``. Entity extraction follows
seqeval's default (lenient) rules exactly, so scores match ``seqeval.metrics.f1_score``:

* ``B-X`` starts an entity; ``I-X`` continues an entity of type ``X``;
* an ``I-X`` after ``O``, or after a tag of another type, *starts* a new entity (an
  "I- without B-" is not dropped);
* an entity ends before ``O``, before ``B-``, or before a tag of another type.

Example::

    >>> entities(["I-PER", "I-PER", "O", "B-LOC", "I-ORG"])
    [('PER', 0, 1), ('LOC', 3, 3), ('ORG', 4, 4)]
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

IGNORE_INDEX = -100  # label of subwords that do not count in the loss (PyTorch's default)


def split_tag(tag: str) -> tuple[str, str]:
    """``"B-PER"`` -> ``("B", "PER")``; ``"O"`` -> ``("O", "")``."""
    if tag == "O":
        return "O", ""
    prefix, _, kind = tag.partition("-")
    return prefix, kind


def is_valid_tag(tag: str) -> bool:
    """True for ``"O"`` and ``"B-X"`` / ``"I-X"`` with a non-empty type ``X``."""
    prefix, kind = split_tag(tag)
    return tag == "O" or (prefix in ("B", "I") and bool(kind) and tag[1:2] == "-")


def orphan_inside(tags: Sequence[str]) -> list[int]:
    """Positions of ``I-X`` tags that do not continue a ``B-X``/``I-X`` (an "I- without B-").

    Example: ``orphan_inside(["O", "I-PER", "B-LOC", "I-ORG"]) == [1, 3]``.
    """
    bad = []
    prev_prefix, prev_kind = "O", ""
    for i, tag in enumerate(tags):
        prefix, kind = split_tag(tag)
        if prefix == "I" and (prev_prefix == "O" or prev_kind != kind):
            bad.append(i)
        prev_prefix, prev_kind = prefix, kind
    return bad


def repair_bio(tags: Sequence[str]) -> list[str]:
    """Turn every orphan ``I-X`` into ``B-X`` (the reading seqeval gives it anyway)."""
    out = list(tags)
    for i in orphan_inside(tags):
        out[i] = "B-" + split_tag(tags[i])[1]
    return out


def entities(tags: Sequence[str]) -> list[tuple[str, int, int]]:
    """Entity spans ``(type, first, last)`` (inclusive word positions), seqeval's rules."""
    spans: list[tuple[str, int, int]] = []
    start, kind_open = -1, ""
    for i, tag in enumerate([*tags, "O"]):
        prefix, kind = split_tag(tag)
        continues = prefix == "I" and start >= 0 and kind == kind_open
        if start >= 0 and not continues:
            spans.append((kind_open, start, i - 1))
            start = -1
        if prefix in ("B", "I") and not continues:
            start, kind_open = i, kind
    return spans


@dataclass(frozen=True)
class EntityScores:
    """Entity-level micro scores over a corpus (seqeval's ``precision/recall/f1_score``).

    Attributes:
        precision, recall, f1: micro-averaged over all entity types (0.0 when undefined).
        n_gold, n_pred, n_correct: entity counts behind them.
        per_type: ``(type, precision, recall, f1, n_gold)`` rows, sorted by type.
    """

    precision: float
    recall: float
    f1: float
    n_gold: int
    n_pred: int
    n_correct: int
    per_type: tuple[tuple[str, float, float, float, int], ...]


def _prf(correct: int, n_pred: int, n_gold: int) -> tuple[float, float, float]:
    p = correct / n_pred if n_pred else 0.0
    r = correct / n_gold if n_gold else 0.0
    f = 2 * p * r / (p + r) if p + r else 0.0
    return p, r, f


def entity_scores(gold: Sequence[Sequence[str]], pred: Sequence[Sequence[str]]) -> EntityScores:
    """Entity-level P/R/F1: an entity counts when type, start and end all match.

    Args:
        gold: one tag sequence per sentence.
        pred: the predicted tags, same lengths as ``gold``.

    Raises:
        ValueError: if the numbers of sentences or the lengths of a sentence differ.
    """
    if len(gold) != len(pred):
        raise ValueError(f"{len(gold)} gold sentences but {len(pred)} predicted ones")
    gold_set: set[tuple[int, str, int, int]] = set()
    pred_set: set[tuple[int, str, int, int]] = set()
    for s, (gold_tags, pred_tags) in enumerate(zip(gold, pred, strict=True)):
        if len(gold_tags) != len(pred_tags):
            raise ValueError(
                f"sentence {s}: {len(gold_tags)} gold tags but {len(pred_tags)} predicted"
            )
        gold_set.update((s, *e) for e in entities(gold_tags))
        pred_set.update((s, *e) for e in entities(pred_tags))
    correct = gold_set & pred_set
    rows = []
    for kind in sorted({e[1] for e in gold_set | pred_set}):
        c = sum(1 for e in correct if e[1] == kind)
        ng = sum(1 for e in gold_set if e[1] == kind)
        npred = sum(1 for e in pred_set if e[1] == kind)
        rows.append((kind, *_prf(c, npred, ng), ng))
    p, r, f = _prf(len(correct), len(pred_set), len(gold_set))
    return EntityScores(p, r, f, len(gold_set), len(pred_set), len(correct), tuple(rows))


def align_labels(
    word_ids: Sequence[int | None], word_labels: Sequence[int], mode: str = "first"
) -> list[int]:
    """Word labels -> one label per subword token.

    Args:
        word_ids: the fast tokenizer's ``word_ids()`` for one sequence (``None`` for special
            tokens), e.g. ``[None, 0, 1, 1, 2, None]``.
        word_labels: one label id per word.
        mode: ``"first"``: the word's first subword gets its label, the other subwords
            :data:`IGNORE_INDEX`; ``"all"``: every subword gets the word's label.

    Returns:
        A list as long as ``word_ids``; special tokens get :data:`IGNORE_INDEX`.

    Example: ``align_labels([None, 0, 1, 1, None], [3, 5]) == [-100, 3, 5, -100, -100]``.
    """
    if mode not in ("first", "all"):
        raise ValueError(f"mode must be 'first' or 'all', not {mode!r}")
    out: list[int] = []
    prev = None
    for wid in word_ids:
        if wid is None:
            out.append(IGNORE_INDEX)
        elif wid != prev or mode == "all":
            out.append(int(word_labels[wid]))
        else:
            out.append(IGNORE_INDEX)
        prev = wid
    return out
