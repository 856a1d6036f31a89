"""ARCHITECTURE.md names only what exists: every path in backticks is a file or folder of the
repository (or, for the cache's folders and files, every part of it is spelled in the code that
writes it), every code name in backticks is a word of the Python sources. A rename or a removal
that leaves the map behind fails here, naming the stale entries.
"""

from __future__ import annotations

import re
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
DOC = REPO / "ARCHITECTURE.md"
SOURCE_DIRS = ("workbench", "webapp", "bench", "devtools", "tests")
#: Words the map uses for ideas, not names of the code.
IDEAS = {"_private"}
NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*")


def backticked(text: str) -> list[str]:
    """The text between backticks, in order (code blocks left out)."""
    prose = re.sub(r"```.*?```", "", text, flags=re.DOTALL)
    return re.findall(r"`([^`\n]+)`", prose)


def repo_paths() -> list[str]:
    """Every file and folder of the sources, as paths relative to the repository root."""
    paths = []
    for path in REPO.rglob("*"):
        rel = path.relative_to(REPO).as_posix()
        if rel.startswith((".git/", ".venv/", "build/", "test-artifacts/")) or "__pycache__" in rel:
            continue
        paths.append(rel + ("/" if path.is_dir() else ""))
    return paths


def source_text() -> str:
    """The Python sources (code, strings, comments)."""
    files = [REPO / "app.py"]
    for folder in SOURCE_DIRS:
        files += sorted((REPO / folder).rglob("*.py"))
    return "\n".join(p.read_text(encoding="utf-8") for p in files)


def is_path(token: str) -> bool:
    return "/" in token or bool(re.search(r"\.(py|md|json|toml|txt|sh|yml|yaml)$", token))


def path_exists(token: str, paths: list[str], text: str) -> bool:
    """A path from the root, or the tail of one (``tasks/wsd/``, ``models.py``), or a path in
    the cache whose every part the code spells (``machine/dtype_probe.json``)."""
    token = token.removeprefix("./")
    if any(p == token or p.endswith("/" + token) or p == token + "/" for p in paths):
        return True
    parts = [part for part in token.split("/") if part]
    if (REPO / parts[0]).exists():
        return False  # a path into the repository that is not there
    return all(f'"{part}' in text or f"'{part}" in text for part in parts)


def stale_entries(doc: str) -> list[str]:
    """The backticked paths and names of ``doc`` that the repository does not have."""
    paths, text = repo_paths(), source_text()
    words = set(re.findall(r"[A-Za-z_][A-Za-z0-9_]*", text))
    stale = []
    for token in dict.fromkeys(backticked(doc)):
        if " " in token or "=" in token or "<" in token or token.startswith(("/", "-", "$")):
            continue  # a command, a setting, a URL route or a placeholder: not a name
        path, _, test = token.partition("::")
        if is_path(path):
            if not path_exists(path, paths, text):
                stale.append(token)
            elif test and test not in words:
                stale.append(token)
            continue
        name = token.removesuffix("()")
        if name in IDEAS or not NAME.fullmatch(name):
            continue
        if any(part not in words for part in name.split(".")):
            stale.append(token)
    return stale


def test_every_path_and_name_in_architecture_md_exists():
    assert stale_entries(DOC.read_text(encoding="utf-8")) == []


def test_a_stale_path_or_name_is_found():
    # the planted names are put together here, so that no source file spells them whole
    missing = "no_such_" + "thing"
    stale = [f"workbench/{missing}.py", missing.title().replace("_", ""), f"tests/{missing}/",
             f"machine/{missing}.json"]  # fmt: skip
    doc = ", ".join(f"`{t}`" for t in [*stale, "workbench.wsd.presets", "corpus-maps/"])
    assert stale_entries(doc) == stale
