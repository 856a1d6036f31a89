"""Word sense disambiguation as a fine-tuning task: the gloss-informed bi-encoder.

A context encoder and a gloss encoder, both started from the chosen model, are trained on
sense-annotated sentences (SemCor) so that the vector of a target word (its subwords' last
hidden states pooled as the :class:`~workbench.encoding.encoder.Encoder` pools them) has the
highest dot product with the gloss vector of its gold sense among the candidates of its lemma and
POS, exactly WordNet 3.0's (:meth:`workbench.lexicon.wordnet.WordNet.candidates`). The loss is
the cross-entropy over those candidates, with the gold set as target (an instance with several
gold keys is right with any of them). After Blevins & Zettlemoyer (2020), "Moving Down the Long
Tail of Word Sense Disambiguation with Gloss Informed Bi-encoders".

Beside this module: the model and its loss
(:class:`~workbench.finetune.tasks.wsd.model.BiEncoderModel`), the glosses it reads
(:mod:`workbench.finetune.tasks.wsd.glosses`), and the end of a run
(:mod:`workbench.finetune.tasks.wsd.finish`).

Training is organised around the context pass:

* one feature row is one sentence (or, for a sentence longer than ``max_length``, one of the
  windows the Encoder would cut it into, holding the instances it owns), so one pass of the
  context encoder serves every instance of the sentence;
* a batch encodes the union of its instances' candidate glosses once, longest first, in chunks
  of similar length (:mod:`workbench.finetune.tasks.wsd.glosses`); with ``negatives`` a training
  batch keeps each instance's gold senses and that many others (:mod:`.negatives`);
* training rows leave out instances with one candidate (their loss is always 0);
* gradient accumulation (``grad_accum``) spreads a large step over several smaller batches,
  bf16 autocast runs on a GPU, the shared loop (:mod:`workbench.finetune.training.loop`) does
  the rest.

The dev metric is ``f1`` (every instance is answered, so precision = recall = F1). The model
directory holds both encoders (a LoRA run: their adapters;
:mod:`workbench.finetune.training.store`); after training, :meth:`WsdTask.finish` scores the test
data through it, loaded as every later answer loads it
(:class:`workbench.wsd.biencoder.BiEncoder`: glosses encoded when needed and cached).

Example::

    data = builtin_data("semcor", limits=(2000, None, None))   # SemCor / SE07 / ALL
    finetune("wsd", data.train, data.dev, TrainConfig(epochs=1), "runs/wsd", test=data.test)
    load_biencoder("runs/wsd")                                 # the bi-encoder, for answers
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

import numpy as np
import torch
from torch import nn

from workbench.corpora.readers import Instance, Sentence
from workbench.encoding.adapters import AdapterBase
from workbench.encoding.models import ModelSource, load_model
from workbench.encoding.pooling import pooling_plan_flat
from workbench.encoding.prepare import prepare
from workbench.errors import DataError, InputError, ModelLoadError
from workbench.finetune.data.readers import DataFile, LabelSet
from workbench.finetune.tasks.base import Features, Task, special_template
from workbench.finetune.tasks.kind import TaskKind
from workbench.finetune.tasks.wsd.distil import (
    check_teacher,
    check_teacher_scores,
    teacher_grid,
    teacher_scores,
)
from workbench.finetune.tasks.wsd.finish import finish_wsd_model
from workbench.finetune.tasks.wsd.glosses import GlossTable, pad_glosses
from workbench.finetune.tasks.wsd.lower import LowerLayers
from workbench.finetune.tasks.wsd.model import BiEncoderModel
from workbench.finetune.tasks.wsd.negatives import NEGATIVES_STREAM, kept_candidates
from workbench.finetune.tasks.wsd.options import WsdOptions
from workbench.finetune.training.config import TrainConfig
from workbench.finetune.training.encoders import load_encoder
from workbench.finetune.training.model_io import Batch
from workbench.finetune.training.modeling import TaskModel
from workbench.finetune.training.store import save_encoder
from workbench.finetune.training.top_layers import cut_point, top_parameter_names
from workbench.lexicon.wordnet import POS_TAGS, load_wordnet
from workbench.wsd.biencoder import (
    BASE_GLOSS_ENCODER,
    CONTEXT_LAYERS,
    CONTEXT_POOLING,
    GLOSS_ENCODER,
    bi_encoder_head,
    gloss_source,
)
from workbench.wsd.sources import sense_graph

if TYPE_CHECKING:
    from transformers import PreTrainedTokenizerBase

IGNORE = -100  # padding of the predicted candidate grid


def continued_head(options: WsdOptions, source: ModelSource) -> dict[str, Any] | None:
    """The head config of ``source`` when it is a trained WSD bi-encoder that training would
    continue (:func:`~workbench.wsd.biencoder.bi_encoder_head`), None for any other model.

    Raises:
        InputError: the trained bi-encoder pooled its glosses otherwise than ``head_pooling``
            asks (its gloss vectors would change meaning).
    """
    head = bi_encoder_head(source.location) if source.is_local else None
    if head is not None and head["gloss_pooling"] != options.head_pooling:
        raise InputError(
            f"'{source.name}' is a WSD bi-encoder trained with head pooling "
            f"'{head['gloss_pooling']}'; continuing it with '{options.head_pooling}' "
            f"would change what its gloss vectors mean: pass --head-pooling "
            f"{head['gloss_pooling']}, or start from its base model."
        )
    return head


#: (lemma, POS) pairs per frequency group of Z-reweighting (the reference code's ``K``).
Z_GROUP = 300


def z_weights(
    lemmas: Sequence[tuple[str, str]],
    polysemy: Sequence[int],
    gamma: float,
    group: int = Z_GROUP,
) -> np.ndarray:
    """Per-instance loss weights ``(len(lemmas),)`` float32 by Z-reweighting (Su et al. 2022,
    "Rare and Zero-shot Word Sense Disambiguation using Z-Reweighting", ACL; as their code,
    ``suytingwan/WSD-Z-reweighting``, ``preprocess/power_law_fit.py``, computes them).

    The ``(lemma, POS)`` pairs are ranked by how many instances they have (most first, ties in
    the pair's order) and cut into groups of ``group``; each group's mean polysemy (an
    instance's ``polysemy``: its candidate senses) is smoothed by a least-squares fit of
    ``a * log(x + c) + b`` over the group index ``x`` (the group means themselves where there
    are fewer than four groups or the fit fails); a pair weighs its group's smoothed polysemy
    over the largest, to one decimal, to the power ``gamma``, to one decimal, and at least 0.1.
    The frequent lemmas, the most polysemous, weigh about 1; rare ones, mostly of few senses,
    less, so the many easy instances of rare lemmas pull the shared layers less. ``gamma`` 0:
    all 1.

    Example::

        >>> z_weights([("be", "VERB")] * 3 + [("bank", "NOUN")], [13, 13, 13, 10], 1.0, 1).tolist()
        [1.0, 1.0, 1.0, 0.800000011920929]
    """
    if not lemmas:
        return np.zeros(0, dtype=np.float32)
    if gamma == 0:
        return np.ones(len(lemmas), dtype=np.float32)
    counts = Counter(lemmas)
    senses = dict(zip(lemmas, polysemy))
    order = sorted(counts, key=lambda pair: (-counts[pair], pair))
    n_groups = -(-len(order) // group)
    means = np.array(
        [np.mean([senses[p] for p in order[g * group : (g + 1) * group]]) for g in range(n_groups)],
        dtype=np.float64,
    )
    smooth = means
    if n_groups >= 4:
        from scipy.optimize import curve_fit

        x = np.arange(n_groups, dtype=np.float64)
        try:
            with np.errstate(all="ignore"):
                params, _ = curve_fit(lambda x, a, b, c: a * np.log(x + c) + b, x, means,
                                      p0=(-1.0, float(means[0]), 1.0), bounds=(
                                          (-np.inf, -np.inf, 1e-6), (np.inf, np.inf, np.inf)),
                                      maxfev=10_000)  # fmt: skip
            fitted = params[0] * np.log(x + params[2]) + params[1]
            if np.isfinite(fitted).all() and fitted.max() > 0:
                smooth = fitted
        except (RuntimeError, ValueError):  # no fit: the group means as they are
            pass
    level = np.round(np.clip(smooth / smooth.max(), 0.0, 1.0), 1)
    weight = np.maximum(np.round(level**gamma + 1e-4, 1), 0.1)
    of_pair = {pair: float(weight[i // group]) for i, pair in enumerate(order)}
    return np.array([of_pair[pair] for pair in lemmas], dtype=np.float32)


@dataclass(frozen=True)
class Candidates:
    """The candidate senses of one (lemma, POS): keys in WordNet order, their gloss rows."""

    keys: tuple[str, ...]
    rows: tuple[int, ...]


class WsdTask(Task):
    """Sentences with sense-annotated words -> the bi-encoder; metric: F1 (= accuracy)."""

    kind = "wsd"
    metric = "f1"
    Options = WsdOptions
    options: WsdOptions
    scores_test = False  # finish() scores the test data through the saved model directory

    def __init__(
        self, cfg: TrainConfig, tokenizer: PreTrainedTokenizerBase, labels: LabelSet | None
    ) -> None:
        super().__init__(cfg, tokenizer, labels)
        self.wordnet = load_wordnet()
        self.glosses = GlossTable(
            tokenizer, self.wordnet, self.options.gloss_text, self.options.gloss_max_length
        )
        #: with ``gloss_mix``: the same synsets' glosses as ``gloss_mix_text``
        self.mixed = (
            GlossTable(
                tokenizer, self.wordnet, self.options.gloss_mix_text, self.options.gloss_max_length
            )
            if self.options.gloss_mix
            else None
        )
        self._candidates: dict[tuple[str, str], Candidates] = {}
        self._counts = dict.fromkeys(("context_tokens", "gloss_tokens", "instances", "batches"), 0)
        self._encoded: set[int] = set()  # frozen glosses already encoded in training
        self.gloss_is_base = False  # the gloss encoder is the base model (build_model says)
        self.lower: LowerLayers | None = None  # a top_layers run's cached lower layers
        self.model: BiEncoderModel | None = None  # the model build_model made

    # -- data ----------------------------------------------------------------------------
    def candidates(self, lemma: str, pos: str) -> Candidates:
        """WordNet's candidate senses of ``(lemma, pos)`` (``()`` when it has none)."""
        found = self._candidates.get((lemma, pos))
        if found is None:
            keys = self.wordnet.candidates(lemma, pos)
            graph = sense_graph(self.wordnet)
            synsets = [graph.synsets[graph.key_synset[graph.key_row[k]]] for k in keys]
            found = Candidates(keys, tuple(self.glosses.rows_of(synsets)))
            self._candidates[(lemma, pos)] = found
        return found

    def check_instance(self, inst: Instance, source: str) -> Candidates:
        """The candidates of one instance, after checking it can be trained and scored.

        Raises:
            DataError: naming the instance: no gold key (its id is missing from the key
                file), a POS or lemma with no WordNet senses, a gold key that is not a WordNet
                3.0 sense key or not one of the lemma's senses.
        """
        where = f"{source}: instance {inst.id} ('{inst.lemma}', {inst.pos})"
        if inst.pos not in POS_TAGS:
            raise DataError(f"{where}: POS {inst.pos} has no WordNet senses ({POS_TAGS}).")
        found = self.candidates(inst.lemma.lower(), inst.pos)
        if not found.keys:
            raise DataError(
                f"{where}: WordNet 3.0 has no sense of this lemma and POS, so there is no "
                "candidate to choose from. Fix the lemma or POS, or drop the instance."
            )
        if not inst.keys:
            raise DataError(
                f"{where} has no gold key: its id is missing from the gold key file. Every "
                "instance of the training and evaluation data needs one."
            )
        for key in inst.keys:
            if not self.wordnet.has_key(key):
                raise DataError(f"{where}: gold key '{key}' is not a WordNet 3.0 sense key.")
            if key not in found.keys:
                raise DataError(
                    f"{where}: gold key '{key}' is not one of the {len(found.keys)} WordNet "
                    f"senses of '{inst.lemma}' ({inst.pos}): {', '.join(found.keys[:6])}"
                    f"{' ...' if len(found.keys) > 6 else ''}."
                )
        return found

    def check(self, train: DataFile, dev: DataFile | None) -> None:
        """Check every instance of ``dev`` (or test) data before training starts (see
        :meth:`check_instance`; the training data is checked as its features are made)."""
        if dev is not None:
            for sentence in dev.examples:
                for inst in sentence.instances:
                    self.check_instance(inst, dev.source)

    def features(self, data: DataFile, train: bool) -> Features:
        """One row per sentence (per window of a long one) with instances to train or score.

        A row holds ``input_ids`` / ``attention_mask`` (special tokens included), and per
        instance its subword span ``(start, end)``, its candidates' gloss rows, the positions
        of its gold senses among them, and its id. Training rows leave out instances with one
        candidate; with ``lemma_reweight`` they hold each instance's loss weight too
        (``weights``: :func:`z_weights` over all the training rows' instances), with
        ``distil_from`` its teacher's candidate scores (``teacher``: :meth:`add_teacher_scores`).
        """
        head, tail = special_template(self.tokenizer)
        budget = self.cfg.max_length - len(head) - len(tail)
        truncated = self.glosses.n_truncated
        sentences: list[Sentence] = [s for s in data.examples if s.instances]
        checked = [[self.check_instance(i, data.source) for i in s.instances] for s in sentences]
        prep = prepare(self.tokenizer, [list(s.words) for s in sentences], budget)
        rows: list[dict[str, Any]] = []
        pairs: list[tuple[str, str]] = []  # (lemma, POS) of each instance kept, in row order
        polysemy: list[int] = []  # its candidate senses
        n_single = n_used = 0
        for window in prep.windows:
            sentence = sentences[window.sentence]
            offsets = prep.offsets[window.sentence]
            first = int(offsets[window.word_start])
            owned = set(window.owned)
            spans, cands, gold, ids = [], [], [], []
            for inst, found in zip(sentence.instances, checked[window.sentence], strict=True):
                if inst.index not in owned:
                    continue
                if train and len(found.keys) < 2:
                    n_single += 1
                    continue
                a = len(head) + int(offsets[inst.index]) - first
                b = len(head) + int(offsets[inst.index + 1]) - first
                spans.append((a, b))
                cands.append(list(found.rows))
                gold.append([found.keys.index(k) for k in inst.keys])
                ids.append(inst.id)
                pairs.append((inst.lemma.lower(), inst.pos))
                polysemy.append(len(found.keys))
            if not spans:
                continue
            n_used += len(spans)
            stop = int(offsets[window.word_end])
            tokens = [*head, *prep.ids[window.sentence][first:stop].tolist(), *tail]
            rows.append(
                {
                    "input_ids": tokens,
                    "attention_mask": [1] * len(tokens),
                    "spans": spans,
                    "cands": cands,
                    "gold": gold,
                    "ids": ids,
                    "row": len(rows),
                }
            )
        if not rows:
            what = "with more than one candidate sense " if train else ""
            raise DataError(f"{data.source}: no sense-annotated instance {what}to train or score.")
        notes = list(prep.notes)
        if train and self.options.distil_from:
            notes.append(self.add_teacher_scores(data, rows))
        if train and self.options.lemma_reweight:
            weights = z_weights(pairs, polysemy, self.options.lemma_reweight)
            start = 0
            for row in rows:
                row["weights"] = weights[start : start + len(row["spans"])].tolist()
                start += len(row["spans"])
            top = pairs.index(Counter(pairs).most_common(1)[0][0])
            notes.append(
                f"{data.source}: instances Z-reweighted by their lemma's frequency group "
                f"(groups of {Z_GROUP}, gamma {self.options.lemma_reweight:g}): from "
                f"{weights[top]:.1f} for the most frequent lemma to {weights.min():.1f}; mean "
                f"{weights.mean():.2f}"
            )
        if n_single:
            notes.append(
                f"{data.source}: {n_single} instance(s) with a single candidate sense left out "
                "of training (their loss is always 0)"
            )
        if len(prep.windows) > len(sentences):
            notes.append(
                f"{data.source}: sentences longer than max_length={self.cfg.max_length} were "
                "cut into windows as the Encoder cuts them"
            )
        if self.glosses.n_truncated > truncated:
            notes.append(
                f"{data.source}: {self.glosses.n_truncated - truncated} candidate gloss(es) "
                f"longer than gloss_max_length={self.options.gloss_max_length} were truncated"
            )
        return Features(rows, notes)

    def add_teacher_scores(self, data: DataFile, rows: list[dict[str, Any]]) -> str:
        """Give each row the teacher's candidate scores of its instances (``teacher``, in the
        order of ``cands``; :func:`~workbench.finetune.tasks.wsd.distil.teacher_scores`); a
        note of what was scored, by whom, in how long."""
        teacher = self.options.distil_from
        start = time.perf_counter()
        scores = teacher_scores(teacher, data, self.wordnet)
        ids = [i for row in rows for i in row["ids"]]
        check_teacher_scores(scores, ids, [len(c) for row in rows for c in row["cands"]], teacher)
        for row in rows:
            row["teacher"] = [scores[i].tolist() for i in row["ids"]]
        return (
            f"{data.source}: {len(ids)} instance(s) scored by the teacher '{teacher}' in "
            f"{time.perf_counter() - start:.0f} s, soft targets of weight "
            f"{self.options.distil_weight:g} at temperature {self.options.distil_temperature:g}"
        )

    def collate(self, rows: list[dict[str, Any]], gen: torch.Generator | None = None) -> Batch:
        """Pad contexts, plan the word pooling, and gather the union of candidate glosses (in a
        training batch with ``negatives``: of each instance's gold senses and that many other
        candidates, :meth:`_sampled`).

        Returns the batch :class:`~.model.BiEncoderModel` takes (``weights``: each instance's
        loss weight, ``teacher``: a teacher's candidate scores, when every row has them), plus
        ``inst_row`` / ``inst_col`` (each instance's row in the batch and place in it) and
        ``row_ids`` (each row's feature row), which :meth:`predict` uses.
        """
        pad_id = self.tokenizer.pad_token_id or 0
        width = max(len(r["input_ids"]) for r in rows)
        ids = np.full((len(rows), width), pad_id, dtype=np.int64)
        mask = np.zeros((len(rows), width), dtype=np.int64)
        starts: list[int] = []
        ends: list[int] = []
        inst_row: list[int] = []
        inst_col: list[int] = []
        for b, row in enumerate(rows):
            ids[b, : len(row["input_ids"])] = row["input_ids"]
            mask[b, : len(row["input_ids"])] = 1
            for j, (s, e) in enumerate(row["spans"]):
                starts.append(b * width + s)
                ends.append(b * width + e)
                inst_row.append(b)
                inst_col.append(j)
        plan = pooling_plan_flat(np.array(starts), np.array(ends), CONTEXT_POOLING)
        positions = np.concatenate([plan.single_positions, plan.multi_positions])
        segments = np.concatenate([plan.single_words, plan.multi_words[plan.multi_segments]])
        weights = np.concatenate([np.ones(len(plan.single_words), np.float32), plan.multi_weights])
        all_cands = [c for row in rows for c in row["cands"]]
        golds = [g for row in rows for g in row["gold"]]
        teachers = (
            [x for r in rows for x in r["teacher"]] if all("teacher" in r for r in rows) else None
        )
        if gen is not None and self.options.negatives and not self.options.freeze_glosses:
            all_cands, golds, teachers = self._sampled(rows, all_cands, golds, teachers)
        texts = self._gloss_texts(sorted({g for c in all_cands for g in c}), rows, gen)
        union = sorted(texts, key=lambda g: (-len(texts[g]), g))  # longest first
        column = {g: j for j, g in enumerate(union)}
        n_cand = max(len(c) for c in all_cands)
        candidates = np.full((len(all_cands), n_cand), -1, dtype=np.int64)
        gold = np.zeros((len(all_cands), n_cand), dtype=np.int64)
        for i, (cand, good) in enumerate(zip(all_cands, golds, strict=True)):
            candidates[i, : len(cand)] = [column[g] for g in cand]
            gold[i, good] = 1
        glosses = [texts[g] for g in union]
        gloss_ids, gloss_mask = pad_glosses(glosses, pad_id)
        lower: dict[str, np.ndarray] = {}
        if self.lower is not None and self.model is not None:
            contexts = [r["input_ids"] for r in rows]
            lower["context_hidden"] = self.lower.batch(self.model.encoder, contexts)
            if not self.options.freeze_glosses:
                lower["gloss_hidden"] = self.lower.batch(self.model.gloss_encoder, glosses)
        if gen is not None:  # a training batch: count what the step processes
            self._counts["context_tokens"] += int(mask.sum())
            fresh = [j for j, g in enumerate(union) if g not in self._encoded]
            self._counts["gloss_tokens"] += int(gloss_mask[fresh].sum())
            if self.options.freeze_glosses:  # a frozen gloss is encoded once (BiEncoderModel)
                self._encoded.update(union)
            self._counts["instances"] += len(all_cands)
            self._counts["batches"] += 1

        def t(a: np.ndarray) -> torch.Tensor:
            return torch.from_numpy(np.ascontiguousarray(a))

        weighted = {}
        if all("weights" in r for r in rows):
            w = np.array([x for r in rows for x in r["weights"]], dtype=np.float32)
            weighted["weights"] = t(w)
        if teachers is not None:
            weighted["teacher"] = t(teacher_grid(teachers, n_cand))

        return {
            "input_ids": t(ids),
            "attention_mask": t(mask),
            "word_positions": t(positions.astype(np.int64)),
            "word_segments": t(segments.astype(np.int64)),
            "word_weights": t(weights.astype(np.float32)),
            "gloss_input_ids": t(gloss_ids),
            "gloss_attention_mask": t(gloss_mask),
            "gloss_rows": t(np.array(union, dtype=np.int64)),
            "candidates": t(candidates),
            "gold": t(gold),
            "inst_row": t(np.array(inst_row, dtype=np.int64)),
            "inst_col": t(np.array(inst_col, dtype=np.int64)),
            "row_ids": t(np.array([r["row"] for r in rows], dtype=np.int64)),
            **{k: t(v) for k, v in lower.items()},
            **weighted,
        }

    def _sampled(
        self,
        batch: list[dict[str, Any]],
        cands: list[list[int]],
        golds: list[list[int]],
        teachers: list[list[float]] | None,
    ) -> tuple[list[list[int]], list[list[int]], list[list[float]] | None]:
        """Each instance's candidates, gold positions and teacher scores cut to its gold senses
        and ``negatives`` others (:func:`~.negatives.kept_candidates`), drawn from the run's
        seed and the batch's feature rows (so a resumed run draws as an uninterrupted one did)."""
        seed = [self.cfg.seed, NEGATIVES_STREAM, *sorted(int(r["row"]) for r in batch)]
        rng = np.random.default_rng(seed)
        kept = [
            kept_candidates(len(c), g, self.options.negatives, rng)
            for c, g in zip(cands, golds, strict=True)
        ]
        cands = [[c[k] for k in keep] for c, keep in zip(cands, kept, strict=True)]
        golds = [[keep.index(p) for p in g] for g, keep in zip(golds, kept, strict=True)]
        if teachers is not None:
            teachers = [[s[k] for k in keep] for s, keep in zip(teachers, kept, strict=True)]
        return cands, golds, teachers

    def _gloss_texts(
        self, rows: list[int], batch: list[dict[str, Any]], gen: torch.Generator | None
    ) -> dict[int, list[int]]:
        """The token ids each gloss row of a batch is read as: its ``gloss_text``; in a
        training batch with ``gloss_mix``, a share of them its ``gloss_mix_text`` instead, drawn
        from the run's seed and the batch's feature rows (so a resumed run draws as an
        uninterrupted one did)."""
        texts = {g: self.glosses.ids[g] for g in rows}
        if gen is None or self.mixed is None:
            return texts
        seed = [self.cfg.seed, *sorted(int(r["row"]) for r in batch)]
        drawn = np.random.default_rng(seed).random(len(rows)) < self.options.gloss_mix
        swap = [g for g, d in zip(rows, drawn, strict=True) if d]
        other = self.mixed.rows_of([self.glosses.synsets[g] for g in swap])
        texts.update({g: self.mixed.ids[m] for g, m in zip(swap, other, strict=True)})
        return texts

    def prepare(self, feats: list[Features], progress: bool) -> list[str]:
        """A ``top_layers`` run: the lower layers' activations of every context of ``feats``
        and every candidate gloss, computed where the cache lacks them (a progress bar in
        tokens, with its ETA); a note of what was found and computed."""
        if self.lower is None or self.model is None:
            return []
        from tqdm.auto import tqdm

        jobs = [(self.model.encoder, [r["input_ids"] for f in feats for r in f.rows])]
        if not self.options.freeze_glosses:
            glosses = list(self.glosses.ids)
            if self.mixed is not None:  # the other text of every gloss a step may read
                glosses += [self.mixed.ids[m] for m in self.mixed.rows_of(self.glosses.synsets)]
            jobs.append((self.model.gloss_encoder, glosses))
        todo = []
        for encoder, seqs in jobs:
            found, _ = self.lower.cache(encoder).lookup(seqs)
            todo.append(sum(len(s) for s, f in zip(seqs, found, strict=True) if f is None))
        total = sum(len(s) for _, seqs in jobs for s in seqs)
        bar = tqdm(total=sum(todo), unit="tok", desc="lower layers", disable=not progress)
        computed = sum(self.lower.fill(encoder, seqs, bar) for encoder, seqs in jobs)
        bar.close()
        below = self.lower.below
        return [
            f"top_layers={self.options.top_layers}: the embeddings and the {below} lower layers of "
            f"both encoders are frozen; their outputs for {total - sum(todo)} of {total} "
            f"tokens came from the cache ({self.lower.cache(self.model.encoder).folder.parent}), "
            f"{computed} sequence(s) were computed and stored"
        ]

    def epoch_stats(self) -> dict[str, float]:
        """What the training batches of the epoch just ended processed (then reset):
        context and gloss tokens (padding excluded), instances, batches."""
        stats = {k: float(v) for k, v in self._counts.items()}
        self._counts = dict.fromkeys(self._counts, 0)
        return stats

    # -- model ---------------------------------------------------------------------------
    @classmethod
    def check_source(cls, cfg: TrainConfig, source: ModelSource) -> None:
        """A trained WSD bi-encoder as the base model is continued (:meth:`build_model`) only
        with the head pooling it was trained with (:func:`continued_head`); a ``distil_from``
        must be a trained bi-encoder's directory (:func:`~.distil.check_teacher`)."""
        options = cast(WsdOptions, cls.configure(cfg).task)
        continued_head(options, source)
        if options.distil_from:
            check_teacher(options.distil_from)

    def build_model(self, source: ModelSource) -> tuple[BiEncoderModel, list[str]]:
        """Two copies of the base model: the context encoder and the gloss encoder; or, when
        ``source`` is a trained WSD bi-encoder's directory, its two encoders (training goes
        on from both, e.g. one more epoch after a finished run; a LoRA run goes on training
        their adapters; see :meth:`check_source`)."""
        head = continued_head(self.options, source)
        gloss_from = source
        if head is not None:
            gloss_from = gloss_source(Path(source.location), head)
        # the gloss encoder stays the base model's own (saved as "base", not as a copy) when a
        # LoRA run keeps it frozen and it has no adapters of its own
        self.gloss_is_base = bool(
            self.cfg.lora_r
            and self.options.freeze_glosses
            and (head is None or head.get("gloss_encoder") == BASE_GLOSS_ENCODER)
        )
        encoder = load_encoder(source, self.cfg.lora_r)
        below = cut_point(encoder, self.options.top_layers) if self.options.top_layers else None
        model = BiEncoderModel(
            encoder,
            load_encoder(gloss_from, self.cfg.lora_r),
            self.options.head_pooling,
            gloss_batch_tokens=self.options.gloss_batch_tokens,
            freeze_glosses=self.options.freeze_glosses,
            below=below,
            distil=(self.options.distil_weight, self.options.distil_temperature),
        )
        self.model = model
        if below is not None:
            self.lower = LowerLayers(below, self.tokenizer.pad_token_id or 0)
        pooled = "[CLS]" if self.options.head_pooling == "cls" else "mean"
        if head is None:
            note = f"context and gloss encoders both start from '{source.name}'"
        else:
            note = (
                f"training continues from the WSD bi-encoder '{source.name}': the context "
                f"encoder from it, the gloss encoder from '{gloss_from.name}'"
            )
            if head["gloss_text"] != self.options.gloss_text:
                note += f" (its glosses were the sense's {head['gloss_text']})"
        note += f"; the gloss vector is the gloss encoder's {pooled} of the sense's " + (
            self.options.gloss_text
        )
        if self.options.freeze_glosses:
            note += "; the gloss encoder is frozen (each gloss encoded once), the context trains"
        return model, [note]

    @property
    def top_layers(self) -> int:
        """``top_layers``: the top N layers of both encoders train, the lower ones' outputs
        cached (:meth:`prepare`)."""
        return self.options.top_layers

    def encoders(self, model: TaskModel) -> list[nn.Module]:
        """The context encoder, and the gloss encoder unless it is frozen
        (``freeze_glosses``)."""
        bi = cast(BiEncoderModel, model)
        return [bi.encoder] if bi.freeze_glosses else [bi.encoder, bi.gloss_encoder]

    def set_encoder(self, model: TaskModel, index: int, encoder: nn.Module) -> None:
        if index == 1:
            model.gloss_encoder = encoder
        else:
            model.encoder = encoder

    def head_state(self, model: TaskModel) -> dict[str, torch.Tensor]:
        """No weights: the gloss encoder, the bi-encoder's second transformer, is saved as a
        model directory of its own (:meth:`save_parts`)."""
        return {}

    def save_parts(self, model: TaskModel, output: Path, base: AdapterBase | None) -> None:
        """The gloss encoder as the model directory ``output/gloss_encoder`` (adapters or full
        weights, as the context encoder), unless it stayed at the base model
        (``head.json``: ``"gloss_encoder": "base"``). A frozen gloss encoder of a
        ``top_layers`` run keeps the top layers it started with (those of the bi-encoder it
        continues), so those are saved."""
        if not self.gloss_is_base:
            gloss_dir = output / GLOSS_ENCODER
            gloss = cast(BiEncoderModel, model).gloss_encoder
            names = None
            if self.options.freeze_glosses and self.top_layers and not self.cfg.lora_r:
                names = top_parameter_names(gloss, self.top_layers)
            save_encoder(gloss, self.tokenizer, gloss_dir, base, self.top_layers, names)

    @classmethod
    def load_model(
        cls,
        directory: Path,
        head: dict[str, Any],
        weights: dict[str, torch.Tensor],
        source: ModelSource,
    ) -> BiEncoderModel:
        if bi_encoder_head(directory) is None:
            raise ModelLoadError(f"{directory} is a WSD head without its gloss encoder.")
        return BiEncoderModel(
            load_model(source, torch.float32),
            load_model(gloss_source(directory, head), torch.float32),
            head["gloss_pooling"],
        )

    def head_config(self) -> dict[str, Any]:
        return {
            "task": self.kind,
            "labels": None,
            "gloss_pooling": self.options.head_pooling,
            "gloss_text": self.options.gloss_text,
            "gloss_max_length": self.options.gloss_max_length,
            "context_pooling": CONTEXT_POOLING,
            "context_layers": CONTEXT_LAYERS,
            **({"gloss_encoder": BASE_GLOSS_ENCODER} if self.gloss_is_base else {}),
        }

    # -- evaluation ----------------------------------------------------------------------
    def predict(self, model: nn.Module, batch: Batch) -> tuple[torch.Tensor, ...]:
        """``(chosen candidate per instance, (rows, max instances) padded with -100; the rows'
        feature row numbers)``."""
        inst_row, inst_col = batch.pop("inst_row"), batch.pop("inst_col")
        row_ids = batch.pop("row_ids")
        batch.pop("gold", None)
        batch.pop("weights", None)
        batch.pop("teacher", None)
        _, scores = model(**batch)
        width = int(inst_col.max().item()) + 1
        grid = torch.full((len(row_ids), width), IGNORE, dtype=torch.long, device=scores.device)
        grid[inst_row, inst_col] = scores.argmax(1)
        return grid, row_ids

    def score(self, outputs: tuple[np.ndarray, ...], feats: Features) -> dict[str, float]:
        """F1 over the scored instances (each answered: precision = recall = F1)."""
        grid, row_ids = outputs
        right = total = 0
        for chosen, r in zip(grid, row_ids, strict=True):
            for j, gold in enumerate(feats.rows[int(r)]["gold"]):
                total += 1
                right += int(chosen[j]) in gold
        return {"f1": right / max(total, 1), "n_instances": float(total)}

    def finish(
        self,
        output: Path,
        model: TaskModel,
        card: dict[str, Any],
        data: tuple[DataFile, DataFile | None, DataFile | None],
    ) -> dict[str, Any]:
        """Save the sense counts, score the test data through the saved directory
        (:func:`~workbench.finetune.tasks.wsd.finish.finish_wsd_model`)."""
        return finish_wsd_model(output, self.cfg, self.options, card, data)


#: The bi-encoder WSD task kind, registered with the training loop from here
#: (:data:`~workbench.finetune.tasks.registry.TASKS`).
WSD = TaskKind(WsdTask, Sentence, "bi-encoder word sense disambiguation",
               "WSD framework *.data.xml with its *.gold.key.txt, or a dataset name",
               baselines=False, labelled=False)  # fmt: skip
