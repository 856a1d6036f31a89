"""Masked-LM domain adaptation on a user's plain text.

Texts are split into words (:func:`workbench.encoding.alignment.split_words`), tokenized,
concatenated, and cut into blocks of ``max_length`` tokens (special tokens included), as
HuggingFace's ``run_mlm`` does; word ids are kept so whole-word masking knows which subwords belong
together. Training batches are masked afresh in every epoch (seeded by ``seed`` and the epoch, so a
resumed run sees the same masks); the dev set is masked once with a fixed seed so its loss is
comparable between epochs. Metric: dev masked-token loss (lower is better); perplexity and
masked-token accuracy are reported too.

A model without a masked-LM head (the packaged default is a bare sentence encoder) gets a new,
randomly initialised one from ``AutoModelForMaskedLM``; the notes say so, and which weights.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

import numpy as np
import torch
from torch import nn

from workbench.bounds import Bound
from workbench.encoding.adapters import apply_adapter
from workbench.encoding.alignment import split_words
from workbench.encoding.models import ModelSource, adapter_base
from workbench.errors import ModelLoadError
from workbench.finetune.data.bio import IGNORE_INDEX
from workbench.finetune.data.readers import DataFile
from workbench.finetune.tasks.base import Features, Task, pad_batch, special_template
from workbench.finetune.tasks.kind import TaskKind
from workbench.finetune.tasks.masking import MaskingSpec, mask_tokens
from workbench.finetune.training.config import TaskOptions, option
from workbench.finetune.training.encoders import quiet_transformers
from workbench.finetune.training.model_io import Batch, ModelOutput, encoder_inputs
from workbench.finetune.training.modeling import TaskModel

if TYPE_CHECKING:
    from transformers import PreTrainedModel

DEV_MASK_SEED = 1_000_003  # added to the run's seed for the fixed dev masks


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


@dataclass(frozen=True)
class MlmOptions(TaskOptions):
    """The masked-LM task's options: which tokens are masked."""

    mlm_probability: float = option(
        0.15,
        "fraction of tokens chosen (80%% [MASK], 10%% random, 10%% kept)",
        Bound(low=0, high=1, low_open=True, high_open=True),
    )
    whole_word_mask: bool = option(False, "choose whole words instead of single subwords")


class MlmTask(Task):
    """Plain text -> masked-token prediction; metric: dev loss (lower is better)."""

    kind = "mlm"
    metric = "loss"
    greater_is_better = False
    Options = MlmOptions
    options: MlmOptions

    def spec(self) -> MaskingSpec:
        tok = self.tokenizer
        if tok.mask_token_id is None:
            raise ModelLoadError("This tokenizer has no [MASK] token: masked-LM is not possible.")
        return MaskingSpec(
            mask_token_id=tok.mask_token_id,
            vocab_size=len(tok),
            special_ids=tuple(sorted(set(tok.all_special_ids))),
            probability=self.options.mlm_probability,
            whole_word=self.options.whole_word_mask,
        )

    def _blocks(self, texts: tuple[str, ...]) -> list[tuple[list[int], list[int]]]:
        """Concatenated token ids cut into blocks, each with per-token word ids (0-based)."""
        words = [split_words(t) for t in texts]
        words = [w for w in words if w]
        enc = self.tokenizer(words, is_split_into_words=True, add_special_tokens=False)
        ids: list[int] = []
        wids: list[int] = []
        offset = 0
        for i in range(len(words)):
            row = enc.word_ids(i)
            ids.extend(enc["input_ids"][i])
            wids.extend(offset + w for w in row)
            offset += len(words[i])
        head, tail = special_template(self.tokenizer)
        size = self.cfg.max_length - len(head) - len(tail)
        blocks: list[tuple[list[int], list[int]]] = []
        for start in range(0, len(ids), size):
            block_w = wids[start : start + size]
            base = block_w[0]
            blocks.append((ids[start : start + size], [w - base for w in block_w]))
        return blocks

    def features(self, data: DataFile, train: bool) -> Features:
        head, tail = special_template(self.tokenizer)
        rows: list[dict[str, Any]] = []
        for ids, wids in self._blocks(data.examples):
            full = head + ids + tail
            word_ids = [-1] * len(head) + wids + [-1] * len(tail)
            rows.append(
                {"input_ids": full, "attention_mask": [1] * len(full), "word_ids": word_ids}
            )
        if not train:  # fixed dev masks
            gen = torch.Generator().manual_seed(self.cfg.seed + DEV_MASK_SEED)
            for row in rows:
                masked, labels = mask_tokens(
                    torch.tensor([row["input_ids"]]),
                    torch.tensor([row["word_ids"]]),
                    self.spec(),
                    gen,
                )
                row["input_ids"], row["labels"] = masked[0].tolist(), labels[0].tolist()
        n_tokens = sum(len(r["input_ids"]) for r in rows)
        notes = [
            f"{data.source}: {len(data.examples)} text line(s) -> {len(rows)} block(s) "
            f"of at most {self.cfg.max_length} tokens ({n_tokens} tokens)"
        ]
        return Features(rows, notes)

    def collate(self, rows: list[dict[str, Any]], gen: torch.Generator | None = None) -> Batch:
        batch = pad_batch(rows, self.tokenizer.pad_token_id or 0)
        word_ids = batch.pop("word_ids")
        if "labels" not in batch:
            if gen is None:
                raise ValueError("training batches need the epoch's generator for masking")
            batch["input_ids"], batch["labels"] = mask_tokens(
                batch["input_ids"], word_ids, self.spec(), gen
            )
        return batch

    def build_model(self, source: ModelSource) -> tuple[MaskedLMModel, list[str]]:
        from transformers import AutoModelForMaskedLM

        try:
            with quiet_transformers():  # the load report is replaced by the note below
                lm, info = AutoModelForMaskedLM.from_pretrained(
                    source.location, output_loading_info=True, dtype=torch.float32
                )  # float32 master weights whatever the checkpoint stores (see load_encoder)
        except (OSError, ValueError) as exc:
            raise ModelLoadError(
                f"Could not build a masked-LM model from '{source.name}': {exc}"
            ) from exc
        new = [k for k in info.get("missing_keys", []) if not k.startswith(lm.base_model_prefix)]
        notes = []
        if new:
            n_new = sum(p.numel() for n, p in lm.named_parameters() if n in set(new))
            notes.append(
                f"'{source.name}' has no masked-LM head: a NEW head was created and is trained "
                f"from scratch ({len(new)} tensors, {n_new:,} parameters: "
                f"{', '.join(sorted(new)[:4])}{' ...' if len(new) > 4 else ''}); its output "
                "layer shares the word embeddings."
            )
        lm.train()
        return MaskedLMModel(lm), notes

    def set_encoder(self, model: TaskModel, index: int, encoder: nn.Module) -> None:
        cast(MaskedLMModel, model).set_encoder(encoder)

    def head_state(self, model: TaskModel) -> dict[str, torch.Tensor]:
        """The LM head's weights, those it shares with the encoder (the tied word embeddings)
        left out."""
        lm = cast(MaskedLMModel, model)
        prefix = lm.lm.base_model_prefix + "."
        shared = {p.data_ptr() for p in lm.encoder.parameters()}
        items = lm.lm.state_dict().items()
        return {
            k: v.detach().cpu().contiguous().clone()
            for k, v in items
            if not k.startswith(prefix) and v.data_ptr() not in shared
        }

    @classmethod
    def load_model(
        cls,
        directory: Path,
        head: dict[str, Any],
        weights: dict[str, torch.Tensor],
        source: ModelSource,
    ) -> MaskedLMModel:
        from transformers import AutoModelForMaskedLM

        base = adapter_base(source)
        with quiet_transformers():  # it reports the head as missing; it is loaded next
            lm = AutoModelForMaskedLM.from_pretrained((base or source).location)
        model = MaskedLMModel(lm)
        if base is not None:
            model.set_encoder(apply_adapter(model.encoder, directory))
        model.lm.load_state_dict(weights, strict=False)
        return model

    def head_config(self) -> dict[str, Any]:
        return {
            "task": self.kind,
            "labels": None,
            "whole_word_mask": self.options.whole_word_mask,
            "mlm_probability": self.options.mlm_probability,
        }

    def predict(self, model: nn.Module, batch: Batch) -> tuple[torch.Tensor, ...]:
        labels = batch.pop("labels")
        _, logits = model(**batch)
        nll = nn.functional.cross_entropy(
            logits.float().transpose(1, 2), labels, ignore_index=IGNORE_INDEX, reduction="none"
        )
        return nll, logits.argmax(-1), labels

    def score(self, outputs: tuple[np.ndarray, ...], feats: Features) -> dict[str, float]:
        nll, pred, labels = outputs
        chosen = labels != IGNORE_INDEX
        n = int(chosen.sum())
        loss = float(nll[chosen].sum() / max(n, 1))
        acc = float((pred[chosen] == labels[chosen]).mean()) if n else 0.0
        return {
            "loss": loss,
            "perplexity": math.exp(min(loss, 50.0)),
            "accuracy": acc,
            "n_masked": float(n),
        }


#: The masked-LM domain adaptation task kind.
MLM = TaskKind(MlmTask, str, "masked-LM domain adaptation", "plain text, one text a line",
               baselines=False, labelled=False)  # fmt: skip
