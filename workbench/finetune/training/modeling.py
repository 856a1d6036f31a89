"""Task models: a pretrained encoder plus a small new head, and the WSD bi-encoder.

Every task model has an ``encoder`` attribute (the ``AutoModel``-style transformer, possibly
wrapped by peft's LoRA) and a ``head``, except the WSD bi-encoder, whose second transformer, the
``gloss_encoder``, takes the head's place
(:func:`workbench.finetune.training.parameters.task_encoders` lists a model's transformers);
``forward(**batch)`` returns ``(loss, logits)``. Which of their
parameters train, and at which learning rate, is :mod:`workbench.finetune.training.parameters`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, TypeAlias

import torch
from torch import nn

from workbench.encoding.pooling import pool_sequence
from workbench.errors import ModelLoadError
from workbench.finetune.data.bio import IGNORE_INDEX

if TYPE_CHECKING:
    from transformers import PretrainedConfig, PreTrainedModel

MODEL_INPUTS = ("input_ids", "attention_mask", "token_type_ids")
#: Padded tokens per gloss-encoder pass when ``gloss_batch_tokens`` is 0 (auto): on a CPU small
#: chunks of similar length pad little and train fastest (docs/benchmarks.md, "Fine-tuning");
#: on a GPU each pass costs its kernel launches, and a step's gloss union (about 10,000 tokens
#: at 32 sentences a batch) in 1,024-token chunks is a dozen small passes each way: there it
#: goes in one or two.
CPU_GLOSS_BATCH_TOKENS = 1024
GPU_GLOSS_BATCH_TOKENS = 16384

#: A padded batch: ``{key: tensor (batch, seq) or (batch,)}``.
Batch: TypeAlias = dict[str, torch.Tensor]
#: What a task model's ``forward(**batch)`` returns: ``(loss or None without labels, logits)``.
ModelOutput: TypeAlias = tuple[torch.Tensor | None, torch.Tensor]


def encoder_inputs(batch: Batch) -> Batch:
    """The subset of a batch the transformer takes."""
    return {k: v for k, v in batch.items() if k in MODEL_INPUTS}


def encoder_config(encoder: nn.Module) -> PretrainedConfig:
    """The ``transformers`` config of an encoder (an ``AutoModel``, possibly LoRA-wrapped)."""
    config = getattr(encoder, "config", None)
    if config is None:
        raise ModelLoadError(
            f"{type(encoder).__name__} has no transformers config: a task model needs an "
            "AutoModel-style encoder."
        )
    return config


class ClassificationHead(nn.Module):
    """Dropout + linear layer over one vector per input: (batch, dim) -> (batch, n_labels)."""

    def __init__(self, dim: int, n_labels: int, dropout: float) -> None:
        super().__init__()
        self.dropout = nn.Dropout(dropout)
        self.out = nn.Linear(dim, n_labels)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.out(self.dropout(x))


class SequenceModel(nn.Module):
    """Encoder + classification head on the [CLS] (or mean) vector; cross-entropy loss.

    Serves both sequence classification and sentence-pair classification (the pair is one
    input, ``[CLS] a [SEP] b [SEP]``).
    """

    def __init__(self, encoder: nn.Module, n_labels: int, pooling: str, dropout: float) -> None:
        super().__init__()
        self.encoder = encoder
        self.head = ClassificationHead(encoder_config(encoder).hidden_size, n_labels, dropout)
        self.pooling = pooling

    def forward(self, labels: torch.Tensor | None = None, **batch: torch.Tensor) -> ModelOutput:
        hidden = self.encoder(**encoder_inputs(batch)).last_hidden_state
        logits = self.head(pool_sequence(hidden, batch["attention_mask"], self.pooling))
        loss = nn.functional.cross_entropy(logits.float(), labels) if labels is not None else None
        return loss, logits


class TokenModel(nn.Module):
    """Encoder + per-token linear head; cross-entropy over tokens whose label is not -100."""

    def __init__(self, encoder: nn.Module, n_labels: int, dropout: float) -> None:
        super().__init__()
        self.encoder = encoder
        self.head = ClassificationHead(encoder_config(encoder).hidden_size, n_labels, dropout)

    def forward(self, labels: torch.Tensor | None = None, **batch: torch.Tensor) -> ModelOutput:
        hidden = self.encoder(**encoder_inputs(batch)).last_hidden_state
        logits = self.head(hidden)
        loss = None
        if labels is not None:
            loss = nn.functional.cross_entropy(
                logits.float().flatten(0, 1), labels.flatten(), ignore_index=IGNORE_INDEX
            )
        return loss, logits


class MaskedLMModel(nn.Module):
    """Wraps an ``AutoModelForMaskedLM``; ``encoder`` is its base transformer."""

    def __init__(self, lm: PreTrainedModel) -> None:
        super().__init__()
        self.lm = lm

    @property
    def encoder(self) -> nn.Module:
        return getattr(self.lm, self.lm.base_model_prefix)

    def set_encoder(self, encoder: nn.Module) -> None:
        setattr(self.lm, self.lm.base_model_prefix, encoder)

    def forward(self, labels: torch.Tensor | None = None, **batch: torch.Tensor) -> ModelOutput:
        out = self.lm(**encoder_inputs(batch))
        loss = None
        if labels is not None:
            loss = nn.functional.cross_entropy(
                out.logits.float().flatten(0, 1), labels.flatten(), ignore_index=IGNORE_INDEX
            )
        return loss, out.logits


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
    ) -> None:
        super().__init__()
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
        float32 target-word vectors."""
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

    def encode_glosses(self, ids: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        """Gloss vectors ``(n_glosses, dim)`` float32 of padded glosses sorted longest first,
        encoded in chunks of at most :meth:`gloss_chunk_tokens` padded tokens, each chunk
        trimmed to its own longest gloss."""
        lengths = mask.sum(1).tolist()
        parts = []
        for start, stop in chunk_bounds(lengths, self.gloss_chunk_tokens(ids.device)):
            width = max(int(lengths[start]), 1)
            part_mask = mask[start:stop, :width]
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
        **batch: torch.Tensor,
    ) -> ModelOutput:
        contexts = self.encode_contexts(batch, candidates.shape[0])
        ids, mask = batch["gloss_input_ids"], batch["gloss_attention_mask"]
        if self.freeze_glosses:
            glosses = self.frozen_glosses(batch["gloss_rows"], ids, mask)
        else:
            glosses = self.encode_glosses(ids, mask)
        scores = contexts @ glosses.T  # (n_instances, n_glosses)
        pad = candidates < 0
        picked = scores.gather(1, candidates.clamp(min=0)).masked_fill(pad, float("-inf"))
        loss = None
        if gold is not None:
            gold_scores = picked.masked_fill(gold <= 0, float("-inf"))
            loss = (picked.logsumexp(1) - gold_scores.logsumexp(1)).mean()
        return loss, picked


#: A task model: an ``encoder`` (the transformer) under a new head, or the WSD bi-encoder.
TaskModel: TypeAlias = SequenceModel | TokenModel | MaskedLMModel | BiEncoderModel
