"""What the registry knows of one fine-tuning task kind (:class:`TaskKind`): declared beside
its task, by the task's own module (:data:`workbench.finetune.tasks.wsd.task.WSD` for the
bi-encoder), and listed in :data:`workbench.finetune.tasks.registry.TASKS`.

Example::

    PAIR = TaskKind(PairTask, PairExample, "sentence-pair classification",
                    "CSV/JSONL with text_a,text_b,label")
    PAIR.name, PAIR.metric, PAIR.read("train.csv")
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from workbench.corpora.readers import Sentence
from workbench.finetune.data.readers import (
    DataFile,
    PairExample,
    TaggedSentence,
    read_conll,
    read_table,
    read_text,
    read_wsd,
)
from workbench.finetune.tasks.base import Task


@dataclass(frozen=True)
class TaskKind:
    """One fine-tuning task kind: its name, the class that trains it, the data it reads.

    Attributes:
        task: the :class:`~workbench.finetune.tasks.base.Task` subclass; its ``kind`` is the name
            and its ``metric`` the dev metric (both defined there, once).
        example: the type of the examples its data holds (``str`` for plain text, a corpus
            :class:`~workbench.corpora.readers.Sentence` for WSD).
        description: what it learns, in a few words.
        file_format: the layout of its training files, for help texts.
        baselines: whether the frozen-encoder baselines exist for it
            (:mod:`workbench.finetune.evaluation.baselines`).
        labelled: whether its examples carry class labels (a :class:`LabelSet`).
    """

    task: type[Task]
    example: type
    description: str
    file_format: str
    baselines: bool = True
    labelled: bool = True

    @property
    def name(self) -> str:
        """``seqcls``, ``pair``, ``token``, ``mlm`` or ``wsd`` (the command and the card's
        ``task``)."""
        return self.task.kind

    @property
    def metric(self) -> str:
        """The dev metric that selects the best epoch (``accuracy``, ``f1``, ``loss``)."""
        return self.task.metric

    @property
    def help(self) -> str:
        """One line for menus and ``--help``: the description and the file format."""
        return f"{self.description} ({self.file_format})"

    def read(self, path: str | Path, repair_bio: bool = False) -> DataFile:
        """Read one split of this kind from ``path`` (the formats:
        :mod:`workbench.finetune.data.readers`); ``repair_bio`` applies to the CoNLL files of the
        token task."""
        if self.example is TaggedSentence:
            return read_conll(path, repair_bio=repair_bio)
        if self.example is Sentence:
            return read_wsd(path)
        if self.example is str:
            return read_text(path)
        return read_table(path, pair=self.example is PairExample)
