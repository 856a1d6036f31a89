"""A Ray cluster started as a real separate process (``ray start --head``) and the command line
connecting to it with ``--address``: the way a cluster of several machines is used.

The cluster runs in its own process group, with its own ports and temporary directory, and is
stopped by signalling that group only (``ray stop`` would stop every Ray on the machine).
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

from workbench.distributed.reader import ShardedEmbeddings

REPO = Path(__file__).resolve().parents[2]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def group_gone(head: subprocess.Popen, timeout: float) -> bool:
    """Whether every process of the head's process group has left within ``timeout`` s."""
    deadline = time.monotonic() + timeout
    while True:
        head.poll()  # reaped: an exited head would still count as a member of its group
        try:
            os.killpg(head.pid, 0)
        except ProcessLookupError:
            return True
        if time.monotonic() >= deadline:
            return False
        time.sleep(0.1)


@pytest.fixture()
def head_node():
    """``ray start --head`` with 2 CPUs as a separate process group; yields its address."""
    port = free_port()
    temp = tempfile.mkdtemp(prefix="wbray-", dir="/tmp")  # short: Ray's socket paths are limited
    ray_bin = Path(sys.executable).with_name("ray")
    command = [
        str(ray_bin), "start", "--head", "--block", "--num-cpus", "2",
        "--node-ip-address", "127.0.0.1", "--port", str(port),
        "--include-dashboard", "false", "--dashboard-port", str(free_port()),
        "--dashboard-agent-listen-port", str(free_port()),
        "--temp-dir", temp, "--disable-usage-stats",
    ]  # fmt: skip
    # token authentication, as `ray start` sets it up where a token exists: make sure one does
    subprocess.run([str(ray_bin), "get-auth-token", "--generate"], capture_output=True, check=True)
    env = dict(os.environ, RAY_AUTH_MODE="token")
    log = open(Path(temp) / "head.log", "wb")  # closed in finally
    head = subprocess.Popen(command, start_new_session=True, stdout=log, stderr=subprocess.STDOUT,
                            env=env)  # fmt: skip
    try:
        deadline = time.monotonic() + 120
        while True:  # the GCS accepts connections once the head is up
            if head.poll() is not None:
                pytest.fail(
                    "ray start --head exited: " + (Path(temp) / "head.log").read_text()[-2000:]
                )
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                assert time.monotonic() < deadline, "the head node did not come up"
                time.sleep(0.5)
        yield f"127.0.0.1:{port}"
    finally:
        # the session started for `ray start` is this cluster's process group: its id is the
        # head's pid, and only this cluster's processes are in it. After SIGTERM its GCS
        # lingers for half a minute: what is left after a short grace is killed, and the
        # group is watched until empty (no fixed sleeps)
        for sig, grace in ((signal.SIGTERM, 1), (signal.SIGKILL, 15)):
            try:
                os.killpg(head.pid, sig)
            except ProcessLookupError:
                break
            if group_gone(head, grace):
                break
        log.close()
        shutil.rmtree(temp, ignore_errors=True)


@pytest.mark.slow
def test_the_command_line_runs_on_a_separate_cluster(head_node, tiny_model_dir, tmp_path):
    text = tmp_path / "a.txt"
    text.write_text("".join(f"the bank of river {i} rose\n" for i in range(45)), encoding="utf-8")
    jsonl = tmp_path / "b.jsonl"
    jsonl.write_text("".join(json.dumps({"text": f"rates {i} rose"}) + "\n" for i in range(15)))
    env = dict(os.environ, RAY_AUTH_MODE="token")  # the head uses token authentication
    out = tmp_path / "shards"
    command = [sys.executable, "-m", "workbench", "embed", str(text), str(jsonl),
               "--engine", "ray", "--address", head_node, "--out", str(out),
               "--model", str(tiny_model_dir), "--shard-size", "20", "--layers", "0,2"]  # fmt: skip
    done = subprocess.run(command, cwd=REPO, env=env, capture_output=True, text=True, timeout=400)
    assert done.returncode == 0, done.stderr[-3000:]
    assert "wrote 4 shards" in done.stdout and "4 computed, 0 complete already" in done.stdout
    assert "shards 4/4 (0 failed)" in done.stderr  # the whole job's progress
    shards = ShardedEmbeddings(out)
    assert len(shards) == 45 * 6 + 15 * 3 and shards.layers == (0, 2)
    bad = tmp_path / "bad.data.xml"
    bad.write_text("<corpus>\n<text>\n<sentence>\n<wf>x</wf>\n</text>\n", encoding="utf-8")
    command[command.index(str(out))] = str(tmp_path / "other")
    command[4:6] = [str(text), str(bad)]
    command += ["--workers", "1"]  # one actor is enough for the error report (saves one import)
    failed = subprocess.run(command, cwd=REPO, env=env, capture_output=True, text=True, timeout=400)
    assert failed.returncode == 2
    errors = [line for line in failed.stderr.splitlines() if line.startswith("workbench: error")]
    assert len(errors) == 1 and f"{bad}:5: malformed XML" in errors[0]
    assert "Traceback" not in failed.stderr
    assert len(ShardedEmbeddings(tmp_path / "other", require_complete=False).records) == 3
