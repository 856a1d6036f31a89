"""The sharded extraction job on a local Ray (2 CPUs, one for the package): the same vectors and
rows as ``Encoder.encode``, resumption after a killed driver, damaged shards, bad inputs.

Each job's actors import torch and transformers and load the model (seconds of CPU each): the
SemCor job runs the default pool of 2 (one per CPU), the tests of other mechanics run 1 actor."""

from __future__ import annotations

import json
import lzma
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import numpy as np
import pyarrow.compute as pc
import pytest

from workbench.corpora.readers import read_text, read_xml
from workbench.distributed.config import ClusterConfig, ShardConfig
from workbench.distributed.jobs import embed_shards
from workbench.distributed.reader import ShardedEmbeddings
from workbench.distributed.shards import MANIFEST, read_manifest, shard_paths
from workbench.errors import DataError, InputError, MismatchError

REPO = Path(__file__).resolve().parents[2]


#: One actor: enough for the tests of resuming, refusing and reporting (not of the pool's size).
ONE = ClusterConfig(workers=1)


def config_for(model_dir, **kw) -> ShardConfig:
    return ShardConfig(model=str(model_dir), **kw)


def write_lines(path: Path, n: int) -> Path:
    words = ["bank", "river", "rate", "money", "water", "the", "on", "sat", "rose", "."]
    rng = np.random.default_rng(n)
    lines = [" ".join(rng.choice(words, size=3 + i % 9)) if i % 13 else "" for i in range(n)]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def test_shards_equal_encode_on_semcor(semcor_job, tiny_encoder, semcor200):
    result = semcor_job  # semcor200 in shards of 60 sentences, 2 workers (conftest)
    assert result.computed == 4 and result.skipped == 0 and result.manifest.complete
    corpus = read_xml(semcor200)
    ref = tiny_encoder.encode([list(s.words) for s in corpus.sentences])
    shards = ShardedEmbeddings(result.directory)
    emb = shards.to_embeddings()
    assert emb.vectors.shape == ref.vectors.shape == (len(ref), 3, 32)
    assert np.abs(emb.vectors - ref.vectors).max() < 1e-5
    assert emb.words == ref.words
    np.testing.assert_array_equal(emb.sentence_index, ref.sentence_index)
    np.testing.assert_array_equal(emb.word_index, ref.word_index)
    np.testing.assert_array_equal(emb.spans, ref.spans)
    table = shards.table(columns=["sentence_id", "lemma", "pos", "keys"])
    flat = [(s, i) for s in corpus.sentences for i in range(len(s.words))]
    assert table.column("sentence_id").to_pylist() == [s.id for s, _ in flat]
    assert table.column("lemma").to_pylist() == [s.lemmas[i] for s, i in flat]
    gold = {(s.id, x.index): " ".join(x.keys) for s in corpus.sentences for x in s.instances}
    assert table.column("keys").to_pylist() == [gold.get((s.id, i), "") for s, i in flat]
    bank = shards.table(filter=pc.field("lemma") == "jury")  # filter rows, then their vectors
    rows = np.flatnonzero(np.array([s.lemmas[i] == "jury" for s, i in flat]))
    assert len(bank) == len(rows) > 0
    np.testing.assert_array_equal(shards.gather(bank), emb.vectors[rows])
    assert shards.verify() == []


def test_text_jsonl_and_parquet_in_one_job(ray_address, tiny_encoder, tiny_model_dir, tmp_path):
    import pyarrow as pa
    import pyarrow.parquet as pq

    text = write_lines(tmp_path / "a.txt", 50)
    jsonl = tmp_path / "b.jsonl"
    jsonl.write_text("".join(json.dumps({"body": f"line {i} of the bank"}) + "\n"
                             for i in range(30)), encoding="utf-8")  # fmt: skip
    parquet = tmp_path / "c.parquet"
    pq.write_table(pa.table({"body": [f"row {i} by the river" for i in range(25)]}), parquet)
    config = config_for(tiny_model_dir, shard_size=16, text_column="body", layers=(-1,),
                        dtype="float16")  # fmt: skip
    result = embed_shards([text, jsonl, parquet], tmp_path / "out", config, ONE, progress=False)
    assert result.computed == 4 + 2 + 2
    sentences = [list(s.words) for s in read_text(text).sentences]
    sentences += [f"line {i} of the bank".split() for i in range(30)]
    sentences += [f"row {i} by the river".split() for i in range(25)]
    ref = tiny_encoder.encode(sentences, layers=[2])
    emb = ShardedEmbeddings(tmp_path / "out").to_embeddings()
    assert emb.vectors.dtype == np.float16 and emb.layers == (2,)
    assert emb.words == ref.words
    np.testing.assert_allclose(emb.vectors, ref.vectors, atol=2e-3)


def test_resume_after_the_driver_is_killed(ray_address, tiny_encoder, tiny_model_dir, tmp_path):
    source = write_lines(tmp_path / "big.txt", 600)
    out = tmp_path / "out"
    script = (
        "import sys\n"
        "from workbench.distributed.config import ClusterConfig, ShardConfig\n"
        "from workbench.distributed.jobs import embed_shards\n"
        f"embed_shards([{str(source)!r}], {str(out)!r}, ShardConfig(model={str(tiny_model_dir)!r},"
        f" shard_size=10), ClusterConfig(address={ray_address!r}, workers=1), progress=False)\n"
    )
    env = dict(os.environ, RAY_AUTH_MODE=os.environ.get("RAY_AUTH_MODE", "token"))
    driver = subprocess.Popen([sys.executable, "-c", script], cwd=REPO, env=env,
                              stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)  # fmt: skip
    deadline = time.monotonic() + 240
    while len(list(out.glob("shard-*.json"))) < 3:
        assert driver.poll() is None, driver.stderr.read().decode()[-2000:]
        assert time.monotonic() < deadline, "no shard appeared"
        time.sleep(0.2)
    os.kill(driver.pid, signal.SIGKILL)  # the driver dies mid-job
    driver.wait()
    driver.stderr.close()
    before = read_manifest(out)
    assert before is not None and not before.complete
    done_before = len(list(out.glob("shard-*.json")))
    assert 3 <= done_before < 60
    result = embed_shards([source], out, config_for(tiny_model_dir, shard_size=10), ONE,
                          progress=False)  # fmt: skip
    assert result.manifest.complete and len(result.manifest.shards) == 60
    assert result.skipped >= 3 and result.computed + result.skipped == 60
    assert list(out.glob(".shard-*")) == []  # no temporary left behind
    shards = ShardedEmbeddings(out)
    table = shards.table(columns=["sentence_id", "position"])
    pairs = list(zip(table.column("sentence_id").to_pylist(), table.column("position").to_pylist()))
    corpus = read_text(source)
    assert len(pairs) == len(set(pairs)) == corpus.n_tokens  # every row exactly once
    ref = tiny_encoder.encode([list(s.words) for s in corpus.sentences])
    assert np.abs(shards.to_embeddings().vectors - ref.vectors).max() < 1e-5


def descendants(pid: int) -> list[int]:
    """Every process below ``pid`` (Ray's local processes and workers are this test's)."""
    parent = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        parent[int(stat.parent.name)] = int(fields[1])
    found, frontier = [], [pid]
    while frontier:
        children = [p for p, pp in parent.items() if pp in frontier]
        found += children
        frontier = children
    return found


def test_a_killed_worker_loses_only_its_part(ray_address, tiny_encoder, tiny_model_dir, tmp_path):
    source = write_lines(tmp_path / "in.txt", 300)
    out = tmp_path / "out"
    box: dict = {}

    def job():
        try:
            box["result"] = embed_shards([source], out, config_for(tiny_model_dir, shard_size=10),
                                         ClusterConfig(workers=1), progress=False)  # fmt: skip
        except Exception as exc:  # reported by the test's thread below
            box["error"] = exc

    thread = threading.Thread(target=job)
    thread.start()
    deadline = time.monotonic() + 240
    while len(list(out.glob("shard-*.json"))) < 2:
        assert thread.is_alive() and time.monotonic() < deadline, box
        time.sleep(0.1)
    actors = []
    for pid in descendants(os.getpid()):
        try:
            if b"ShardWorker" in Path(f"/proc/{pid}/cmdline").read_bytes():
                actors.append(pid)
        except OSError:
            continue
    assert actors, "no actor process found"
    for pid in actors:
        os.kill(pid, signal.SIGKILL)  # the actor dies mid-job; Ray Data restarts it
    # what a worker killed during a write leaves (whether this kill landed in one is chance)
    (out / f".shard-00000-000029.parquet.vm-{actors[0]}-0badf00d.tmp.parquet").write_bytes(b"PAR1")
    thread.join(timeout=400)
    assert "error" not in box, box.get("error")
    result = box["result"]
    assert result.manifest.complete and result.failed == 0 and len(result.manifest.shards) == 30
    assert list(out.glob(".shard-*")) == []
    table = ShardedEmbeddings(out).table(columns=["sentence_id", "position"])
    pairs = list(zip(table.column("sentence_id").to_pylist(), table.column("position").to_pylist()))
    assert len(pairs) == len(set(pairs)) == read_text(source).n_tokens


def test_damaged_shards_are_found_and_recomputed(ray_address, tiny_model_dir, tmp_path):
    source = write_lines(tmp_path / "in.txt", 60)
    config = config_for(tiny_model_dir, shard_size=10)
    seen = []

    def report(p):
        seen.append((p.done_shards, p.done_items, p.total_items, p.rows, p.eta_seconds, p.line()))

    first = embed_shards([source], tmp_path / "out", config, ONE, progress=report)
    assert [s[0] for s in seen] == [1, 2, 3, 4, 5, 6]  # progress of the whole job, shard by shard
    done, items, total, rows, eta, line = seen[-1]
    assert items == total == 60 and eta == 0
    assert rows == read_text(source).n_tokens and "rows/s" in line and "ETA 0:00:00" in line
    before = ShardedEmbeddings(tmp_path / "out").to_embeddings().vectors
    names = [r.name for r in first.manifest.shards]
    damaged = shard_paths(tmp_path / "out", names[1]).vectors
    data = bytearray(damaged.read_bytes())
    data[-1] ^= 0x55  # bit rot: same size, other bytes
    damaged.write_bytes(bytes(data))
    assert ShardedEmbeddings(tmp_path / "out").verify() == [
        f"shard {names[1]}: {damaged.name} does not match its checksum (corrupted)"
    ]
    shard_paths(tmp_path / "out", names[4]).table.unlink()
    second = embed_shards([source], tmp_path / "out", config, ONE, progress=False)
    assert (second.computed, second.skipped) == (2, 4)
    shards = ShardedEmbeddings(tmp_path / "out")
    assert shards.verify() == []
    np.testing.assert_array_equal(shards.to_embeddings().vectors, before)


def test_bad_inputs_are_named_and_the_rest_is_kept(ray_address, tiny_model_dir, tmp_path):
    good = [write_lines(tmp_path / f"good{i}.txt", 30) for i in range(2)]
    xml = tmp_path / "broken.data.xml"
    xml.write_text('<?xml version="1.0"?>\n<corpus>\n<text id="d0">\n<sentence id="d0.s0">\n'
                   "<wf>ok</wf>\n<wf>unclosed\n</sentence>\n</text>\n</corpus>\n")  # fmt: skip
    unreadable = tmp_path / "archive.txt.xz"
    unreadable.write_bytes(b"\xfd7zXZ\x00 not really xz")
    notutf8 = tmp_path / "latin1.txt"
    notutf8.write_bytes("caf\u00e9 ok\n".encode() + "na\u00efve\n".encode("latin-1"))
    inputs = [good[0], xml, unreadable, good[1], notutf8]
    config = config_for(tiny_model_dir, shard_size=10)
    with pytest.raises(DataError) as info:
        embed_shards(inputs, tmp_path / "out", config, ONE, progress=False)
    message = str(info.value)
    assert f"{xml}:7: malformed XML" in message
    assert f"{unreadable}: cannot read" in message
    assert f"{notutf8}:2: not UTF-8" in message and "shard 00004-000000" in message
    manifest = read_manifest(tmp_path / "out")
    assert manifest is not None and not manifest.complete and len(manifest.problems) == 3
    assert [r.name for r in manifest.shards] == [f"0000{i}-00000{k}" for i in (0, 3)
                                                 for k in range(3)]  # fmt: skip
    with pytest.raises(DataError, match="has not finished"):
        ShardedEmbeddings(tmp_path / "out")
    # fix the inputs, rerun the same command: only what was missing is computed
    xml.write_text('<?xml version="1.0"?>\n<corpus>\n<text id="d0">\n<sentence id="d0.s0">\n'
                   "<wf>ok</wf>\n</sentence>\n</text>\n</corpus>\n")  # fmt: skip
    write_lines(unreadable.with_suffix(""), 5)
    unreadable.write_bytes(lzma.compress(unreadable.with_suffix("").read_bytes()))
    notutf8.write_text("caf\u00e9 ok\nna\u00efve\n", encoding="utf-8")
    result = embed_shards(inputs, tmp_path / "out", config, ONE, progress=False)
    assert result.manifest.complete and result.skipped == 6 and result.computed == 3


def test_missing_input_fails_before_any_work(tmp_path):
    with pytest.raises(InputError, match="nope.txt does not exist"):
        embed_shards([tmp_path / "nope.txt"], tmp_path / "out", progress=False)
    assert not (tmp_path / "out").exists()


def test_another_model_or_settings_are_refused(
    ray_address, tiny_model_dir, other_model_dir, tmp_path
):
    source = write_lines(tmp_path / "in.txt", 20)
    out = tmp_path / "out"
    embed_shards([source], out, config_for(tiny_model_dir, shard_size=10), ONE, progress=False)
    manifest = (out / MANIFEST).read_bytes()
    with pytest.raises(MismatchError, match="fingerprint"):
        embed_shards([source], out, config_for(other_model_dir, shard_size=10), progress=False)
    with pytest.raises(MismatchError, match=r"layers \[0, 1, 2\] there, \[2\] now"):
        embed_shards([source], out, config_for(tiny_model_dir, shard_size=10, layers=(2,)),
                     progress=False)  # fmt: skip
    with pytest.raises(MismatchError, match="other inputs"):
        embed_shards([write_lines(tmp_path / "other.txt", 5)], out,
                     config_for(tiny_model_dir, shard_size=10), progress=False)  # fmt: skip
    assert (out / MANIFEST).read_bytes() == manifest  # nothing touched
    foreign = tmp_path / "foreign"
    foreign.mkdir()
    (foreign / "notes.txt").write_text("mine")
    with pytest.raises(InputError, match="not empty"):
        embed_shards([source], foreign, config_for(tiny_model_dir), progress=False)
    assert (foreign / "notes.txt").read_text() == "mine"
