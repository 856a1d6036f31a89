"""Baselines that fine-tuning has to beat: the majority class and linear probes (logistic
regression) on *frozen* features of the base model.

* :func:`majority` - predict the training set's most frequent label.
* :func:`probe_sequence` - the same input the fine-tuned model sees (``[CLS] a [SEP] b [SEP]``
  for pairs), the frozen encoder's last-layer [CLS] (or mean) vector, logistic regression.
* :func:`probe_wic_targets` - word-in-context only: the frozen vectors ``u, v`` of the two
  target words (any layer spec, default the last layer), features ``[u, v, |u-v|, u*v]``.
* :func:`probe_tokens` - token tagging: each word's frozen vector, a logistic regression over
  the BIO tags, scored at the entity level like the fine-tuned tagger.

Every probe standardises the features (z-score fitted on train) and uses
``LogisticRegression(C=1.0, max_iter=2000)``, with ``random_state=seed``.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from workbench.encoding import models
from workbench.encoding.device import choose_device
from workbench.encoding.encoder import Encoder
from workbench.encoding.pooling import pool_sequence
from workbench.finetune.data.bio import entity_scores
from workbench.finetune.data.readers import DataFile
from workbench.finetune.data.wic import WicPair
from workbench.finetune.tasks.base import Task
from workbench.finetune.tasks.registry import make_task
from workbench.finetune.tasks.sequence import SequenceOptions
from workbench.finetune.training.config import TrainConfig
from workbench.finetune.training.model_io import encoder_inputs

if TYPE_CHECKING:
    from transformers import PreTrainedModel


@dataclass(frozen=True)
class BaselineResult:
    """One baseline's dev score.

    Attributes:
        name: what it is (``majority``, ``frozen-cls-probe``, ...).
        metric: the metric's name (``accuracy`` or ``f1``).
        value: the score on the dev data.
        details: other numbers (sizes, layer, time).
    """

    name: str
    metric: str
    value: float
    details: dict[str, Any]


def _probe(x_train: np.ndarray, y_train: np.ndarray, x_dev: np.ndarray, seed: int) -> np.ndarray:
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    clf = make_pipeline(
        StandardScaler(), LogisticRegression(C=1.0, max_iter=2000, random_state=seed)
    )
    clf.fit(x_train, y_train)
    return clf.predict(x_dev)


def majority(train: DataFile, dev: DataFile) -> BaselineResult:
    """Accuracy of always predicting the most frequent training label."""
    top, count = Counter(e.label for e in train.examples).most_common(1)[0]
    acc = float(np.mean([e.label == top for e in dev.examples]))
    return BaselineResult(
        "majority", "accuracy", acc, {"label": top, "train_share": count / len(train.examples)}
    )


def _pooled(
    task: Task, encoder: PreTrainedModel, data: DataFile, pooling: str
) -> tuple[np.ndarray, np.ndarray]:
    """Frozen last-layer vectors (n, dim) pooled by ``pooling`` and label ids (n,) of a
    sequence/pair task."""
    import torch

    feats = task.features(data, train=False)
    out, labels = [], []
    with torch.inference_mode():
        for i in range(0, len(feats.rows), task.cfg.eval_batch_size):
            batch = task.collate(feats.rows[i : i + task.cfg.eval_batch_size])
            labels.append(batch.pop("labels").numpy())
            batch = {k: v.to(encoder.device) for k, v in encoder_inputs(batch).items()}
            hidden = encoder(**batch).last_hidden_state
            pooled = pool_sequence(hidden, batch["attention_mask"], pooling)
            out.append(pooled.float().cpu().numpy())
    return np.concatenate(out), np.concatenate(labels)


def probe_sequence(
    kind: str,
    train: DataFile,
    dev: DataFile,
    cfg: TrainConfig,
    model: str | None = None,
    device: str | None = None,
    labels: tuple[str, ...] | None = None,
) -> BaselineResult:
    """Logistic regression on the frozen encoder's pooled vector of the task's own input."""
    import torch  # heavy: loaded when a probe runs

    source = models.resolve_model(model)
    task = make_task(kind, cfg, models.load_tokenizer(source), train, labels)
    task.check(train, dev)
    encoder = models.load_model(source, torch.float32)  # a half-precision checkpoint too
    torch.nn.Module.to(encoder, choose_device(device))  # in place
    options = task.options
    pooling = options.head_pooling if isinstance(options, SequenceOptions) else "cls"
    x_tr, y_tr = _pooled(task, encoder, train, pooling)
    x_dev, y_dev = _pooled(task, encoder, dev, pooling)
    pred = _probe(x_tr, y_tr, x_dev, cfg.seed)
    return BaselineResult(
        f"frozen-{pooling}-probe",
        "accuracy",
        float(np.mean(pred == y_dev)),
        {"n_train": len(y_tr), "n_dev": len(y_dev), "layer": "last"},
    )


def _target_features(encoder: Encoder, pairs: Sequence[WicPair], layer: str) -> np.ndarray:
    sents = [list(p.words_a) for p in pairs] + [list(p.words_b) for p in pairs]
    keep = [[p.index_a] for p in pairs] + [[p.index_b] for p in pairs]
    vecs = encoder.encode(sents, keep=keep, progress=False).select(layer)
    u, v = vecs[: len(pairs)], vecs[len(pairs) :]
    return np.concatenate([u, v, np.abs(u - v), u * v], axis=1)


def probe_wic_targets(
    train_pairs: Sequence[WicPair],
    dev_pairs: Sequence[WicPair],
    encoder: Encoder,
    layer: str = "-1",
    seed: int = 0,
) -> BaselineResult:
    """Logistic regression on ``[u, v, |u-v|, u*v]`` of the two frozen target-word vectors.

    Args:
        train_pairs, dev_pairs: :class:`workbench.finetune.data.wic.WicPair` sequences.
        encoder: a :class:`workbench.Encoder` (the base model).
        layer: a layer spec for :meth:`LayerwiseEmbeddings.select` (``"-1"``, ``"last4-sum"``).
    """
    x_tr = _target_features(encoder, train_pairs, layer)
    x_dev = _target_features(encoder, dev_pairs, layer)
    y_tr = np.array([p.label for p in train_pairs])
    y_dev = np.array([p.label for p in dev_pairs])
    pred = _probe(x_tr, y_tr, x_dev, seed)
    return BaselineResult(
        "frozen-target-probe",
        "accuracy",
        float(np.mean(pred == y_dev)),
        {
            "n_train": len(y_tr),
            "n_dev": len(y_dev),
            "layer": layer,
            "features": "[u, v, |u-v|, u*v]",
        },
    )


def probe_tokens(
    train: DataFile, dev: DataFile, encoder: Encoder, layer: str = "-1", seed: int = 0
) -> BaselineResult:
    """Per-word logistic regression over BIO tags on frozen word vectors; entity-level F1."""

    def vectors(data: DataFile) -> np.ndarray:
        return encoder.encode([list(s.words) for s in data.examples], progress=False).select(layer)

    y_tr = np.array([t for s in train.examples for t in s.tags])
    pred = _probe(vectors(train), y_tr, vectors(dev), seed)
    gold, out, i = [], [], 0
    for s in dev.examples:
        gold.append(list(s.tags))
        out.append([str(t) for t in pred[i : i + len(s.tags)]])
        i += len(s.tags)
    scores = entity_scores(gold, out)
    return BaselineResult(
        "frozen-word-probe",
        "f1",
        scores.f1,
        {
            "precision": scores.precision,
            "recall": scores.recall,
            "n_train_words": len(y_tr),
            "n_dev_words": i,
            "layer": layer,
        },
    )
