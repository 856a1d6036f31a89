"""Published WSD systems' F1 on the evaluation framework (Raganato et al. 2017), as reported.

These figures are the papers' (SemCor-trained settings, the framework's test sets), not re-run
here: a report shows them beside its own numbers, marked as reported, with the citation. Each
figure was checked against a source named in :attr:`PublishedSystem.checked_against` (the
sets in ``checked``): where the system's answers on ALL are public, by scoring them with the
official rules against the framework's gold keys (the strongest check: it reproduces every
figure of the row); otherwise against the authors' repository or NLP-progress's table. A
figure that could not be checked is left out (None: "undefined" in the report) and said in
words in ``also``. docs/reports.md lists the sources with their commits.

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
        checked: the sets whose figure was checked against ``checked_against`` (the sources,
            in words); a figure outside it would be unchecked (none is at present).
        also: other reported figures and caveats, in words (e.g. per POS, LFS, another
            training setting), each saying whether it was checked.
    """

    name: str
    citation: str
    f1: dict[str, float | None]
    checked: tuple[str, ...] = ()
    checked_against: str = ""
    also: str = ""


def _f1(*values: float | None) -> dict[str, float | None]:
    return dict(zip(SETS, values, strict=True))


#: NLP-progress's table of supervised systems (the five sets; no ALL column).
NLP_PROGRESS = (
    "NLP-progress's WSD table (github.com/sebastianruder/NLP-progress, "
    "english/word_sense_disambiguation.md, commit 78f50b7)"
)


def _answers(name: str) -> str:
    """The source 'the system's answers on ALL, scored here'."""
    return (
        f"its answers on ALL as released with Maru et al. (2022) (github.com/SapienzaNLP/"
        f"wsd-hard-benchmark, evaluation/predictions/ALL/{name}-predictions.key.txt, commit "
        "74ff055), scored here with the official rules: every figure of the row reproduced"
    )


PUBLISHED = (
    PublishedSystem(
        "LMMS 2048",
        "Loureiro and Jorge (2019), Language Modelling Makes Sense: Propagating "
        "Representations through WordNet for Full-Coverage Word Sense Disambiguation, ACL",
        _f1(76.3, 75.6, 68.1, 75.1, 77.0, 75.4),
        checked=SETS,
        checked_against="its authors' README (github.com/danlou/LMMS, README.md at commit "
        f"69a6645, 'WSD Evaluation') and {_answers('lmms')}",
    ),
    PublishedSystem(
        "GlossBERT",
        "Huang et al. (2019), GlossBERT: BERT for Word Sense Disambiguation with Gloss "
        "Knowledge, EMNLP-IJCNLP",
        _f1(77.7, 75.2, 72.5, 76.1, 80.4, None),
        checked=SETS[:5],
        checked_against=f"{NLP_PROGRESS} and its authors' README (github.com/HSLCY/GlossBERT, "
        "README.md at commit 64d282d, 'original version')",
        also="its ALL, 77.0, is over four test sets, SemEval-2007 (its development set) "
        "left out (the README's column 'ALL (4 test sets)'), not the framework's ALL, so it "
        "is not in that column; the checkpoint its authors released later scores 77.2 on "
        "those four sets and 76.9 on the framework's ALL (its answers, "
        "results/final_result_ALL.txt, scored here)",
    ),
    PublishedSystem(
        "SREF",
        "Wang and Wang (2020), A Synset Relation-enhanced Framework with a Try-again Mechanism "
        "for Word Sense Disambiguation, EMNLP",
        _f1(78.6, 76.6, 72.1, 78.0, 80.5, 77.8),
        checked=SETS,
        checked_against="its authors' README (github.com/lwmlyy/SREF, README.md at commit "
        "5ba727a, SREF-sup) and its released answers (data/results/sup.*.mean.key), scored "
        "here: the five sets, and ALL from their concatenation",
    ),
    PublishedSystem(
        "EWISER",
        "Bevilacqua and Navigli (2020), Breaking Through the 80% Glass Ceiling: Raising the "
        "State of the Art in Word Sense Disambiguation by Incorporating Knowledge Graph "
        "Information, ACL",
        _f1(78.9, 78.4, 71.0, 78.9, 79.3, 78.3),
        checked=SETS,
        checked_against=f"{NLP_PROGRESS} and {_answers('ewiser')}",
        also="with WordNet's tagged glosses and examples added to the training data, ALL "
        "80.1 is the figure usually quoted, not checked here (the paper's abstract says above "
        "80%); NLP-progress gives that setting 80.8, 79.0, 75.2, 80.7, 81.8 on the five sets",
    ),
    PublishedSystem(
        "BEM",
        "Blevins and Zettlemoyer (2020), Moving Down the Long Tail of Word Sense "
        "Disambiguation with Gloss Informed Bi-encoders, ACL",
        _f1(79.4, 77.4, 74.5, 79.7, 81.7, 79.0),
        checked=SETS,
        checked_against=f"{NLP_PROGRESS} and {_answers('bem')}",
        also="VERB 68.5 and LFS 52.6, as quoted from the paper, reproduced from its answers: "
        "that LFS counts an instance whose first listed gold key is not WordNet's first sense "
        "(2,650 of ALL; MFS 94.1 on the others); this report counts an instance MFS when any "
        "of its gold keys is (2,525 LFS), where BEM's answers score LFS 50.5, MFS 94.2",
    ),
    PublishedSystem(
        "ARES",
        "Scarlini, Pasini and Navigli (2020), With More Contexts Comes Better Performance: "
        "Contextualized Sense Embeddings for All-Round Word Sense Disambiguation, EMNLP",
        _f1(78.0, 77.1, 71.0, 77.3, 83.2, 77.9),
        checked=SETS,
        checked_against=f"{NLP_PROGRESS} and {_answers('ares')}",
        also="its sense embeddings add contexts gathered automatically to SemCor's",
    ),
    PublishedSystem(
        "MetricWSD",
        "Chen, Xia and Chen (2021), Non-Parametric Few-Shot Learning for Word Sense "
        "Disambiguation, NAACL",
        _f1(None, None, None, None, None, 75.1),
        checked=("ALL",),
        checked_against="the paper's abstract (aclanthology.org/2021.naacl-main.142: 75.1 F1 "
        "on the unified evaluation benchmark)",
        also="the five sets not checked, so not in the table",
    ),
    PublishedSystem(
        "ESR",
        "Song, Ong, Ng and Lin (2021), Improved Word Sense Disambiguation with Enhanced Sense "
        "Representations, Findings of EMNLP",
        _f1(81.3, 79.9, 77.0, 81.5, 84.1, None),
        checked=SETS[:5],
        checked_against=NLP_PROGRESS,
        also="NLP-progress's row does not say which encoder (the authors' repository, "
        "github.com/nusnlp/esr, trains on roberta-base and roberta-large); ALL not checked, so "
        "not in the table",
    ),
    PublishedSystem(
        "ConSeC",
        "Barba, Procopio and Navigli (2021), ConSeC: Word Sense Disambiguation as Continuous "
        "Sense Comprehension, EMNLP",
        _f1(82.3, 79.9, 77.4, 83.2, 85.2, 82.0),
        checked=SETS,
        checked_against=f"{NLP_PROGRESS} (the five sets) and its authors' README "
        "(github.com/SapienzaNLP/consec, README.md at commit 9602b5f: the SemCor-only "
        "checkpoint, 82.0 on ALL)",
        also="83.2 on ALL trained on SemCor and WordNet's tagged glosses (its README)",
    ),
)
