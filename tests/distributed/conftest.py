"""Fixtures of the distributed tests: one local Ray for the package's tests that need it, the
first SemCor sentences and the job that shards them (computed once, read by several modules)."""

from __future__ import annotations

import logging
import lzma
import os
import shutil
from pathlib import Path

import pytest

from workbench.distributed.config import ShardConfig
from workbench.distributed.jobs import JobResult, embed_shards

SEMCOR = Path("WSD_Evaluation_Framework/Training_Corpora/SemCor")


@pytest.fixture(scope="package")
def ray_address():
    """A local Ray with 2 CPUs, from the first test that needs it to the end of this package
    (started and stopped once: each start costs seconds); yields its address."""
    import ray  # heavy: only the tests that use this fixture start Ray

    if ray.is_initialized():  # something before this package left one running: start clean
        ray.shutdown()
    ray.init(address="local", num_cpus=2, include_dashboard=False, logging_level=logging.WARNING)
    yield ray.get_runtime_context().gcs_address
    ray.shutdown()


def write_semcor_head(data: Path, n: int, directory: Path) -> Path:
    """The first ``n`` sentences of SemCor as a framework XML with its gold keys."""
    xml = directory / f"semcor{n}.data.xml"
    lines, ids = [], set()
    with lzma.open(data / SEMCOR / "semcor.data.xml.xz", "rt", encoding="utf-8") as fh:
        done = 0
        for line in fh:
            lines.append(line)
            if 'id="' in line and line.lstrip().startswith("<instance"):
                ids.add(line.split('id="', 1)[1].split('"', 1)[0])
            if line.strip() == "</sentence>":
                done += 1
                if done == n:
                    break
    xml.write_text("".join(lines) + "</text>\n</corpus>\n", encoding="utf-8")
    gold = directory / f"semcor{n}.gold.key.txt"
    with lzma.open(data / SEMCOR / "semcor.gold.key.txt.xz", "rt", encoding="utf-8") as fh:
        gold.write_text("".join(x for x in fh if x.split(" ", 1)[0] in ids), encoding="utf-8")
    return xml


@pytest.fixture(scope="session")
def semcor200(wsd_data, tmp_path_factory) -> Path:
    """The first 200 SemCor sentences (XML + gold keys)."""
    return write_semcor_head(wsd_data, 200, tmp_path_factory.mktemp("semcor200"))


@pytest.fixture(scope="package")
def semcor_job(ray_address, tiny_model_dir, semcor200, tmp_path_factory) -> JobResult:
    """A fresh job on the local Ray: ``semcor200`` with the tiny BERT, 4 shards of up to 60
    sentences, 2 workers. Its directory is only read: test_jobs checks it against
    ``Encoder.encode``, test_reduce builds from it."""
    out = tmp_path_factory.mktemp("semcor-job") / "out"
    config = ShardConfig(model=str(tiny_model_dir), shard_size=60)
    return embed_shards([semcor200], out, config, progress=False)


@pytest.fixture(scope="session")
def other_model_dir(tiny_model_dir, tmp_path_factory) -> Path:
    """The tiny BERT with other random weights (another fingerprint, same shapes)."""
    import torch
    from transformers import BertConfig, BertModel

    path = tmp_path_factory.mktemp("tiny-bert-other")
    for name in os.listdir(tiny_model_dir):
        if not name.endswith(".safetensors"):
            shutil.copy(tiny_model_dir / name, path / name)
    torch.manual_seed(1)
    BertModel(BertConfig.from_pretrained(tiny_model_dir)).save_pretrained(path)
    return path
