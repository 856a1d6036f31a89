"""The options the WSD task's tests train a tiny random BERT with on a few dozen SemCor
sentences (each test file changes what it is about: epochs, ``top_layers``, LoRA), and the task
made with them."""

from pathlib import Path
from typing import Any

from workbench.encoding import models
from workbench.finetune.data.readers import DataFile
from workbench.finetune.tasks.registry import make_task
from workbench.finetune.tasks.wsd.options import WsdOptions
from workbench.finetune.training.config import TrainConfig

TINY_WSD = TrainConfig(
    epochs=1,
    lr=1e-3,
    batch_size=4,
    max_length=64,
    seed=1,
    task=WsdOptions(gloss_max_length=24, head_pooling="mean", wsd_index="data"),
)


def tiny_task(model_dir: Path, cfg: TrainConfig, train: DataFile) -> Any:
    """The WSD task of ``cfg`` on the model in ``model_dir`` (its tokenizer), for ``train``."""
    source = models.resolve_model(str(model_dir))
    return make_task("wsd", cfg, models.load_tokenizer(source), train)
