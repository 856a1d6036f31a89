"""Published WSD systems' F1 on the evaluation framework (Raganato et al. 2017), as reported.

These figures are the papers' (SemCor-trained settings, the framework's test sets), not re-run
here: a report shows them beside its own numbers, marked as reported, with the citation. A
dataset a paper's main table does not give (or that we could not state) is None. Each system
says which of its figures were checked against a second statement of the paper's figure
(:attr:`PublishedSystem.checked`, ``checked_against``); the others are marked unchecked in the
report: look them up in the paper before citing them.

Example::

    [(s.name, s.f1["ALL"]) for s in PUBLISHED]
"""

from __future__ import annotations

from dataclasses import dataclass

#: The framework's test sets, in the order papers print them.
SETS = ("senseval2", "senseval3", "semeval2007", "semeval2013", "semeval2015", "ALL")


@dataclass(frozen=True)
class PublishedSystem:
    """One system's reported F1 (percent) per set (None: not given here), and its source.

    Attributes:
        checked: the sets whose figure was checked against ``checked_against`` (a second
            statement of the paper's figure); the other figures are unchecked.
        also: other reported figures, in words (e.g. per POS, LFS), checked likewise.
    """

    name: str
    citation: str
    f1: dict[str, float | None]
    checked: tuple[str, ...] = ()
    checked_against: str = ""
    also: str = ""


def _f1(*values: float | None) -> dict[str, float | None]:
    return dict(zip(SETS, values, strict=True))


#: The reference values the project's WSD work states from the papers (issue 50 of the
#: project's tracker: BEM ALL 79.0, SE07 74.5, VERB 68.5, LFS 52.6; SREF 77.8; EWISER 78.3;
#: ESR about 79.7; MetricWSD 75.1).
PROJECT_REFERENCE = "the figures the project's WSD targets quote from the papers"
#: NLP-progress's table of supervised WSD systems (github.com/sebastianruder/NLP-progress,
#: english/word_sense_disambiguation.md).
NLP_PROGRESS = "NLP-progress's WSD table"

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
        checked=SETS[:5],
        checked_against=NLP_PROGRESS,
    ),
    PublishedSystem(
        "SREF",
        "Wang and Wang (2020), A Synset Relation-enhanced Framework with a Try-again Mechanism "
        "for Word Sense Disambiguation, EMNLP",
        _f1(None, None, None, None, None, 77.8),
        checked=("ALL",),
        checked_against=PROJECT_REFERENCE,
    ),
    PublishedSystem(
        "EWISER",
        "Bevilacqua and Navigli (2020), Breaking Through the 80% Glass Ceiling: Raising the "
        "State of the Art in Word Sense Disambiguation by Incorporating Knowledge Graph "
        "Information, ACL",
        _f1(None, None, None, None, None, 78.3),
        checked=("ALL",),
        checked_against=PROJECT_REFERENCE,
        also="ALL 80.1 with WordNet's tagged glosses and examples added to the training data",
    ),
    PublishedSystem(
        "BEM",
        "Blevins and Zettlemoyer (2020), Moving Down the Long Tail of Word Sense "
        "Disambiguation with Gloss Informed Bi-encoders, ACL",
        _f1(79.4, 77.4, 74.5, 79.7, 81.7, 79.0),
        checked=("semeval2007", "ALL"),
        checked_against=PROJECT_REFERENCE,
        also="VERB 68.5, LFS 52.6 (checked likewise)",
    ),
    PublishedSystem(
        "MetricWSD",
        "Chen, Xia and Chen (2021), Non-Parametric Few-Shot Learning for Word Sense "
        "Disambiguation, NAACL",
        _f1(None, None, None, None, None, 75.1),
        checked=("ALL",),
        checked_against=PROJECT_REFERENCE,
    ),
    PublishedSystem(
        "ESR (BERT-base)",
        "Song, Ong, Ng and Lin (2021), Improved Word Sense Disambiguation with Enhanced Sense "
        "Representations, Findings of EMNLP",
        _f1(None, None, None, None, None, None),
        also="ALL about 79.7 and VERB 69.5 as quoted; the exact ALL figure not checked, so "
        "not in the table",
    ),
    PublishedSystem(
        "ConSeC",
        "Barba, Procopio and Navigli (2021), ConSeC: Word Sense Disambiguation as Continuous "
        "Sense Comprehension, EMNLP",
        _f1(None, None, None, None, None, 82.0),
    ),
)
