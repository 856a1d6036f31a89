"""The options the WSD task's tests train a tiny random BERT with on a few dozen SemCor
sentences (each test file changes what it is about: epochs, ``top_layers``, LoRA)."""

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
