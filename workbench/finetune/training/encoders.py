"""The pretrained transformer a task model starts from (:func:`load_encoder`: float32, in train
mode, an adapter directory's adapters merged or training on), and transformers kept quiet while
it loads or saves one (:func:`quiet_transformers`).

Example::

    encoder = load_encoder(models.resolve_model(None))      # the packaged default, float32
    with quiet_transformers():
        encoder.save_pretrained(directory)
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import torch
from torch import nn

from workbench.encoding import adapters, models
from workbench.encoding.models import ModelSource


@contextmanager
def quiet_transformers() -> Iterator[None]:
    """Silence transformers' load reports and progress bars inside the block (the workbench
    reports what matters itself, e.g. that a masked-LM head is new)."""
    from transformers.utils import logging as hf_logging

    level, bar = hf_logging.get_verbosity(), hf_logging.is_progress_bar_enabled()
    hf_logging.set_verbosity_error()
    hf_logging.disable_progress_bar()
    try:
        yield
    finally:
        hf_logging.set_verbosity(level)
        if bar:
            hf_logging.enable_progress_bar()


def load_encoder(source: ModelSource, lora_r: int = 0) -> nn.Module:
    """The bare pretrained transformer of ``source`` (``AutoModel``), in train mode, its
    weights in float32 whatever the checkpoint stores (a float16 or bfloat16 checkpoint would
    otherwise train in that dtype: AdamW's updates vanish below its precision).

    An adapter directory (:mod:`workbench.encoding.adapters`) gives its base with the adapters
    merged in, or, for a LoRA run (``lora_r`` > 0), its base with the same adapters unmerged
    and training on (:func:`~workbench.finetune.training.parameters.check_continued` checks
    they are of the rank asked for), so the run's adapters stay relative to that base.
    """
    base = models.adapter_base(source)
    if lora_r and base is not None:
        model = models.load_model(base, torch.float32)
        record = adapters.read_base_record(source.location)
        adapters.check_base(
            Path(source.location), record, models.weights_fingerprint(base, model.config)
        )
        return adapters.load_adapter(model, Path(source.location), trainable=True).train()
    return models.load_model(source, torch.float32).train()
