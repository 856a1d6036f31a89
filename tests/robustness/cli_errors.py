"""The check every bad-input case of the command line shares: exit code 2 and one line on stderr,
``workbench: error: ...`` matching what the case expects, no traceback."""

from __future__ import annotations

import re
import warnings

import pytest

from workbench.cli.main import main


def assert_one_line_error(argv: list[str], expect: str, capsys: pytest.CaptureFixture[str]) -> str:
    """Run ``workbench argv`` in-process; check it fails cleanly with ``expect`` (a regex);
    returns the error line."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        code = main(argv)
    err = capsys.readouterr().err
    lines = [line for line in err.splitlines() if line.strip()]
    assert code == 2, err
    assert "Traceback" not in err
    assert lines and lines[-1].startswith("workbench: error: "), err
    assert len(lines) == 1, f"more than one line on stderr:\n{err}"
    assert re.search(expect, lines[-1]), lines[-1]
    return lines[-1]
