"""A writer killed (SIGKILL) mid-way loses nothing and leaves nothing stale: for the cache, the
``--out`` outputs of ``workbench embed`` and fine-tuning checkpoints, the next run finds the
complete result or recomputes it, and no temporary of the dead writer is left.

Writers are killed deterministically: inside the encoder (a progress callback that kills its
own process half-way through streaming the vectors), or at a fault point between writing a
temporary and renaming it (``$WORKBENCH_KILL_AT``, :func:`workbench.fileio.fault_point`). All
on the tiny random BERT: each test takes a few seconds.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import warnings
from pathlib import Path

import numpy as np
import pytest

from tests.conftest import REPO
from workbench.cli.main import main
from workbench.encoding.cache import EmbeddingCache, encode_cached
from workbench.encoding.embeddings import LayerwiseEmbeddings
from workbench.encoding.wordtable import read_table
from workbench.errors import DataError
from workbench.fileio import stale_temporaries
from workbench.finetune.training import checkpoint as ckpt

SENTENCES = [f"sentence number {i} about the bank of the river {i % 7}" for i in range(60)]


def _python(script: str, env: dict[str, str], *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-c", textwrap.dedent(script), *args],
        cwd=REPO,
        env={**os.environ, **env},
        capture_output=True,
        text=True,
        timeout=300,
    )


def _workbench(args: list[str], env: dict[str, str]) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "workbench", *args],
        cwd=REPO,
        env={**os.environ, **env},
        capture_output=True,
        text=True,
        timeout=300,
    )


CACHE_WRITER = """
    import os, signal, sys
    from workbench.encoding.cache import encode_cached
    from workbench.encoding.encoder import Encoder
    from tests.robustness.test_kill import SENTENCES

    def die_half_way(fraction):
        if fraction >= 0.5:  # the vectors are half written into the entry's memory map
            os.kill(os.getpid(), signal.SIGKILL)

    encoder = Encoder(sys.argv[1], device="cpu", max_batch_tokens=64)
    encode_cached(encoder, SENTENCES, progress=die_half_way if sys.argv[2] == "mid" else False)
"""


@pytest.mark.parametrize("where", ["mid-stream", "before-rename"])
def test_cache_writer_killed_then_recomputed(tiny_model_dir, tiny_encoder, tmp_cache, where):
    env = {"WORKBENCH_CACHE": str(tmp_cache)}
    if where == "before-rename":
        env["WORKBENCH_KILL_AT"] = "cache:commit"
    done = _python(CACHE_WRITER, env, str(tiny_model_dir), "mid" if where == "mid-stream" else "")
    assert done.returncode == -signal.SIGKILL, done.stderr
    cache = EmbeddingCache(tmp_cache)
    assert cache.entries() == [] and len(cache.stale()) == 1  # nothing half-done is visible
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # not a damaged entry: simply none yet
        emb = encode_cached(tiny_encoder, SENTENCES, cache=cache)
    np.testing.assert_allclose(
        np.asarray(emb.vectors), tiny_encoder.encode(SENTENCES).vectors, rtol=0, atol=1e-6
    )
    assert cache.stale() == [] and [e.problem for e in cache.entries()] == [""]
    hidden = [p.name for p in cache.dir.iterdir() if p.name.startswith(".")]
    assert hidden == []
    again = encode_cached(tiny_encoder, SENTENCES, cache=cache)  # the complete result is found
    assert isinstance(again.vectors, np.memmap)


def _tables_match(npz) -> bool:
    try:
        words = [row[3] for row in read_table(npz.with_suffix(".tsv"))[1:]]
        ids = read_table(npz.with_suffix(".sentences.tsv"))
    except DataError:
        return False
    return words == LayerwiseEmbeddings.load(npz).words and len(ids) > 1


@pytest.mark.parametrize("point", ["atomic:out.sentences.tsv", "atomic:out.npz"])
def test_embed_killed_while_writing_its_outputs(tiny_model_dir, tmp_path, tmp_cache, point):
    old_input, new_input = tmp_path / "old.txt", tmp_path / "new.txt"
    old_input.write_text("An older run.\nIts vectors stay whole.\n")
    new_input.write_text("\n".join(SENTENCES[:5]) + "\n")
    out = tmp_path / "out.npz"
    model = ["--model", str(tiny_model_dir), "--device", "cpu"]
    assert main(["embed", str(old_input), "--out", str(out), *model]) == 0
    before = LayerwiseEmbeddings.load(out)
    killed = _workbench(
        ["embed", str(new_input), "--out", str(out), *model],
        {"WORKBENCH_CACHE": str(tmp_cache), "WORKBENCH_KILL_AT": point},
    )
    assert killed.returncode == -signal.SIGKILL, killed.stderr
    # every file there is whole: the old vectors load
    after = LayerwiseEmbeddings.load(out)
    assert after.words == before.words
    np.testing.assert_array_equal(after.vectors, before.vectors)
    # renamed in the order .sentences.tsv, .tsv, .npz: killed before the first, the old set
    # is whole and consistent; before the .npz, the new tables do not match the old vectors
    assert _tables_match(out) == (point == "atomic:out.sentences.tsv")
    assert stale_temporaries(tmp_path)  # the dead writer's temporary
    assert main(["embed", str(new_input), "--out", str(out), *model]) == 0
    assert _tables_match(out) and LayerwiseEmbeddings.load(out).n_sentences == 5
    assert stale_temporaries(tmp_path) == []
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.startswith("out")) == [
        "out.npz", "out.sentences.tsv", "out.tsv",
    ]  # fmt: skip


def write_checkpoints(directory: str) -> None:
    """Three epochs of a small model, a checkpoint after each (run by the writer killed)."""
    import torch

    torch.manual_seed(0)
    model = torch.nn.Linear(8, 2)
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
    scheduler = torch.optim.lr_scheduler.LambdaLR(optimizer, lambda step: 1.0)
    for epoch in (1, 2, 3):
        model(torch.randn(4, 8)).sum().backward()
        optimizer.step()
        state = ckpt.RunState(epoch=epoch, history=[], step=epoch)
        ckpt.save_checkpoint(Path(directory), model, optimizer, scheduler, state, {"run": 1})


CHECKPOINT_WRITER = """
    import sys
    from tests.robustness.test_kill import write_checkpoints

    write_checkpoints(sys.argv[1])
"""


def test_checkpoint_writer_killed_keeps_the_previous_checkpoint(tmp_path):
    env = {"WORKBENCH_KILL_AT": f"atomic:{ckpt.LAST}#2"}  # while epoch 2's is written
    done = _python(CHECKPOINT_WRITER, env, str(tmp_path))
    assert done.returncode == -signal.SIGKILL, done.stderr
    assert len(stale_temporaries(tmp_path)) == 1
    saved = ckpt.load_checkpoint(tmp_path, {"run": 1})  # the complete one before the kill
    assert saved["state"]["epoch"] == 1 and saved["optimizer"]["state"][0]["step"] == 1
    assert stale_temporaries(tmp_path) == [] and sorted(os.listdir(tmp_path)) == [ckpt.LAST]
    write_checkpoints(str(tmp_path))  # the next run writes over it as usual
    assert ckpt.load_checkpoint(tmp_path, {"run": 1})["state"]["epoch"] == 3
