"""The official scoring of the WSD evaluation framework (Raganato et al. 2017, ``Scorer.java``).

Rules, exactly as the Java scorer counts:

* gold and system files map an id to a *set* of keys (repeated lines for one id are merged);
  a line with fewer than two fields is skipped;
* system ids not in the gold are ignored;
* for an answered gold instance with ``k`` system keys, each key in the gold set earns
  ``1/k`` of a correct answer and each other key ``1/k`` of a wrong one;
* ``P = correct / (correct + wrong)`` (i.e. per answered instance), ``R = correct / |gold|``,
  ``F1 = 2PR / (P + R)`` (0 when ``P + R`` is 0).

Differences, all in degenerate cases: fields are split on any whitespace (Java splits on single
spaces, so a double space there yields an empty, wrong key); with nothing answered ``P`` is 0
here (NaN in Java). Percentages print with one decimal, rounded half up like Java's ``%.1f``.

Example::

    >>> s = score({"a": {"k1"}, "b": {"k2", "k3"}}, {"a": {"k1", "x"}})
    >>> (s.precision, s.recall, s.f1)
    (0.5, 0.25, 0.3333333333333333)
    >>> print(format_score(s))
    P=	50.0%
    R=	25.0%
    F1=	33.3%
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from decimal import ROUND_HALF_UP, Decimal
from pathlib import Path

from workbench.corpora.text import read_text_file
from workbench.errors import DataError, InputError
from workbench.outputs import output_file

KeyMap = Mapping[str, Iterable[str]]


@dataclass(frozen=True)
class Score:
    """Scores of one system against one gold (fractions in [0, 1]).

    Attributes:
        correct: sum of the fractional credit (``ok`` in ``Scorer.java``).
        wrong: sum of the fractional debit (``notok``).
        answered: gold instances that received at least one answer.
        total: gold instances.
    """

    correct: float
    wrong: float
    answered: int
    total: int

    @property
    def precision(self) -> float:
        attempted = self.correct + self.wrong
        return self.correct / attempted if attempted else 0.0

    @property
    def recall(self) -> float:
        return self.correct / self.total if self.total else 0.0

    @property
    def f1(self) -> float:
        p, r = self.precision, self.recall
        return 2 * p * r / (p + r) if p + r else 0.0


def _as_sets(keys: KeyMap) -> dict[str, frozenset[str]]:
    return {k: frozenset([v] if isinstance(v, str) else v) for k, v in keys.items()}


def score(gold: KeyMap, system: KeyMap) -> Score:
    """Score ``system`` answers against ``gold`` keys by the official rules.

    Args:
        gold: instance id -> gold keys (a str is taken as one key).
        system: instance id -> answered keys; ids not in ``gold`` are ignored, an empty
            answer set counts as no answer.
    """
    gold_sets, system_sets = _as_sets(gold), _as_sets(system)
    correct = wrong = 0.0
    answered = 0
    for instance_id, answers in system_sets.items():
        expected = gold_sets.get(instance_id)
        if expected is None or not answers:
            continue
        hits = len(answers & expected)
        correct += hits / len(answers)
        wrong += (len(answers) - hits) / len(answers)
        answered += 1
    return Score(correct, wrong, answered, len(gold_sets))


def score_by_group(gold: KeyMap, system: KeyMap, groups: Mapping[str, str]) -> dict[str, Score]:
    """Scores per group (e.g. per POS or per dataset); gold ids without a group are left out.

    Args:
        groups: instance id -> group label.

    Returns:
        group -> :class:`Score`, groups in sorted order.
    """
    members: dict[str, dict[str, Iterable[str]]] = {}
    for instance_id, keys in gold.items():
        group = groups.get(instance_id)
        if group is not None:
            members.setdefault(group, {})[instance_id] = keys
    return {g: score(members[g], system) for g in sorted(members)}


def dataset_groups(ids: Iterable[str]) -> dict[str, str]:
    """Instance id -> dataset, from the ``ALL`` id prefix (``senseval2.d000...`` -> senseval2)."""
    return {i: i.split(".", 1)[0] for i in ids}


# --------------------------------------------------------------------------- key files


def read_keys(path: str | os.PathLike, gold: bool = False) -> dict[str, frozenset[str]]:
    """Read a key file as the official scorer does (``id key [key ...]``; ``.xz`` accepted).

    Args:
        path: the key file.
        gold: a gold file, where every line must give a key: an id alone is refused (the
            instance would count as unanswerable and lower the recall). In a system file it
            is an instance left unanswered.

    Raises:
        DataError: a missing or unreadable file, or (``gold``) a line with an id and no key.
    """

    keys: dict[str, set[str]] = {}
    text = read_text_file(path, f"key file {path}", DataError)  # size, NUL, encoding, .xz
    for number, line in enumerate(text.splitlines(), 1):
        fields = line.split()
        if len(fields) < 2:
            if gold and fields:
                raise DataError(
                    f"{path}:{number}: instance {fields[0]!r} has no sense key "
                    "(a gold line is 'id key [key ...]')"
                )
            continue
        keys.setdefault(fields[0], set()).update(fields[1:])
    return {k: frozenset(v) for k, v in keys.items()}


def write_keys(path: str | os.PathLike, answers: KeyMap, overwrite: bool = False) -> Path:
    """Write ``id key [key ...]`` lines (ids in the given order; empty answers left out); a
    file there that the workbench did not write is replaced only with ``overwrite``.

    Raises:
        InputError: an id or key that is empty or holds whitespace (the format splits on it).
    """
    path = Path(path)
    lines = []
    for instance_id, keys in answers.items():
        keys = [keys] if isinstance(keys, str) else list(keys)
        for item in (instance_id, *keys):
            if not item or any(ch.isspace() for ch in item):
                raise InputError(f"cannot write the key file {path}: {item!r} holds whitespace")
        if keys:
            lines.append(f"{instance_id} {' '.join(keys)}\n")
    with output_file(path, overwrite=overwrite) as tmp:
        tmp.write_text("".join(lines), encoding="utf-8")
    return path


def check_key_files(
    gold: KeyMap, system: KeyMap, gold_path: str | os.PathLike, system_path: str | os.PathLike
) -> None:
    """Refuse key files that cannot be meant: a gold file without keys, a system file without
    answers, or one none of whose ids is in the gold (another dataset's answers).

    Raises:
        DataError: naming the file and what is wrong.
    """
    if not gold:
        raise DataError(f"{gold_path}: no gold keys (an empty file, or no 'id key' line)")
    if not system:
        raise DataError(f"{system_path}: no answers (an empty file, or no 'id key' line)")
    if not any(instance_id in gold for instance_id in system):
        example = next(iter(system))
        raise DataError(
            f"none of the {len(system)} ids in {system_path} (e.g. {example!r}) is in the gold "
            f"file {gold_path}: answers for another dataset?"
        )


def score_files(gold_path: str | os.PathLike, system_path: str | os.PathLike) -> Score:
    """Score a system key file against a gold key file (``Scorer.java GOLD SYSTEM``).

    Raises:
        DataError: a missing or unreadable file, or files that :func:`check_key_files`
            refuses (where the Java scorer prints 0.0%).
    """
    gold, system = read_keys(gold_path, gold=True), read_keys(system_path)
    check_key_files(gold, system, gold_path, system_path)
    return score(gold, system)


# --------------------------------------------------------------------------- printing


def percent(value: float) -> str:
    """``0.71249`` -> ``"71.2"``: one decimal, half up (Java ``String.format("%.1f")``).

    Like Java, the shortest decimal form of the double is rounded, so ``0.7125 * 100``
    (``71.25``) gives ``71.3``.
    """
    return str(Decimal(repr(value * 100)).quantize(Decimal("0.1"), rounding=ROUND_HALF_UP))


def format_score(result: Score) -> str:
    """The official scorer's output: ``P=\\t71.2%``, ``R=\\t...``, ``F1=\\t...`` lines."""
    return "\n".join(
        f"{label}=\t{percent(value)}%"
        for label, value in (("P", result.precision), ("R", result.recall), ("F1", result.f1))
    )


def scorer_output(gold_path: str | os.PathLike, system_path: str | os.PathLike) -> str:
    """What ``java Scorer GOLD SYSTEM`` prints, for ``workbench wsd score GOLD SYSTEM``."""
    return format_score(score_files(gold_path, system_path))


def format_table(scores: Mapping[str, Score], title: str = "group") -> str:
    """A plain-text table of P / R / F1 (percent) and counts, one row per entry."""
    width = max([len(title), *(len(k) for k in scores)])
    lines = [f"{title:<{width}}  {'P':>5}  {'R':>5}  {'F1':>5}  {'answered':>8}  {'total':>6}"]
    for name, s in scores.items():
        lines.append(
            f"{name:<{width}}  {percent(s.precision):>5}  {percent(s.recall):>5}  "
            f"{percent(s.f1):>5}  {s.answered:>8}  {s.total:>6}"
        )
    return "\n".join(lines)
