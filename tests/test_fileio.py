"""workbench.fileio: files are replaced whole or not at all."""

from __future__ import annotations

import pytest

from workbench.fileio import atomic_path


def test_atomic_path_replaces_on_success_and_leaves_nothing_on_failure(tmp_path):
    target = tmp_path / "d" / "keys.txt"
    with atomic_path(target) as tmp:
        tmp.write_text("one\n")
    assert target.read_text() == "one\n"
    with pytest.raises(RuntimeError), atomic_path(target) as tmp:
        tmp.write_text("half")
        raise RuntimeError("interrupted")
    assert target.read_text() == "one\n"
    assert sorted(p.name for p in target.parent.iterdir()) == ["keys.txt"]
