"""Issue 53, class 10: Ctrl-C in the first moments of any command is one line and exit code
130, never a ``KeyboardInterrupt`` traceback (everything used to be imported before the handler).

The command runs as the script does (``python -m workbench``, :func:`workbench.cli.entry.entry`);
``python -v`` reports each import as it ends, and SIGINT is sent when one of the heavy ones has
just been imported: while the command line's own modules are imported (numpy, under
``workbench.cli.options``), and while the command's module is (``workbench.outputs``, under
``workbench.cli.wsd``).
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("after_import", ["numpy", "workbench.outputs"])
def test_ctrl_c_while_a_command_is_imported_is_one_line_and_130(after_import):
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    child = subprocess.Popen(
        [sys.executable, "-v", "-m", "workbench", "wsd", "eval", "--help"],
        env=env, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )  # fmt: skip
    assert child.stderr is not None
    for line in child.stderr:
        if line.startswith(f"import '{after_import}' "):
            child.send_signal(signal.SIGINT)
            break
    else:
        pytest.fail(f"{after_import} was never imported")
    rest = child.stderr.read()
    code = child.wait(timeout=120)
    said = [line for line in rest.splitlines() if not line.startswith(("#", "import ", " "))]
    assert "Traceback" not in rest and "KeyboardInterrupt" not in rest
    assert (code, said[-1:]) == (130, ["workbench: interrupted"])


def test_an_interrupt_that_left_an_extensions_python_code_still_exits_130(tmp_path):
    """A ``KeyboardInterrupt`` raised in code a C extension runs through ``PyRun_String`` (as
    one does while it is imported) sets the interpreter's own "uncaught" record even when the
    command catches it, and ``python -m`` then ends by SIGINT (-2); :func:`interrupted` clears
    it, so the exit code is 130."""
    (tmp_path / "probe.py").write_text(
        "import ctypes, sys\n"
        "from workbench.cli.entry import interrupted\n"
        "run = ctypes.pythonapi.PyRun_SimpleStringFlags\n"
        "run.argtypes = (ctypes.c_char_p, ctypes.c_void_p)\n"
        "assert run(b'raise KeyboardInterrupt', None) == -1\n"
        "sys.exit(interrupted())\n"
    )
    done = subprocess.run(
        [sys.executable, "-m", "probe"], env={**os.environ, "PYTHONPATH": f"{tmp_path}:{ROOT}"},
        cwd=ROOT, capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert (done.returncode, done.stderr.splitlines()[-1:]) == (130, ["workbench: interrupted"])
