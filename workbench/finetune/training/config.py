"""Typed, frozen configuration of a fine-tuning run (one dataclass, commented defaults)."""

from __future__ import annotations

from dataclasses import asdict, dataclass, replace
from typing import Any, Literal

from workbench.bounds import (
    COUNT,
    NON_NEGATIVE,
    NON_NEGATIVE_INT,
    POSITIVE,
    PROBABILITY,
    SEED,
    Bound,
)
from workbench.errors import InputError
from workbench.lexicon.glosses import GLOSS_TEXTS, GlossText

Precision = Literal["auto", "fp32", "bf16"]
LabelMode = Literal["first", "all"]
HeadPooling = Literal["cls", "mean"]
#: The glosses a WSD run encodes into the gloss cache after training: all of WordNet's, or
#: those of the test data's candidates.
WsdIndexScope = Literal["wordnet", "data"]


#: Options that only one task reads -> the task kinds that read them.
TASK_OPTIONS: dict[str, tuple[str, ...]] = {
    "label_mode": ("token",),
    "mlm_probability": ("mlm",),
    "whole_word_mask": ("mlm",),
    "gloss_text": ("wsd",),
    "gloss_max_length": ("wsd",),
    "wsd_index": ("wsd",),
    "freeze_glosses": ("wsd",),
    "top_layers": ("wsd",),
    "lemma_reweight": ("wsd",),
}


#: The range of every numeric option (checked in ``__post_init__`` and, from the same objects,
#: by the command line while it parses them): finite numbers, and these ends.
BOUNDS: dict[str, Bound] = {
    "epochs": COUNT,
    "batch_size": COUNT,
    "grad_accum": COUNT,
    "lr": POSITIVE,
    "head_lr": POSITIVE,
    "weight_decay": NON_NEGATIVE,
    "warmup_ratio": PROBABILITY,
    "max_grad_norm": NON_NEGATIVE,
    "freeze_layers": NON_NEGATIVE_INT,
    "layer_lr_decay": Bound(low=0, high=1, low_open=True),
    "lora_r": NON_NEGATIVE_INT,
    "lora_alpha": COUNT,
    "lora_dropout": PROBABILITY,
    "max_length": Bound(low=8, integer=True),
    "head_dropout": PROBABILITY,
    "mlm_probability": Bound(low=0, high=1, low_open=True, high_open=True),
    "gloss_max_length": Bound(low=4, integer=True),
    "gloss_batch_tokens": NON_NEGATIVE_INT,
    "top_layers": NON_NEGATIVE_INT,
    "lemma_reweight": NON_NEGATIVE,
    "early_stopping": NON_NEGATIVE_INT,
    "max_minutes": NON_NEGATIVE,
    "max_steps": NON_NEGATIVE_INT,
    "seed": SEED,
    "eval_batch_size": COUNT,
}


@dataclass(frozen=True)
class TrainConfig:
    """Options of one fine-tuning run.

    Example::

        cfg = TrainConfig(epochs=3, lr=5e-5, freeze_layers=2, layer_lr_decay=0.9)
    """

    # optimisation: AdamW with linear warm-up then linear decay to 0
    epochs: int = 3  # passes over the training set (an upper bound with early stopping)
    batch_size: int = 16  # examples per forward pass (per process under a multi-GPU launcher)
    grad_accum: int = 1  # forward passes per optimizer step (effective batch = batch_size * this)
    lr: float = 5e-5  # peak learning rate of the top layer and the head
    head_lr: float | None = None  # learning rate of the new head (None: lr)
    weight_decay: float = 0.01  # AdamW decoupled weight decay (not on biases and LayerNorms)
    warmup_ratio: float = 0.1  # fraction of optimizer steps spent warming up linearly from 0
    max_grad_norm: float = 1.0  # gradient clipping (0 disables)
    # which weights train
    freeze_embeddings: bool = False  # keep the embedding layer fixed
    freeze_layers: int = 0  # keep the lowest N transformer layers fixed
    layer_lr_decay: float = 1.0  # layer k from the top gets lr * decay**k (1.0: no decay)
    lora_r: int = 0  # LoRA rank (0: full fine-tuning); adapters are saved unmerged (PEFT format)
    lora_alpha: int = 16  # LoRA scaling numerator
    lora_dropout: float = 0.05  # dropout on the LoRA branch
    lora_targets: str = ""  # modules that get adapters, comma-separated ("": peft's default)
    # model inputs and head
    max_length: int = 256  # subword tokens per input, incl. special tokens
    head_pooling: HeadPooling = "cls"  # sequence heads (and wsd glosses) read [CLS] or the mean
    head_dropout: float = 0.1  # dropout before the classification layer
    label_mode: LabelMode = "first"  # token task: label on first subword only, or on all
    mlm_probability: float = 0.15  # MLM: fraction of tokens chosen
    whole_word_mask: bool = False  # MLM: choose whole words instead of single subwords
    gloss_text: GlossText = "definition"  # wsd: what the gloss encoder reads for a sense
    gloss_max_length: int = 48  # wsd: subword tokens per gloss, incl. special tokens
    freeze_glosses: bool = False  # wsd: keep the gloss encoder at its base weights (tasks.wsd)
    gloss_batch_tokens: int = 0  # wsd: padded tokens per gloss-encoder pass (0: by device)
    wsd_index: WsdIndexScope = "data"  # wsd: glosses cached after training: all, or test data's
    top_layers: int = 0  # wsd: train only the top N layers of both encoders, from their lower
    # layers' outputs computed once and cached on disk (0: every layer trains)
    lemma_reweight: float = 0.0  # wsd: Z-reweighting's gamma (Su et al. 2022; tasks/wsd/task.py
    # z_weights; 0: every instance weighs 1)
    # run control
    precision: Precision = "auto"  # auto: bf16 autocast where the device has bf16, else fp32
    early_stopping: int = 0  # stop after N epochs without dev improvement (0: never)
    max_minutes: float = 0.0  # stop training after this many minutes of it (0: no limit)
    max_steps: int = 0  # stop training after this many optimizer steps in all (0: no limit)
    seed: int = 0  # seeds Python, NumPy, torch, the shuffling and the MLM masks
    eval_batch_size: int = 64  # examples per forward pass at evaluation
    device: str | None = None  # None: whatever accelerate picks (cuda if present)

    def __post_init__(self) -> None:
        for name, bound in BOUNDS.items():  # NaN, infinities and values out of range
            value = getattr(self, name)
            if not (value is None and name == "head_lr") and not bound.accepts(value):
                raise InputError(f"Bad training option: {name} must be {bound.describe()}, "
                                 f"not {value!r}.")  # fmt: skip
        checks = [
            (
                all(t.strip().replace("_", "").isalnum() for t in self.lora_targets.split(","))
                or not self.lora_targets,
                "lora_targets must be module names separated by commas (e.g. query,value)",
            ),
            (self.precision in ("auto", "fp32", "bf16"), "precision must be auto, fp32 or bf16"),
            (self.label_mode in ("first", "all"), "label_mode must be 'first' or 'all'"),
            (self.head_pooling in ("cls", "mean"), "head_pooling must be 'cls' or 'mean'"),
            (self.gloss_text in GLOSS_TEXTS, f"gloss_text must be one of {', '.join(GLOSS_TEXTS)}"),
            (self.wsd_index in ("wordnet", "data"), "wsd_index must be 'wordnet' or 'data'"),
        ]
        for ok, message in checks:
            if not ok:
                raise InputError(f"Bad training option: {message}.")

    def check_task(self, kind: str) -> None:
        """Raise :class:`InputError` if an option of another task (:data:`TASK_OPTIONS`) is
        set away from its default for the task ``kind``, where it would do nothing."""
        for name, kinds in TASK_OPTIONS.items():
            value = getattr(self, name)
            if kind not in kinds and value != TrainConfig.__dataclass_fields__[name].default:
                flag = "--" + name.replace("_", "-")
                raise InputError(
                    f"{flag} ({name}={value!r}) is an option of the {' and '.join(kinds)} "
                    f"task, not of {kind}: it would change nothing. Leave it out."
                )

    def to_dict(self) -> dict[str, Any]:
        """Plain dict (for the training card)."""
        return asdict(self)

    def replace(self, **changes: Any) -> TrainConfig:
        """A copy with some options changed."""
        return replace(self, **changes)
