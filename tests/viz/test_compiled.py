"""``import_umap`` under threads: the app's preload and a visitor ask for UMAP at once."""

from __future__ import annotations

import subprocess
import sys

from workbench.viz.compiled import import_umap

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
