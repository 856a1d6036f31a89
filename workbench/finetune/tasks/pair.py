"""Sentence-pair classification: both texts in one input, ``[CLS] a [SEP] b [SEP]``, head on
[CLS]. Pairs longer than ``max_length`` are truncated longest-first (the longer text loses
tokens first) and counted in the notes.
"""

from __future__ import annotations

from workbench.finetune.data.readers import DataFile, PairExample
from workbench.finetune.tasks.kind import TaskKind
from workbench.finetune.tasks.sequence import SequenceTask


class PairTask(SequenceTask):
    """``(text_a, text_b) -> label``; metric: accuracy."""

    kind = "pair"

    def _texts(self, data: DataFile) -> tuple[list[str], list[str] | None]:
        return [ex.text_a for ex in data.examples], [ex.text_b for ex in data.examples]


#: The sentence-pair classification task kind.
PAIR = TaskKind(
    PairTask, PairExample, "sentence-pair classification", "CSV/JSONL with text_a,text_b,label"
)
