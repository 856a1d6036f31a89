"""Option values the commands share, parsed into what the library takes, and the command line
rebuilt from them for reports (:func:`command_line`).

Each parser raises :class:`~workbench.errors.InputError` naming the option and the bad value,
so the command line prints one line and exits with code 2; :func:`number` is the argparse type
of every numeric option (finite, in its :class:`~workbench.bounds.Bound`).
"""

from __future__ import annotations

import argparse
import os
import shlex
import sys
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from workbench.bounds import Bound
from workbench.encoding.exported.backend import BACKENDS
from workbench.encoding.pooling import POOLINGS
from workbench.errors import InputError
from workbench.fileio import expand_home

#: ``--dtype``'s choices: the compute dtypes an encoder takes (workbench.encoding.device).
DTYPES = ("auto", "float32", "bfloat16", "float16", "int8")


#: ``--model``'s help where a command says what it takes.
MODEL_HELP = "HF id or local dir (default: packaged MiniLM)"
#: ``--device``'s help where a command says what it takes.
DEVICE_HELP = "cuda | mps | cpu (default: best available)"


def add_model_options(
    p: argparse.ArgumentParser,
    *,
    pooling: bool = True,
    model_help: str | None = MODEL_HELP,
    device_help: str | None = DEVICE_HELP,
) -> None:
    """The options of a command that takes a model, in this order: ``--model``, ``--device``,
    ``--dtype`` and ``--backend`` (:func:`add_dtype`), and ``--pooling`` (left out with
    ``pooling=False``). ``model_help``/``device_help`` None: the option has no help line.

    Example::

        add_model_options(p)                  # workbench wsd ..., senses ..., geometry
        add_model_options(p, pooling=False)   # workbench info
    """
    p.add_argument("--model", type=home_expanded, default=None, help=model_help)
    add_device(p, device_help)
    add_dtype(p)
    if pooling:
        p.add_argument("--pooling", choices=POOLINGS, default="mean")


def add_device(p: argparse.ArgumentParser, help: str | None = DEVICE_HELP) -> None:
    """The ``--device`` option (default None: the best device available; ``help`` None: no
    help line)."""
    p.add_argument("--device", default=None, help=help)


def add_dtype(p: argparse.ArgumentParser) -> None:
    """The ``--dtype`` and ``--backend`` options: how the encoder computes (``--backend`` is
    applied to every encoder the command opens: :func:`apply_backend`)."""
    p.add_argument(
        "--dtype", choices=DTYPES, default="auto",
        help="the model's compute dtype (default auto: float32 through ONNX Runtime on a CPU; "
        "bfloat16 on a GPU that has it; int8: the model's int8 export on ONNX Runtime, faster, "
        "its F1 and vectors in docs/benchmarks.md; results are float32 either way)",
    )  # fmt: skip
    p.add_argument(
        "--backend", choices=BACKENDS, default="auto",
        help="what runs the model: auto (ONNX Runtime on a CPU, from an export made once per "
        "model; torch on a GPU or where no export can be made), onnx, or torch",
    )  # fmt: skip


@contextmanager
def apply_backend(args: argparse.Namespace) -> Iterator[None]:
    """Make a command's ``--backend`` (when not ``auto``) the process's for the block, as
    ``$WORKBENCH_BACKEND`` is, so that every encoder the command opens (a bi-encoder's two
    towers, a system's index) answers on it; as it was after."""
    backend = getattr(args, "backend", None)
    if not isinstance(backend, str) or backend == "auto":
        yield
        return
    before = os.environ.get("WORKBENCH_BACKEND")
    os.environ["WORKBENCH_BACKEND"] = backend
    try:
        yield
    finally:
        if before is None:
            os.environ.pop("WORKBENCH_BACKEND", None)
        else:
            os.environ["WORKBENCH_BACKEND"] = before


class _FormerName(argparse.Action):
    """An option's former name: stores its value as the current option does and says on
    stderr, once per use, which name to use instead."""

    def __init__(
        self, option_strings: Sequence[str], dest: str, current: str, **kwargs: Any
    ) -> None:
        self.current = current
        super().__init__(option_strings, dest, **kwargs)

    def __call__(self, parser, namespace, values, option_string=None) -> None:
        print(f"workbench: {option_string} is deprecated: use {self.current}", file=sys.stderr)
        setattr(namespace, self.dest, values)


def add_former_name(p: argparse.ArgumentParser, former: str, current: str, **kwargs: Any) -> None:
    """Accept ``former`` as an older name of the option ``current`` (its ``dest`` and, in
    ``kwargs``, its ``nargs``/``type``/``choices``), hidden from ``--help``, with a deprecation
    note on stderr.

    Example::

        p.add_argument("--correction", default=None)
        add_former_name(p, "--postprocess", "--correction")
    """
    dest = current.lstrip("-").replace("-", "_")
    p.add_argument(former, dest=dest, action=_FormerName, current=current,
                   help=argparse.SUPPRESS, default=argparse.SUPPRESS, **kwargs)  # fmt: skip


def number(bound: Bound) -> Callable[[str], int | float]:
    """An argparse ``type`` for a numeric option: its text as an ``int`` or a ``float`` within
    ``bound`` (finite, in range), else the parse fails with the range in words, before any
    work. Every numeric option of the command line takes one (its ``bound`` attribute says
    which)."""

    def parse(text: str) -> int | float:
        try:
            return bound.parse(text.strip())
        except InputError:
            raise argparse.ArgumentTypeError(
                f"must be {bound.describe()}, not {text.strip()!r}"
            ) from None

    parse.__name__ = "integer" if bound.integer else "number"  # argparse's "invalid %s value"
    parse.bound = bound  # type: ignore[attr-defined]
    return parse


def add_overwrite(p: argparse.ArgumentParser, what: str = "output files") -> None:
    """The ``--overwrite`` option of a command that writes files: without it, a file the
    workbench did not write is never replaced (:mod:`workbench.outputs`)."""
    p.add_argument(
        "--overwrite",
        action="store_true",
        help=f"replace {what} that the workbench did not write (or that changed since); "
        "without it they are refused, and the workbench's own are replaced",
    )


def layer_list(text: str | None, option: str = "--layers") -> list[int] | None:
    """``"0,6"`` -> ``[0, 6]`` (negative indices count from the last layer); ``None`` -> None.

    Raises:
        InputError: an empty list (``","``) or an item that is not an integer (``"a"``).
    """
    if text is None:
        return None
    items = [v.strip() for v in text.split(",")]
    if not any(items):
        raise InputError(f"{option} {text!r} names no layer: give indices such as 0,6")
    try:
        return [int(v) for v in items if v]
    except ValueError:
        raise InputError(
            f"{option} must be comma-separated integers such as 0,6, not {text!r}"
        ) from None


def home_expanded(text: str) -> str:
    """An argparse ``type``: ``text`` with a leading ``~`` or ``~user`` expanded, as a shell
    would (which it does not in ``--out=~/x``; :func:`workbench.fileio.expand_home`).

    Raises:
        argparse.ArgumentTypeError: ``~user`` names no user of this system, or no home is
            known.
    """
    try:
        return expand_home(text)
    except InputError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def path_arg(text: str) -> Path:
    """An argparse ``type`` for file and directory options: an empty or blank name is refused
    (``Path("")`` would silently mean the current directory); a leading ``~`` or ``~user`` is
    expanded (:func:`home_expanded`)."""
    if not text.strip():
        raise argparse.ArgumentTypeError("an empty path: give a file or directory name")
    return Path(home_expanded(text))


def name_or_path_arg(text: str) -> str:
    """An argparse ``type`` for an option that takes a name (a dataset, a model, a system) or
    a path: the text as given, an empty or blank one refused, a leading ``~`` or ``~user``
    expanded (:func:`home_expanded`)."""
    if not text.strip():
        raise argparse.ArgumentTypeError("an empty name: give a name or a path")
    return home_expanded(text)


def command_line(
    args: argparse.Namespace, command: Sequence[str], positionals: Sequence[str] = ()
) -> str:
    """The command that produced a report, rebuilt from its parsed arguments with every option
    spelled out (defaults included), so that running it again does the same work.

    Args:
        args: the parsed arguments.
        command: the words after ``workbench`` (``["wsd", "eval"]``).
        positionals: the names of the positional arguments, written first, in this order
            (before the options, so that an option taking several values cannot swallow them).

    Example::

        command_line(args, ["senses", "separation"], ["lemmas"])
        # 'workbench senses separation bank plant --limit 200 --pooling mean ...'
    """
    parts = ["workbench", *command]
    for name in positionals:
        value = getattr(args, name, None)
        if value is not None:
            parts += [str(v) for v in (value if isinstance(value, list) else [value])]
    for name, value in sorted(vars(args).items()):
        skipped = name in positionals or name in ("func", "command") or name.endswith("_command")
        if skipped or value is None or value is False or value in ([], ""):
            continue
        flag = "--" + name.replace("_", "-")
        if value is True:
            parts.append(flag)
        elif isinstance(value, list):
            parts += [flag, *map(str, value)]
        else:
            parts += [flag, str(value)]
    return shlex.join(parts)
