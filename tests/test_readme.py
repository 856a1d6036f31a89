"""The README's two set-up commands: the test one is exactly what CI runs (``.ci/run``), and the
app's is the plain install that ``tests/test_dependencies.py`` checks the imports against."""

from __future__ import annotations

import re
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
APP_COMMAND = (
    "python3 -m venv .venv && . .venv/bin/activate && pip install torch==2.13.0 && "
    "pip install -e . && streamlit run app.py"
)


def readme_commands() -> list[str]:
    """The one-line commands of the README's ``bash`` blocks under "Set up"."""
    text = (REPO / "README.md").read_text(encoding="utf-8")
    setup = text.split("## Set up", 1)[1].split("\n## ", 1)[0]
    return [block.strip() for block in re.findall(r"```bash\n(.*?)```", setup, flags=re.S)]


def ci_command() -> str:
    """The command line ``.ci/run`` runs: its last line."""
    return (REPO / ".ci" / "run").read_text(encoding="utf-8").strip().splitlines()[-1]


def test_the_readme_holds_the_app_command_and_the_ci_command():
    assert readme_commands() == [APP_COMMAND, ci_command()]
