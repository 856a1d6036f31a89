"""The WSD bi-encoder's model and loss (:class:`BiEncoderModel`), trained by
:class:`~workbench.finetune.tasks.wsd.task.WsdTask`.

Two transformers started from the same model: the context encoder gives each target word a
vector (:func:`pool_targets`, pooled as the :class:`~workbench.encoding.encoder.Encoder` pools),
the gloss encoder gives each candidate sense a vector (its gloss's [CLS] or mean, encoded in
chunks of similar length: :func:`chunk_bounds`); a sense's score is their dot product, and the
loss is the cross-entropy over the instance's candidates with the gold set as target. Answers
after training go through :class:`workbench.wsd.biencoder.BiEncoder`, which loads the saved
directory.

Example::

    model = BiEncoderModel(context_encoder, gloss_encoder, "cls")
    loss, scores = model(**task.collate(rows))    # scores: (n_instances, max_candidates)
"""

from __future__ import annotations

from collections.abc import Sequence

import torch
from torch import nn

from workbench.encoding.pooling import pool_sequence
from workbench.errors import ModelLoadError
from workbench.finetune.training.model_io import Batch, ModelOutput, encoder_config, encoder_inputs
from workbench.finetune.training.top_layers import top_states

#: Padded tokens per gloss-encoder pass when ``gloss_batch_tokens`` is 0 (auto): on a CPU small
#: chunks of similar length pad little; on a GPU each pass costs its kernel launches, so a
#: step's gloss union goes in a few large passes.
CPU_GLOSS_BATCH_TOKENS = 1024
GPU_GLOSS_BATCH_TOKENS = 16384


def pool_targets(
    hidden: torch.Tensor,
    positions: torch.Tensor,
    segments: torch.Tensor,
    weights: torch.Tensor,
    n_words: int,
) -> torch.Tensor:
    """Word vectors from subword vectors, differentiably: ``(batch, seq, dim)`` hidden states ->
    ``(n_words, dim)`` float32, word ``segments[k]`` gaining ``weights[k] * hidden`` at flattened
    position ``positions[k]`` (the gather plan of
    :func:`workbench.encoding.pooling.pooling_plan_flat`, so ``first``, ``mean`` and ``last``
    pool exactly as the :class:`~workbench.encoding.encoder.Encoder` does)."""
    flat = hidden.reshape(-1, hidden.shape[-1]).float()
    picked = flat.index_select(0, positions) * weights.unsqueeze(-1)
    out = torch.zeros((n_words, flat.shape[-1]), dtype=flat.dtype, device=flat.device)
    return out.index_add(0, segments, picked)


def distillation_loss(
    student: torch.Tensor, teacher: torch.Tensor, pad: torch.Tensor, temperature: float
) -> torch.Tensor:
    """Per instance ``(n,)``: ``T**2 * KL(softmax(teacher / T) || softmax(student / T))`` over
    the candidates not in ``pad`` (``(n, max_candidates)`` bool; ``student`` holds ``-inf``
    there, ``teacher`` anything)."""
    t = float(temperature)
    target = torch.softmax((teacher.to(student.dtype) / t).masked_fill(pad, float("-inf")), 1)
    log_student = torch.log_softmax(student / t, 1).masked_fill(pad, 0.0)
    log_target = torch.log(target.clamp_min(1e-30)).masked_fill(pad, 0.0)
    return (target * (log_target - log_student)).sum(1) * (t * t)


def chunk_bounds(lengths: Sequence[int], budget: int) -> list[tuple[int, int]]:
    """``[start, stop)`` chunks of sequences sorted longest first, each holding at most
    ``budget`` padded tokens (at least one sequence); a chunk is padded to its first, longest.

    Example: ``chunk_bounds([8, 8, 4, 4, 4], 16) == [(0, 2), (2, 5)]``.
    """
    bounds: list[tuple[int, int]] = []
    start = 0
    while start < len(lengths):
        stop = min(len(lengths), start + max(1, budget // max(int(lengths[start]), 1)))
        bounds.append((start, stop))
        start = stop
    return bounds


class BiEncoderModel(nn.Module):
    """The WSD bi-encoder: a context encoder and a gloss encoder, scored by dot product.

    ``encoder`` (the context encoder) gives each target word its vector: its subwords' last
    hidden states pooled as the :class:`~workbench.encoding.encoder.Encoder` pools them
    (:func:`pool_targets`). ``gloss_encoder`` gives each candidate sense a vector: its gloss's
    [CLS] or mean (``pooling``). The score of a sense is their dot product; the loss is the
    cross-entropy over the instance's candidates, with the probability of the gold set as
    target (the sum over its senses when an instance has several gold keys).

    ``forward`` takes one batch of :meth:`workbench.finetune.tasks.wsd.task.WsdTask.collate`:
    ``input_ids``, ``attention_mask`` ``(n_contexts, seq)``; ``word_positions``,
    ``word_segments``, ``word_weights`` (the pooling plan over the flattened contexts, one word
    per instance); ``gloss_input_ids``, ``gloss_attention_mask`` ``(n_glosses, width)``, the
    union of the batch's candidate glosses, longest first; ``candidates`` ``(n_instances,
    max_candidates)`` gloss rows (-1: padding) and ``gold`` (same shape, 1 for a gold sense).
    It returns ``(loss, scores (n_instances, max_candidates))``, padding scored ``-inf``.

    With ``below`` (the run's ``top_layers``: the number of frozen layers under the trained
    ones) a batch may carry the cached hidden states entering layer ``below``:
    ``context_hidden`` ``(n_contexts, seq, dim)`` and ``gloss_hidden`` ``(n_glosses, width,
    dim)``; then only the layers from ``below`` up run
    (:func:`~workbench.finetune.training.top_layers.top_states`).

    With ``freeze_glosses`` the gloss encoder keeps its weights (no gradient, always in eval
    mode) and a gloss vector, which then never changes, is computed once: the batch's
    ``gloss_rows`` (each gloss's row in the task's gloss table) name the glosses, and only
    those not seen before are encoded.
    """

    def __init__(
        self,
        encoder: nn.Module,
        gloss_encoder: nn.Module,
        pooling: str,
        gloss_batch_tokens: int = 0,
        freeze_glosses: bool = False,
        below: int | None = None,
        distil: tuple[float, float] = (0.0, 1.0),
    ) -> None:
        super().__init__()
        # knowledge distillation: the teacher's share of the loss and the temperature
        self.distil_weight, self.distil_temperature = float(distil[0]), float(distil[1])
        self.below = below  # frozen layers under the trained ones (None: every layer trains)
        self.encoder = encoder
        self.gloss_encoder = gloss_encoder
        self.pooling = pooling
        self.freeze_glosses = freeze_glosses
        self.gloss_cache: dict[int, torch.Tensor] = {}  # frozen glosses: table row -> vector
        if freeze_glosses:
            gloss_encoder.requires_grad_(False)
            gloss_encoder.eval()
        # padded tokens per gloss-encoder pass (0: by device, CPU_/GPU_GLOSS_BATCH_TOKENS)
        self.gloss_batch_tokens = int(gloss_batch_tokens)
        dims = {encoder_config(m).hidden_size for m in (encoder, gloss_encoder)}
        if len(dims) != 1:
            raise ModelLoadError(f"context and gloss encoders differ in width: {sorted(dims)}")

    def encode_contexts(self, batch: Batch, n_instances: int) -> torch.Tensor:
        """One pass of the context encoder over the batch's contexts: ``(n_instances, dim)``
        float32 target-word vectors (from ``context_hidden`` when the batch carries it)."""
        if "context_hidden" in batch and self.below is not None:
            hidden = top_states(
                self.encoder, batch["context_hidden"], batch["attention_mask"], self.below
            )
        else:
            hidden = self.encoder(**encoder_inputs(batch)).last_hidden_state
        return pool_targets(
            hidden,
            batch["word_positions"],
            batch["word_segments"],
            batch["word_weights"],
            n_instances,
        )

    def gloss_chunk_tokens(self, device: torch.device) -> int:
        """Padded tokens per gloss-encoder pass on ``device``: ``gloss_batch_tokens``, or by
        the device when it is 0."""
        if self.gloss_batch_tokens:
            return self.gloss_batch_tokens
        return CPU_GLOSS_BATCH_TOKENS if device.type == "cpu" else GPU_GLOSS_BATCH_TOKENS

    def encode_glosses(
        self, ids: torch.Tensor, mask: torch.Tensor, lower: torch.Tensor | None = None
    ) -> torch.Tensor:
        """Gloss vectors ``(n_glosses, dim)`` float32 of padded glosses sorted longest first,
        encoded in chunks of at most :meth:`gloss_chunk_tokens` padded tokens, each chunk
        trimmed to its own longest gloss; from ``lower`` (their cached hidden states entering
        layer ``below``, ``(n_glosses, width, dim)``) when given."""
        lengths = mask.sum(1).tolist()
        parts = []
        for start, stop in chunk_bounds(lengths, self.gloss_chunk_tokens(ids.device)):
            width = max(int(lengths[start]), 1)
            part_mask = mask[start:stop, :width]
            if lower is not None and self.below is not None:
                part = lower[start:stop, :width]
                hidden = top_states(self.gloss_encoder, part, part_mask, self.below)
            else:
                hidden = self.gloss_encoder(
                    input_ids=ids[start:stop, :width], attention_mask=part_mask
                ).last_hidden_state
            parts.append(pool_sequence(hidden, part_mask, self.pooling).float())
        return torch.cat(parts)

    @torch.no_grad()
    def frozen_glosses(
        self, rows: torch.Tensor, ids: torch.Tensor, mask: torch.Tensor
    ) -> torch.Tensor:
        """Gloss vectors of a frozen gloss encoder: those of the gloss table rows ``rows`` not
        seen before are encoded (``ids`` / ``mask`` sorted longest first, as in
        :meth:`encode_glosses`) and kept; the rest come from what was kept."""
        keys = rows.tolist()
        fresh = [j for j, r in enumerate(keys) if r not in self.gloss_cache]
        if fresh:
            pick = torch.tensor(fresh, device=ids.device)
            for j, vec in zip(fresh, self.encode_glosses(ids[pick], mask[pick]), strict=True):
                self.gloss_cache[keys[j]] = vec
        return torch.stack([self.gloss_cache[r] for r in keys])

    def train(self, mode: bool = True) -> BiEncoderModel:
        """As :meth:`torch.nn.Module.train`; a frozen gloss encoder stays in eval mode (no
        dropout), so each gloss has one vector."""
        super().train(mode)
        if self.freeze_glosses:
            self.gloss_encoder.eval()
        return self

    def forward(
        self,
        candidates: torch.Tensor,
        gold: torch.Tensor | None = None,
        weights: torch.Tensor | None = None,
        teacher: torch.Tensor | None = None,
        **batch: torch.Tensor,
    ) -> ModelOutput:
        """``(loss, scores (n_instances, max_candidates))``: the loss is the mean over
        instances of ``-log p(gold set)``, each instance's term times its ``weights`` entry
        when given (per-lemma reweighting). With ``teacher`` (a teacher's scores, the shape of
        ``scores``) an instance's term is ``(1 - w) * -log p(gold set) + w *``
        :func:`distillation_loss` (``w``, ``T``: the
        model's ``distil``)."""
        contexts = self.encode_contexts(batch, candidates.shape[0])
        ids, mask = batch["gloss_input_ids"], batch["gloss_attention_mask"]
        if self.freeze_glosses:
            glosses = self.frozen_glosses(batch["gloss_rows"], ids, mask)
        else:
            glosses = self.encode_glosses(ids, mask, batch.get("gloss_hidden"))
        scores = contexts @ glosses.T  # (n_instances, n_glosses)
        pad = candidates < 0
        picked = scores.gather(1, candidates.clamp(min=0)).masked_fill(pad, float("-inf"))
        loss = None
        if gold is not None:
            gold_scores = picked.masked_fill(gold <= 0, float("-inf"))
            each = picked.logsumexp(1) - gold_scores.logsumexp(1)
            if teacher is not None:
                w = self.distil_weight
                kd = distillation_loss(picked, teacher, pad, self.distil_temperature)
                each = (1.0 - w) * each + w * kd
            loss = (each * weights.to(each.dtype)).mean() if weights is not None else each.mean()
        return loss, picked
