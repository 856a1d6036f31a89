"""What trains in a task model: its transformers and their layers, freezing, LoRA adapters (new,
or continued from an adapter directory), parameters that get no gradient, and the optimizer's
parameter groups with layer-wise learning-rate decay.

Nothing here branches on a model's name or task: the transformers that train are given (a
task's :meth:`~workbench.finetune.tasks.base.Task.encoders`), their layers found as the
``nn.ModuleList`` whose length is ``config.num_hidden_layers``; a parameter's depth is 0 for the
embeddings, k for transformer layer k, and one above the top layer for the rest (the head).

Example::

    encoders = [model.encoder]               # what a plain task trains
    freeze(model, encoders, cfg)             # embeddings and the lowest layers, as cfg says
    optimizer = torch.optim.AdamW(param_groups(model, encoders, cfg))
    trainable, total = count_parameters(model)
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from torch import nn

from workbench.encoding.adapters import quiet_peft
from workbench.errors import InputError, ModelLoadError
from workbench.finetune.training.config import TrainConfig
from workbench.finetune.training.model_io import Batch, transformer_layers
from workbench.finetune.training.modeling import TaskModel


def layer_depths(model: TaskModel, encoders: Sequence[nn.Module]) -> dict[int, int]:
    """``id(parameter) -> depth`` over ``model``'s parameters: 0 embeddings, k for layer k
    (1-based) of one of its transformers ``encoders``, n_layers + 1 for everything above
    (final norms, pooler, the task head); the layers of several transformers (a bi-encoder's
    two) count alike."""
    depth: dict[int, int] = {}
    n = 0
    for encoder in encoders:
        layers = transformer_layers(encoder)
        n = max(n, len(layers))
        for k, layer in enumerate(layers, 1):
            for p in layer.parameters():
                depth[id(p)] = k
        for name, p in encoder.named_parameters():
            if id(p) not in depth:
                depth[id(p)] = 0 if "embed" in name else len(layers) + 1
    for p in model.parameters():
        depth.setdefault(id(p), n + 1)
    return depth


def frozen_depth(cfg: TrainConfig, n_layers: int, top_layers: int = 0) -> int:
    """How many of an encoder's ``n_layers`` lowest layers stay fixed: ``cfg.freeze_layers``,
    or all but the top ``top_layers`` (the larger; a task's
    :attr:`~workbench.finetune.tasks.base.Task.top_layers`).

    Raises:
        InputError: more layers than the model has.
    """
    if cfg.freeze_layers > n_layers:
        raise InputError(f"freeze_layers={cfg.freeze_layers}, but the model has {n_layers} layers.")
    if top_layers > n_layers:
        raise InputError(f"top_layers={top_layers}, but the model has {n_layers} layers.")
    return max(cfg.freeze_layers, n_layers - top_layers if top_layers else 0)


def freeze(
    model: TaskModel, encoders: Sequence[nn.Module], cfg: TrainConfig, top_layers: int = 0
) -> None:
    """Fix the embeddings (``freeze_embeddings``, or ``top_layers``) and the lowest
    :func:`frozen_depth` layers of each transformer of ``model`` in ``encoders``."""
    depth = layer_depths(model, encoders)
    for encoder in encoders:
        below = frozen_depth(cfg, len(transformer_layers(encoder)), top_layers)
        embeddings = cfg.freeze_embeddings or top_layers > 0
        for p in encoder.parameters():
            d = depth[id(p)]
            if (d == 0 and embeddings) or 1 <= d <= below:
                p.requires_grad_(False)


def lora_config(cfg: TrainConfig, n_layers: int | None = None, top_layers: int = 0) -> Any:
    """peft's ``LoraConfig`` of ``cfg`` (rank, alpha, dropout, target modules: peft picks
    them for the model type when ``lora_targets`` is empty); with ``top_layers`` only the top
    layers of an ``n_layers``-layer model get adapters."""
    from peft import LoraConfig

    targets = [t.strip() for t in cfg.lora_targets.split(",") if t.strip()] or None
    layers = None
    if top_layers and n_layers is not None:
        layers = list(range(frozen_depth(cfg, n_layers, top_layers), n_layers))
    return LoraConfig(
        r=cfg.lora_r,
        lora_alpha=cfg.lora_alpha,
        lora_dropout=cfg.lora_dropout,
        target_modules=targets,
        layers_to_transform=layers,
    )


def carries_adapters(encoder: nn.Module) -> bool:
    """Whether ``encoder`` is wrapped by peft (its adapters train, its base is frozen)."""
    return hasattr(encoder, "peft_config")


def check_continued(encoder: nn.Module, cfg: TrainConfig, where: str) -> None:
    """Refuse to continue adapters of another rank, scaling or target modules than ``cfg``
    asks for (they would train on under their own settings, not the ones the card records).

    Raises:
        InputError: naming the options to pass.
    """
    configs: dict[str, Any] = getattr(encoder, "peft_config")  # noqa: B009
    saved = next(iter(configs.values()))
    targets = sorted(saved.target_modules or [])
    asked = sorted(t.strip() for t in cfg.lora_targets.split(",") if t.strip())
    if saved.r != cfg.lora_r or saved.lora_alpha != cfg.lora_alpha or (asked and asked != targets):
        raise InputError(
            f"{where} holds LoRA adapters of rank {saved.r}, alpha {saved.lora_alpha} on "
            f"{','.join(targets)}; to go on training them pass --lora-r {saved.r} --lora-alpha "
            f"{saved.lora_alpha} --lora-targets {','.join(targets)} (or --lora-r 0 to fine-tune "
            "the merged model in full)."
        )


def add_lora(
    encoders: Sequence[nn.Module], cfg: TrainConfig, top_layers: int = 0
) -> list[nn.Module]:
    """The transformers ``encoders`` wrapped with LoRA adapters (the caller puts them in
    place, :meth:`~workbench.finetune.tasks.base.Task.set_encoder`): their base weights
    frozen, the adapters train. One that already carries adapters (a run continuing an adapter
    directory, :func:`~workbench.finetune.training.encoders.load_encoder`) is returned as it
    is, its adapters training on."""
    from peft import get_peft_model

    wrapped: list[nn.Module] = []
    for encoder in encoders:
        if carries_adapters(encoder):
            check_continued(encoder, cfg, "the base model's adapter directory")
            wrapped.append(encoder)
            continue
        try:
            with quiet_peft():
                n_layers = len(transformer_layers(encoder))
                wrapped.append(get_peft_model(encoder, lora_config(cfg, n_layers, top_layers)))
        except ValueError as exc:
            raise ModelLoadError(f"LoRA cannot be applied to this model: {exc}") from exc
    return wrapped


def param_groups(
    model: TaskModel, encoders: Sequence[nn.Module], cfg: TrainConfig
) -> list[dict[str, Any]]:
    """AdamW parameter groups of ``model`` (its transformers ``encoders``): per depth
    (:func:`layer_depths`), with and without weight decay.

    The learning rate of depth ``d`` is ``lr * layer_lr_decay ** (top - d)`` (the head and the
    top layer get ``lr``; the head gets ``head_lr`` if set). Biases and normalisation weights
    (1-D tensors) get no weight decay. Frozen parameters are left out.
    """
    depth = layer_depths(model, encoders)
    top = max(depth.values())
    head_ids = {id(p) for p in getattr(model, "head", nn.Module()).parameters()}
    groups: dict[tuple[int, bool, bool], list[nn.Parameter]] = {}
    for p in model.parameters():
        if p.requires_grad:
            key = (depth[id(p)], p.ndim >= 2, id(p) in head_ids)
            groups.setdefault(key, []).append(p)
    out: list[dict[str, Any]] = []
    for (d, decay, is_head), params in sorted(groups.items()):
        lr = cfg.lr * cfg.layer_lr_decay ** max(top - 1 - d, 0) if d < top else cfg.lr
        if is_head and cfg.head_lr is not None:
            lr = cfg.head_lr
        out.append({"params": params, "lr": lr, "weight_decay": cfg.weight_decay * decay})
    return out


def freeze_unused(model: TaskModel, batch: Batch) -> list[str]:
    """Fix the trainable parameters that get no gradient from this task (e.g. a pooler whose
    output no head reads), found with one forward/backward pass on ``batch``.

    Data-parallel training (DDP) refuses parameters without gradients, and they would only
    waste optimizer state. Returns their names.
    """
    model.zero_grad(set_to_none=True)
    loss, _ = model(**batch)
    loss.backward()
    unused = [n for n, p in model.named_parameters() if p.requires_grad and p.grad is None]
    for name, p in model.named_parameters():
        if name in unused:
            p.requires_grad_(False)
    model.zero_grad(set_to_none=True)
    return unused


def count_parameters(model: nn.Module) -> tuple[int, int]:
    """``(trainable, total)`` parameter counts."""
    total = sum(p.numel() for p in model.parameters())
    trainable = sum(p.numel() for p in model.parameters() if p.requires_grad)
    return trainable, total
