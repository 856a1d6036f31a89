"""Token classification with BIO labels (e.g. supersense tagging, NER).

Training labels go to subwords by ``label_mode``: ``first`` (the word's first subword gets the
label, the other subwords -100, ignored by the loss) or ``all`` (every subword gets the word's
label). Predictions are always decoded from each word's first subword, and scored at the
entity level with seqeval's rules (:func:`workbench.finetune.data.bio.entity_scores`).

Long sentences: a sentence whose subwords do not fit in ``max_length`` is cut into chunks of
whole words that fit; the chunks are trained on separately and their predictions joined again
before scoring, so every word is labelled and scored. A single word with more subwords than
fit is truncated to its first ones (its first subword, the one that is decoded, stays). A word
the tokenizer maps to no subword is replaced by the unknown token. Both are counted in notes.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import numpy as np
import torch
from torch import nn

from workbench.bounds import PROBABILITY
from workbench.encoding.models import ModelSource, load_model
from workbench.finetune.data.bio import IGNORE_INDEX, align_labels, entity_scores
from workbench.finetune.data.readers import DataFile, TaggedSentence
from workbench.finetune.tasks.base import Features, Task, special_template
from workbench.finetune.tasks.kind import TaskKind
from workbench.finetune.training.config import TaskOptions, option
from workbench.finetune.training.encoders import load_encoder
from workbench.finetune.training.model_io import Batch
from workbench.finetune.training.modeling import TokenModel

LabelMode = Literal["first", "all"]


def chunk_words(lengths: list[int], budget: int) -> list[tuple[int, int]]:
    """Greedy ``[start, end)`` word chunks whose subword counts sum to at most ``budget``.

    A word longer than the budget gets a chunk of its own.

    Example: ``chunk_words([2, 2, 3, 1], 4) == [(0, 2), (2, 4)]``.
    """
    chunks: list[tuple[int, int]] = []
    start, used = 0, 0
    for i, n in enumerate(lengths):
        if i > start and used + n > budget:
            chunks.append((start, i))
            start, used = i, 0
        used += n
    chunks.append((start, len(lengths)))
    return chunks


@dataclass(frozen=True)
class TokenOptions(TaskOptions):
    """The token classification task's options: its head, and which subwords carry a label."""

    head_dropout: float = option(0.1, "dropout before the head", PROBABILITY)
    label_mode: LabelMode = option(
        "first",
        "label the first subword of a word only, or all its subwords",
        choices=("first", "all"),
    )


class TokenTask(Task):
    """``words -> one BIO tag per word``; metric: entity-level F1."""

    kind = "token"
    metric = "f1"
    Options = TokenOptions
    options: TokenOptions

    def _subword_counts(
        self, sentences: list[tuple[str, ...]]
    ) -> tuple[list[tuple[list[str], list[int]]], list[str]]:
        """Words (unknown-token substituted where needed) and their subword counts."""
        enc = self.tokenizer(
            [list(s) for s in sentences], is_split_into_words=True, add_special_tokens=False
        )
        unk = self.tokenizer.unk_token or "[UNK]"
        out: list[tuple[list[str], list[int]]] = []
        notes: list[str] = []
        for i, words in enumerate(sentences):
            counts = [0] * len(words)
            for wid in enc.word_ids(i):
                if wid is not None:
                    counts[wid] += 1
            fixed = [w if c else unk for w, c in zip(words, counts, strict=True)]
            if 0 in counts:
                notes.append(
                    f"sentence {i}: {counts.count(0)} word(s) map to no subword; "
                    "encoded as the unknown token"
                )
            out.append((fixed, [max(c, 1) for c in counts]))
        return out, notes

    def features(self, data: DataFile, train: bool) -> Features:
        sents: list[TaggedSentence] = list(data.examples)
        words_counts, notes = self._subword_counts([s.words for s in sents])
        head, tail = special_template(self.tokenizer)
        budget = self.cfg.max_length - len(head) - len(tail)
        labels = self.label_set
        pieces: list[list[str]] = []
        meta: list[tuple[int, list[int]]] = []
        for i, ((words, counts), sent) in enumerate(zip(words_counts, sents, strict=True)):
            for a, b in chunk_words(counts, budget):
                pieces.append(words[a:b])
                meta.append((i, [labels.id(t) for t in sent.tags[a:b]]))
        enc = self.tokenizer(
            pieces, is_split_into_words=True, truncation=True, max_length=self.cfg.max_length
        )
        rows: list[dict[str, Any]] = []
        for j, (sent_id, label_ids) in enumerate(meta):
            wids = enc.word_ids(j)
            row = {
                k: enc[k][j] for k in ("input_ids", "attention_mask", "token_type_ids") if k in enc
            }
            mode = self.options.label_mode if train else "first"
            row["labels"] = align_labels(wids, label_ids, mode)
            row["eval_labels"] = align_labels(wids, label_ids, "first")
            row["sent"] = sent_id
            rows.append(row)
        if len(rows) > len(sents):
            notes.append(
                f"{data.source}: {len(rows) - len(sents)} sentence(s) longer than "
                f"max_length={self.cfg.max_length} were cut into chunks of whole words"
            )
        return Features(rows, notes)

    def build_model(self, source: ModelSource) -> tuple[TokenModel, list[str]]:
        n_labels = len(self.label_set.names)
        model = TokenModel(load_encoder(source), n_labels, self.options.head_dropout)
        return model, []

    @classmethod
    def load_model(
        cls,
        directory: Path,
        head: dict[str, Any],
        weights: dict[str, torch.Tensor],
        source: ModelSource,
    ) -> TokenModel:
        model = TokenModel(
            load_model(source, torch.float32), len(head["labels"]), head["head_dropout"]
        )
        model.head.load_state_dict(weights)
        return model

    def predict(self, model: nn.Module, batch: Batch) -> tuple[torch.Tensor, ...]:
        gold = batch.pop("eval_labels")
        batch.pop("labels", None)
        _, logits = model(**batch)
        return logits.argmax(-1), gold

    def word_tags(
        self, outputs: tuple[np.ndarray, ...], feats: Features
    ) -> tuple[list[list[str]], list[list[str]]]:
        """Gathered (pred, gold) token arrays -> per-sentence gold and predicted tag lists."""
        pred, gold = outputs
        names = self.label_set.names
        gold_tags: dict[int, list[str]] = {}
        pred_tags: dict[int, list[str]] = {}
        for row, p, g in zip(feats.rows, pred, gold, strict=True):
            keep = g != IGNORE_INDEX
            gold_tags.setdefault(row["sent"], []).extend(names[i] for i in g[keep])
            pred_tags.setdefault(row["sent"], []).extend(names[i] for i in p[keep])
        order = sorted(gold_tags)
        return [gold_tags[s] for s in order], [pred_tags[s] for s in order]

    def score(self, outputs: tuple[np.ndarray, ...], feats: Features) -> dict[str, float]:
        gold, pred = self.word_tags(outputs, feats)
        s = entity_scores(gold, pred)
        flat_g = [t for seq in gold for t in seq]
        flat_p = [t for seq in pred for t in seq]
        acc = float(np.mean([a == b for a, b in zip(flat_g, flat_p, strict=True)]))
        return {"f1": s.f1, "precision": s.precision, "recall": s.recall, "word_accuracy": acc}


#: The BIO token classification task kind.
TOKEN = TaskKind(
    TokenTask, TaggedSentence, "BIO token classification",
    "CoNLL: word<TAB>tag, blank line between sentences",
)  # fmt: skip
