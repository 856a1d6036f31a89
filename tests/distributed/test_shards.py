"""One shard written by a worker in this process: its files, record, row table and checks; the
manifest's settings check. No Ray here."""

from __future__ import annotations

import numpy as np
import pyarrow.parquet as pq
import pytest

from workbench.corpora.readers import read_xml
from workbench.distributed.config import ShardConfig
from workbench.distributed.inputs import plan_input
from workbench.distributed.shards import (
    check_settings,
    read_record,
    shard_paths,
    verify_shard,
)
from workbench.distributed.worker import ShardWorker, config_to_json, encode_part
from workbench.errors import DataError, MismatchError


@pytest.fixture()
def text_part(tmp_path):
    path = tmp_path / "in.txt"
    path.write_text("The bank raised rates.\n\nWe sat on the river bank.\n", encoding="utf-8")
    return plan_input(path, 0, 10, "text").parts[0]


def test_a_shard_holds_what_encode_gives(tiny_encoder, text_part, tmp_path):
    config = ShardConfig(layers=(0, 2), dtype="float16")
    record = encode_part(tiny_encoder, text_part, config, str(tmp_path))
    paths = shard_paths(tmp_path, text_part.name)
    assert read_record(paths.record) == record
    words = [
        ["The", "bank", "raised", "rates", "."],
        ["We", "sat", "on", "the", "river", "bank", "."],
    ]
    ref = tiny_encoder.encode(words, layers=[0, 2])
    vectors = np.load(paths.vectors, mmap_mode="r")
    assert vectors.dtype == np.float16 and vectors.shape == record.shape == (12, 2, 32)
    np.testing.assert_allclose(vectors, ref.vectors, atol=2e-3)  # float16 rounding
    table = pq.read_table(paths.table).to_pydict()
    assert table["word"] == [w for s in words for w in s]
    assert table["sentence_id"][:5] == ["in.l1"] * 5 and table["sentence_id"][5] == "in.l3"
    assert table["item"][5] == 2 and table["position"][5:7] == [0, 1]
    assert table["row"] == list(range(12)) and set(table["keys"]) == {""}
    assert (
        record.rows == 12 and record.sentences == 2 and not verify_shard(tmp_path, record, "sha256")
    )


def test_checks_find_damage(tiny_encoder, text_part, tmp_path):
    record = encode_part(tiny_encoder, text_part, ShardConfig(), str(tmp_path))
    paths = shard_paths(tmp_path, text_part.name)
    data = bytearray(paths.vectors.read_bytes())
    data[-3] ^= 0xFF  # same size, other content
    paths.vectors.write_bytes(bytes(data))
    assert verify_shard(tmp_path, record, "size") == ""
    assert "checksum" in verify_shard(tmp_path, record, "sha256")
    paths.table.write_bytes(paths.table.read_bytes()[:-10])
    assert "bytes" in verify_shard(tmp_path, record, "size")
    paths.vectors.unlink()
    assert "missing" in verify_shard(tmp_path, record, "size")


def test_instances_only_and_gold_keys(tiny_encoder, semcor200, tmp_path):
    part = plan_input(semcor200, 0, 20, "text").parts[0]
    record = encode_part(tiny_encoder, part, ShardConfig(keep="instances"), str(tmp_path))
    table = pq.read_table(shard_paths(tmp_path, part.name).table).to_pydict()
    corpus = read_xml(semcor200)
    instances = [i for s in corpus.sentences[:20] for i in s.instances]
    assert record.rows == len(instances) == len(table["row"])
    assert table["instance_id"] == [i.id for i in instances]
    assert table["keys"] == [" ".join(i.keys) for i in instances]
    assert table["lemma"] == [i.lemma for i in instances]


def test_worker_reports_errors_with_file_and_line(tiny_model_dir, tmp_path):
    path = tmp_path / "in.jsonl"
    path.write_text('{"text": "fine"}\n{"text": ["a", ""]}\n', encoding="utf-8")
    part = plan_input(path, 0, 10, "text").parts[0]
    config = ShardConfig(model=str(tiny_model_dir))
    worker = ShardWorker(config_to_json(config), str(tmp_path), "not-its-fingerprint", "cpu")
    result = worker({"part": [part.to_json()]})
    assert result["ok"] == [False] and "fingerprint" in result["error"][0]
    worker.failure = ""  # the right model now: the part's own error shows
    result = worker({"part": [part.to_json()]})
    assert result["ok"] == [False]
    assert f"{path}:2:" in result["error"][0] and "00000-000000" in result["error"][0]
    assert not shard_paths(tmp_path, part.name).record.exists()  # nothing half-made is visible
    assert list(tmp_path.glob(".shard-*")) == []


def test_settings_check_names_what_differs(tmp_path):
    check_settings(tmp_path, {"a": 1, "layers": [1]}, {"a": 1, "layers": [1]})
    with pytest.raises(MismatchError, match=r"fingerprint 'x' there, 'y' now"):
        check_settings(tmp_path, {"fingerprint": "x"}, {"fingerprint": "y"})


def test_empty_part_makes_an_empty_shard(tiny_encoder, tmp_path):
    path = tmp_path / "blank.txt"
    path.write_text("\n \n\n", encoding="utf-8")
    part = plan_input(path, 0, 10, "text").parts[0]
    record = encode_part(tiny_encoder, part, ShardConfig(), str(tmp_path))
    assert record.rows == 0 and record.shape == (0, 3, 32)
    assert np.load(shard_paths(tmp_path, part.name).vectors).shape == (0, 3, 32)


def test_unreadable_part_raises(tiny_encoder, text_part, tmp_path):
    text_part_path = tmp_path / "in.txt"
    text_part_path.unlink()
    with pytest.raises(DataError, match="file not found|cannot read"):
        encode_part(tiny_encoder, text_part, ShardConfig(), str(tmp_path))
