"""The task-kind registry: one entry per kind, read by the CLI and the app; files by kind."""

from __future__ import annotations

import pytest

from workbench.errors import InputError
from workbench.finetune.data.readers import PairExample, TaggedSentence, TextExample, in_memory
from workbench.finetune.tasks.base import Task
from workbench.finetune.tasks.registry import TASKS, finetune, task_kind
from workbench.finetune.training.config import TASK_OPTIONS, TrainConfig


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
    ("kind", "changes", "flag"),
    [
        ("seqcls", {"freeze_glosses": True}, "--freeze-glosses"),
        ("pair", {"gloss_max_length": 32}, "--gloss-max-length"),
        ("token", {"whole_word_mask": True}, "--whole-word-mask"),
        ("wsd", {"label_mode": "all"}, "--label-mode"),
        ("mlm", {"wsd_index": "wordnet"}, "--wsd-index"),
    ],
)
def test_an_option_of_another_task_is_refused_by_name(kind, changes, flag):
    cfg = TrainConfig(**changes)
    with pytest.raises(InputError, match=f"{flag} .* not of {kind}"):
        cfg.check_task(kind)
    for owner in TASK_OPTIONS[next(iter(changes))]:
        cfg.check_task(owner)  # the task that reads it takes it
    for name in TASKS:
        TrainConfig().check_task(name)  # defaults are never refused


def test_finetune_refuses_another_task_s_option_before_reading_the_model(tmp_path):
    train = in_memory([TextExample("good", "pos"), TextExample("bad", "neg")], "train")
    with pytest.raises(InputError, match="--freeze-glosses"):
        finetune("seqcls", train, None, TrainConfig(freeze_glosses=True), tmp_path / "run",
                 model=str(tmp_path / "no-such-model"))  # fmt: skip
    assert not (tmp_path / "run").exists()
