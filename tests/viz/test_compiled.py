"""``import_umap`` under threads: the app's preload and a visitor ask for UMAP at once."""

from __future__ import annotations

import subprocess
import sys

from workbench.viz.compiled import import_umap, warm_marker

_RACE = """
import sys, threading, time
from workbench.viz.compiled import import_umap

first = threading.Thread(target=import_umap)
first.start()
deadline = time.monotonic() + 120
while "umap" not in sys.modules:  # the first thread is inside umap's import
    assert time.monotonic() < deadline, "umap's import never started"
    time.sleep(0.001)
umap = import_umap()  # asked while the first import is still running
print(hasattr(umap, "UMAP"))
first.join()
"""


def test_a_second_thread_waits_for_the_whole_module():
    out = subprocess.run(
        [sys.executable, "-c", _RACE], capture_output=True, text=True, timeout=300, check=True
    )
    assert out.stdout.strip() == "True", out.stdout + out.stderr


def test_the_module_is_umap_with_its_estimator():
    umap = import_umap()
    assert umap is import_umap() and umap.__name__ == "umap" and hasattr(umap, "UMAP")


_WARM = """
import sys, time
from pathlib import Path
from workbench.viz.compiled import import_umap, warm_elsewhere, warm_marker

cache = Path(sys.argv[1])
proc = warm_elsewhere(cache, code="import time; time.sleep(2)\\n")
assert proc is not None and proc.poll() is None  # started, running
import_umap()  # waits for the other process before importing
assert proc.poll() == 0, proc.poll()
assert warm_marker(cache).is_file()  # it ended well: the next start needs none
assert warm_elsewhere(cache) is None
print("ok")
"""


def test_a_warm_up_elsewhere_is_waited_for_and_marked_done(tmp_path):
    out = subprocess.run([sys.executable, "-c", _WARM, str(tmp_path)], capture_output=True,
                         text=True, timeout=300)  # fmt: skip
    assert out.stdout.strip() == "ok", out.stdout + out.stderr
    assert [p.name for p in (tmp_path / "numba").iterdir()] == [warm_marker(tmp_path).name]


def test_the_marker_follows_numba_s_cache_folder(tmp_path, monkeypatch):
    monkeypatch.delenv("NUMBA_CACHE_DIR", raising=False)
    default = warm_marker(tmp_path)
    monkeypatch.setenv("NUMBA_CACHE_DIR", str(tmp_path / "numba-cache"))
    assert warm_marker(tmp_path) != default and warm_marker(tmp_path).parent == default.parent


def test_a_failed_warm_up_leaves_no_marker(tmp_path):
    code = (
        "import sys; from pathlib import Path; from workbench.viz.compiled import warm_elsewhere; "
        "print(warm_elsewhere(Path(sys.argv[1]), code='raise SystemExit(3)\\n').wait())"
    )
    proc = subprocess.run([sys.executable, "-c", code, str(tmp_path)], capture_output=True,
                          text=True, timeout=120)  # fmt: skip
    assert proc.stdout.strip() == "3", proc.stdout + proc.stderr
    assert not warm_marker(tmp_path).exists()
