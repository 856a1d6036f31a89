"""The app's install, as the README writes it (``pip install -e .``), runs the app and the CLI.

Every third-party module that the library, the app and the command line import, at the top of
a file or inside a function, must come from the core dependencies listed in pyproject.toml
(or from what they install in turn), never from an extra only: CI installs ``[dev]``, so a
module missing from the core list would pass every other test and fail a user's install.
Modules meant to be optional are listed in :data:`OPTIONAL` with the extra that brings them.
"""

from __future__ import annotations

import ast
import importlib.metadata as md
import re
import sys
from pathlib import Path

import pytest
from packaging.requirements import Requirement

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    tomllib = pytest.importorskip("tomli")

REPO = Path(__file__).resolve().parents[1]
#: What the app and the CLI import: the library, the app's pages and the app's entry point.
SOURCES = [REPO / "workbench", REPO / "webapp", REPO / "app.py"]
LOCAL = {"workbench", "webapp", "tests", "bench"}
#: Modules that are optional on purpose (an extra of pyproject.toml must bring them), and what
#: they are for. The code must import them inside a function, so the rest works without them.
OPTIONAL = {
    "kaleido": "PNG / SVG figure export (workbench.viz.export)",
    "ray": "work spread over a Ray cluster (workbench.distributed)",
    "embedding_atlas": "large corpus maps drawn by Embedding Atlas (the Corpus map page)",
    "duckdb": "the Embedding Atlas selection applied to the map's table (the Corpus map page)",
}


def _canonical(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def _pyproject() -> dict:
    return tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))


def _closure(requirements: list[str]) -> set[str]:
    """The distributions installed by ``requirements`` and, in turn, by theirs (their own
    extras left out), as canonical names."""
    seen: set[str] = set()
    todo = [Requirement(r) for r in requirements]
    while todo:
        req = todo.pop()
        name = _canonical(req.name)
        if name in seen or (req.marker is not None and not req.marker.evaluate({"extra": ""})):
            continue
        seen.add(name)
        try:
            todo += [Requirement(r) for r in md.requires(req.name) or ()]
        except md.PackageNotFoundError:
            continue
    return seen


def imported_modules(paths: list[Path]) -> dict[str, set[str]]:
    """Top-level module name -> the files importing it (anywhere in the file)."""
    found: dict[str, set[str]] = {}
    files = [p for path in paths for p in ([path] if path.is_file() else path.rglob("*.py"))]
    for file in files:
        tree = ast.parse(file.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            names = []
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names = [node.module]
            for name in names:
                found.setdefault(name.split(".")[0], set()).add(str(file.relative_to(REPO)))
    return found


def test_core_dependencies_provide_every_module_the_app_and_cli_import():
    project = _pyproject()["project"]
    core = _closure(project["dependencies"])
    extras = {
        extra: {_canonical(Requirement(r).name) for r in reqs}
        for extra, reqs in project.get("optional-dependencies", {}).items()
    }
    provides = md.packages_distributions()
    missing = []
    for module, files in sorted(imported_modules(SOURCES).items()):
        if module in LOCAL or module in sys.stdlib_module_names or module == "__future__":
            continue
        dists = {_canonical(d) for d in provides.get(module, ())}
        if not dists and module in OPTIONAL:  # not installed here: named like its module
            dists = {_canonical(module)}
        if dists & core:
            continue
        if module in OPTIONAL and any(dists & names for names in extras.values()):
            continue
        only_in = sorted(e for e, names in extras.items() if dists & names)
        where = f"only in the extras {only_in}" if only_in else "in no dependency list"
        missing.append(f"{module} ({', '.join(sorted(dists)) or '?'}) is {where}; imported by "
                       f"{', '.join(sorted(files)[:3])}")  # fmt: skip
    assert not missing, "not installed by `pip install -e .`:\n" + "\n".join(missing)


def test_the_check_fails_for_a_module_only_in_an_extra():
    # known structure in: peft is imported by the fine-tuning code; with the core list of an
    # install that left it to an extra, the closure does not provide it
    project = _pyproject()["project"]
    without = [r for r in project["dependencies"] if _canonical(Requirement(r).name) != "peft"]
    assert "peft" not in _closure(without) and "peft" in _closure(project["dependencies"])
    assert "workbench/finetune/training/parameters.py" in imported_modules(SOURCES)["peft"]
    assert "accelerate" in _closure(project["dependencies"])


def test_optional_modules_are_imported_inside_functions_only():
    for module in OPTIONAL:
        for file in imported_modules(SOURCES).get(module, ()):
            tree = ast.parse((REPO / file).read_text(encoding="utf-8"))
            top = [
                n for n in tree.body
                if (isinstance(n, ast.Import) and any(a.name.split(".")[0] == module
                                                      for a in n.names))
                or (isinstance(n, ast.ImportFrom) and (n.module or "").split(".")[0] == module)
            ]  # fmt: skip
            assert not top, f"{file} imports the optional {module} at the top"
