"""Writing a benchmark's raw JSON, the same way for every bench script (their ``--json PATH``;
the recorded runs that the docs cite live in docs/bench_runs/ and docs/finetune_runs/)."""

from __future__ import annotations

import json
import os
from typing import Any

from workbench.fileio import atomic_path


def write_json(path: str | os.PathLike[str] | None, data: Any) -> None:
    """Write ``data`` as indented JSON (values JSON does not know as their ``str``) to ``path``
    (nothing when it is None: no ``--json`` given), making its directory; atomically, so a
    stopped run never leaves half a file, and an earlier run's file stays whole until the new
    one is complete."""
    if path is None:
        return
    text = json.dumps(data, indent=1, default=str) + "\n"
    with atomic_path(path) as tmp:
        tmp.write_text(text, encoding="utf-8")
