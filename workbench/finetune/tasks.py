"""The fine-tuning task kinds, and one call that fine-tunes a model on one of them.

Example::

    from workbench.finetune.config import TrainConfig
    from workbench.finetune.data import read_table
    from workbench.finetune.tasks import finetune
    train, dev = read_table("train.csv", pair=True), read_table("dev.csv", pair=True)
    result = finetune("pair", train, dev, TrainConfig(epochs=2), "runs/pair")
    Encoder(model="runs/pair")          # analyse the fine-tuned encoder
"""

from __future__ import annotations

from workbench.encoding import models
from workbench.errors import InputError
from workbench.finetune.config import TrainConfig
from workbench.finetune.data import DataFile, LabelSet, PairExample, TaggedSentence, TextExample
from workbench.finetune.loop import fit
from workbench.finetune.mlm import MlmTask
from workbench.finetune.pair import PairTask
from workbench.finetune.sequence import SequenceTask
from workbench.finetune.token import TokenTask

TASK_KINDS = ("seqcls", "pair", "token", "mlm")


def make_task(
    kind: str, cfg: TrainConfig, tokenizer, train: DataFile, labels: tuple[str, ...] | None = None
):
    """The task object of ``kind``; its label set is ``labels`` if given (a built-in task's
    full label set, so a small subset may lack some), else the labels found in ``train``."""

    classes = {"seqcls": SequenceTask, "pair": PairTask, "token": TokenTask, "mlm": MlmTask}
    if kind not in classes:
        raise InputError(f"Unknown task '{kind}': choose one of {', '.join(TASK_KINDS)}.")
    _check_kind(kind, train)
    found = None if kind == "mlm" else LabelSet.from_examples(train.examples)
    if found is not None and labels is not None:
        found = LabelSet(tuple(labels))
        found.check(train.examples, train.source)  # the given set must cover train
    return classes[kind](cfg, tokenizer, found)


def _check_kind(kind: str, data: DataFile) -> None:
    expected = {"seqcls": TextExample, "pair": PairExample, "token": TaggedSentence, "mlm": str}
    if not all(isinstance(e, expected[kind]) for e in data.examples):
        found = type(data.examples[0]).__name__
        raise InputError(
            f"Task '{kind}' needs {expected[kind].__name__} examples, but "
            f"{data.source} holds {found} ones."
        )


def finetune(
    kind: str,
    train: DataFile,
    dev: DataFile | None,
    cfg: TrainConfig,
    output,
    model: str | None = None,
    labels: tuple[str, ...] | None = None,
    **kwargs,
):
    """Fine-tune ``model`` (None: the packaged default) on a task; see :func:`.loop.fit`.

    Args:
        kind: ``seqcls``, ``pair``, ``token`` or ``mlm``.
        train, dev: data (:func:`read_table`, :func:`read_conll`, :func:`read_text`, or a
            built-in task); dev labels must all occur in train.
        cfg: the options.
        output: the model directory to write.
        model: base model name or directory.
        labels: the label set (default: the labels of ``train``).
        **kwargs: ``resume``, ``overwrite``, ``progress``, ``callback``, ``keep_checkpoint``.

    Returns:
        :class:`workbench.finetune.loop.FitResult`.
    """
    source = models.resolve_model(model)
    tokenizer = models.load_tokenizer(source)
    task = make_task(kind, cfg, tokenizer, train, labels)
    if dev is not None:
        _check_kind(kind, dev)
    return fit(task, source, train, dev, output, **kwargs)
