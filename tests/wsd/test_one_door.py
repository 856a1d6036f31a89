"""The front ends open WSD systems only through :func:`workbench.wsd.systems.open_system`.

The command line (``workbench/cli/``) and the app (``app.py``, ``webapp/``) never load a
bi-encoder, load or build a sense index themselves: which system answers is decided in one
place. The checks read the code with :mod:`ast`, as ``tests/test_architecture.py`` does;
nothing is imported.
"""

from __future__ import annotations

import ast
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
CLI = sorted((REPO / "workbench" / "cli").rglob("*.py"))
APP = [REPO / "app.py", *sorted((REPO / "webapp").rglob("*.py"))]

#: What opens a bi-encoder or loads or builds a sense index: only ``open_system`` calls these
#: for a front end.
OPENERS = {
    # the bi-encoder
    "BiEncoder", "load_biencoder", "biencoder_dir", "shipped_biencoder", "is_biencoder_dir",
    "gloss_sense_index",
    # saved and cached indexes
    "load_index", "semcor_index", "wordnet_index", "trained_index", "instance_index",
    # indexes built from training vectors
    "build_index", "train_index", "fit_sense_index", "SenseIndex",
}  # fmt: skip
#: Classes among them a front end may name as types (constructing one is opening).
TYPES = {"BiEncoder", "SenseIndex"}
#: Uses of an opener that are no answering system, each with its reason.
ALLOWED = {
    ("workbench/cli/finetune.py", "BiEncoder"): "`finetune wsd-probe` fits a bi-encoder's POS "
    "probe on its own context vectors (training, not answering)",
    ("workbench/cli/finetune.py", "biencoder_dir"): "`finetune wsd-index` fills a bi-encoder's "
    "gloss cache ahead (it answers nothing)",
}


def _called(tree: ast.AST) -> list[tuple[str, int]]:
    """Every name called (``f(...)`` or ``x.f(...)``), with its line."""
    calls = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            func = node.func
            name = func.id if isinstance(func, ast.Name) else getattr(func, "attr", "")
            calls.append((name, node.lineno))
    return calls


def _imported(tree: ast.AST) -> list[tuple[str, int]]:
    """Every name imported from the library, with its line."""
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("workbench"):
            found += [(alias.name, node.lineno) for alias in node.names]
    return found


def _uses(paths: list[Path]) -> list[str]:
    out = []
    for path in paths:
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        where = path.relative_to(REPO).as_posix()
        imported = [(n, line) for n, line in _imported(tree) if n not in TYPES]
        for name, line in [*_called(tree), *imported]:
            if name in OPENERS and (where, name) not in ALLOWED:
                out.append(f"{where}:{line}: {name}")
    return sorted(set(out))


def _open_calls(paths: list[Path]) -> list[str]:
    out = []
    for path in paths:
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        where = path.relative_to(REPO).as_posix()
        out += [f"{where}:{line}" for name, line in _called(tree) if name == "open_system"]
    return out


def test_the_command_line_and_the_app_never_open_an_index_or_a_bi_encoder_themselves():
    assert _uses(CLI) == [], "the command line opens WSD systems with open_system only"
    assert _uses(APP) == [], "the app opens WSD systems with open_system only"


def test_the_command_line_and_the_app_each_open_systems_in_one_place():
    cli = _open_calls(CLI)
    app = _open_calls(APP)
    assert len(cli) == 1 and cli[0].startswith("workbench/cli/wsd_open.py:"), cli
    assert len(app) == 1 and app[0].startswith("webapp/caches/indexes.py:"), app


def test_the_check_finds_a_planted_loader():
    source = "from workbench.wsd.store import load_index\nload_index('x', None)\n"
    tree = ast.parse(source)
    assert [n for n, _ in _called(tree) if n in OPENERS] == ["load_index"]
    assert [n for n, _ in _imported(tree) if n in OPENERS] == ["load_index"]
