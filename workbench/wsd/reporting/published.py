"""Published WSD systems' F1 on the evaluation framework (Raganato et al. 2017), as reported.

These figures are copied from the papers (SemCor-trained settings, the framework's test sets),
not re-run here: a report shows them beside its own numbers, marked as reported, with the
citation. A dataset a paper's main table does not give (or that we did not verify) is None.

Example::

    [(s.name, s.f1["ALL"]) for s in PUBLISHED]
"""

from __future__ import annotations

from dataclasses import dataclass

#: The framework's test sets, in the order papers print them.
SETS = ("senseval2", "senseval3", "semeval2007", "semeval2013", "semeval2015", "ALL")


@dataclass(frozen=True)
class PublishedSystem:
    """One system's reported F1 (percent) per set (None: not given here), and its source."""

    name: str
    citation: str
    f1: dict[str, float | None]


def _f1(*values: float | None) -> dict[str, float | None]:
    return dict(zip(SETS, values, strict=True))


PUBLISHED = (
    PublishedSystem(
        "LMMS 2048",
        "Loureiro and Jorge (2019), Language Modelling Makes Sense: Propagating "
        "Representations through WordNet for Full-Coverage Word Sense Disambiguation, ACL",
        _f1(76.3, 75.6, 68.1, 75.1, 77.0, 75.4),
    ),
    PublishedSystem(
        "GlossBERT",
        "Huang et al. (2019), GlossBERT: BERT for Word Sense Disambiguation with Gloss "
        "Knowledge, EMNLP-IJCNLP",
        _f1(77.7, 75.2, 72.5, 76.1, 80.4, 77.0),
    ),
    PublishedSystem(
        "EWISER",
        "Bevilacqua and Navigli (2020), Breaking Through the 80% Glass Ceiling: Raising the "
        "State of the Art in Word Sense Disambiguation by Incorporating Knowledge Graph "
        "Information, ACL",
        _f1(None, None, None, None, None, 78.3),
    ),
    PublishedSystem(
        "BEM",
        "Blevins and Zettlemoyer (2020), Moving Down the Long Tail of Word Sense "
        "Disambiguation with Gloss Informed Bi-encoders, ACL",
        _f1(79.4, 77.4, 74.5, 79.7, 81.7, 79.0),
    ),
    PublishedSystem(
        "ConSeC",
        "Barba, Procopio and Navigli (2021), ConSeC: Word Sense Disambiguation as Continuous "
        "Sense Comprehension, EMNLP",
        _f1(None, None, None, None, None, 82.0),
    ),
)
