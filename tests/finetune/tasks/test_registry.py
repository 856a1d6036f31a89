"""The task-kind registry: one entry per kind, read by the CLI and the app; files by kind."""

from __future__ import annotations

import pytest

from workbench.errors import InputError
from workbench.finetune.data.readers import PairExample, TaggedSentence, TextExample, in_memory
from workbench.finetune.tasks.base import Task
from workbench.finetune.tasks.mlm import MlmOptions
from workbench.finetune.tasks.registry import TASKS, finetune, task_kind
from workbench.finetune.tasks.sequence import SequenceOptions
from workbench.finetune.tasks.token import TokenOptions
from workbench.finetune.tasks.wsd.options import WsdOptions
from workbench.finetune.training.config import TrainConfig


def test_every_kind_names_its_task_class_metric_and_format():
    assert list(TASKS) == ["seqcls", "pair", "token", "mlm", "wsd"]
    assert {name: kind.metric for name, kind in TASKS.items()} == {
        "seqcls": "accuracy", "pair": "accuracy", "token": "f1", "mlm": "loss", "wsd": "f1",
    }  # fmt: skip
    for name, kind in TASKS.items():
        assert issubclass(kind.task, Task) and kind.task.kind == name == kind.name
        assert kind.file_format and kind.file_format in kind.help
    assert [k.name for k in TASKS.values() if k.baselines] == ["seqcls", "pair", "token"]
    with pytest.raises(InputError, match="Unknown task 'ner'"):
        task_kind("ner")


def test_read_takes_each_kind_s_file_format(tmp_path):
    table = tmp_path / "t.csv"
    table.write_text("text,text_a,text_b,label\nhi,a,b,yes\nho,c,d,no\n", encoding="utf-8")
    conll = tmp_path / "t.conll"
    conll.write_text("Bank\tB-ORG\nfell\tO\n\nIt\tO\n", encoding="utf-8")
    plain = tmp_path / "t.txt"
    plain.write_text("one text\n\nanother\n", encoding="utf-8")
    assert TASKS["seqcls"].read(table).examples[0] == TextExample("hi", "yes")
    assert TASKS["pair"].read(table).examples[1] == PairExample("c", "d", "no")
    tagged = TASKS["token"].read(conll).examples
    assert tagged[0] == TaggedSentence(("Bank", "fell"), ("B-ORG", "O")) and len(tagged) == 2
    assert TASKS["mlm"].read(plain).examples == ("one text", "another")
    orphan = tmp_path / "o.conll"
    orphan.write_text("x\tI-ORG\n", encoding="utf-8")
    assert TASKS["token"].read(orphan, repair_bio=True).examples[0].tags == ("B-ORG",)


@pytest.mark.parametrize(
    ("kind", "options", "owners"),
    [
        ("seqcls", WsdOptions(freeze_glosses=True), ["wsd"]),
        ("pair", WsdOptions(gloss_max_length=32), ["wsd"]),
        ("token", MlmOptions(whole_word_mask=True), ["mlm"]),
        ("wsd", TokenOptions(label_mode="all"), ["token"]),
        ("mlm", SequenceOptions(head_pooling="mean"), ["seqcls", "pair"]),
    ],
)
def test_the_options_of_another_task_are_refused_by_name(kind, options, owners):
    cfg = TrainConfig(task=options)
    name = type(options).__name__
    with pytest.raises(InputError, match=f"The {kind} task takes .*Options, not {name}"):
        TASKS[kind].task.configure(cfg)
    for owner in owners:
        assert TASKS[owner].task.configure(cfg) is cfg  # the task that reads them takes them
    for kind_ in TASKS.values():  # no task options: the task's defaults
        assert TASKS[kind_.name].task.configure(TrainConfig()).task == kind_.task.Options()


def test_finetune_refuses_another_task_s_option_before_reading_the_model(tmp_path):
    train = in_memory([TextExample("good", "pos"), TextExample("bad", "neg")], "train")
    with pytest.raises(InputError, match="takes SequenceOptions, not WsdOptions"):
        finetune("seqcls", train, None, TrainConfig(task=WsdOptions(freeze_glosses=True)),
                 tmp_path / "run", model=str(tmp_path / "no-such-model"))  # fmt: skip
    assert not (tmp_path / "run").exists()
