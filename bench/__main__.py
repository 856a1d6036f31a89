"""The suite's runner, from the repository's root:

    python -m bench list                        # every script, with its first docstring line
    python -m bench run extract --sentences 2000 --json docs/bench_runs/extract_cpu.json
    python -m bench run gpu/session --help      # a folder's name where the bare name is ambiguous

``run NAME ARGS`` runs ``bench/<folder>/NAME.py`` as the module ``bench.<folder>.NAME`` with
``ARGS`` as its command line, so its imports of ``bench.lib`` and ``workbench`` resolve the same way
for every script. Standard library only: it also runs on a machine that has only the repository.
"""

from __future__ import annotations

import ast
import runpy
import sys
from pathlib import Path

BENCH = Path(__file__).resolve().parent
#: The folders that hold runnable scripts, in the order ``list`` shows them (``lib`` holds helpers).
GROUPS = ("speed", "experiments", "gpu")


def scripts() -> dict[str, Path]:
    """``"folder/name"`` -> the script's path, for every runnable script."""
    return {
        f"{group}/{path.stem}": path
        for group in GROUPS
        for path in sorted((BENCH / group).glob("*.py"))
        if path.stem != "__init__"
    }


def resolve(name: str) -> str:
    """The ``folder/name`` key of ``name``: a key, a bare name found in one folder only, or a path
    such as ``bench/speed/extract.py``."""
    found = scripts()
    key = name.removeprefix("bench/").removesuffix(".py").replace(".", "/")
    if key in found:
        return key
    matches = [k for k in found if k.split("/")[1] == key]
    if len(matches) == 1:
        return matches[0]
    if matches:
        raise SystemExit(f"{name!r} is in several folders: {', '.join(matches)}; name one")
    raise SystemExit(f"no bench script {name!r}; `python -m bench list` names them")


def summary(path: Path) -> str:
    """The first line of a script's docstring (read, not imported: listing loads no torch)."""
    doc = ast.get_docstring(ast.parse(path.read_text(encoding="utf-8"))) or ""
    return doc.splitlines()[0] if doc else ""


def main(argv: list[str]) -> int:
    if not argv or argv[0] in ("-h", "--help"):
        print(__doc__)
        return 0 if argv else 2
    if argv[0] == "list":
        for key, path in scripts().items():
            print(f"{key:28} {summary(path)}")
        return 0
    if argv[0] == "run" and len(argv) >= 2:
        key = resolve(argv[1])
        sys.argv = [str(scripts()[key]), *argv[2:]]
        runpy.run_module("bench." + key.replace("/", "."), run_name="__main__", alter_sys=True)
        return 0
    print(f"unknown command {' '.join(argv)!r}\n{__doc__}", file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
