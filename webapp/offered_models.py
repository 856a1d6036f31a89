"""Which models a server (the app) offers to its visitors, and the folder of the app's own runs.

A model named by a visitor (a link's ``?model=``, a pane's model, the sidebar's box) is loaded
only when the server offers it:

* the packaged model (``None``, or an empty name);
* a model fetched into the workbench's models folder (``<cache>/models/NAME``), by its name;
* a model directory under the workbench's own folders: its models folder and the app's runs
  folder (``<cache>/finetuned``), given as a path;
* a hub id already in the local Hugging Face cache (nothing is downloaded for a visitor);
* anything the server's owner lists in ``$WORKBENCH_APP_MODELS`` (names or directories,
  separated by ``os.pathsep``).

Anything else is refused with one neutral message (:data:`NOT_OFFERED`) that says nothing about
the server's files: whether a path exists, is a directory or holds a model is never revealed.

Example::

    check_offered("/etc")            # raises InputError(NOT_OFFERED)
    check_offered(None)              # the packaged model: None
    run_directory("wic-1")           # <cache>/finetuned/wic-1 (a plain folder name only)
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from workbench.encoding.models import default_cache_dir, model_root, models_dir
from workbench.errors import InputError

#: The environment variable in which a server's owner lists more models to offer.
OWNER_LIST = "WORKBENCH_APP_MODELS"
#: The one answer to a model the server does not offer (it names no path and no reason).
NOT_OFFERED = (
    "This server does not offer that model. Choose one of the models listed (the packaged "
    "model, fetched models, fine-tuned runs of this app); the server's owner can offer more "
    f"(${OWNER_LIST})."
)
#: The longest model name taken at all (a longer one is refused before any look-up).
MAX_NAME = 300
_HUB_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,95}(/[A-Za-z0-9][A-Za-z0-9._-]{0,95})?")
_RUN_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,79}")


def runs_dir() -> Path:
    """The app's runs folder, ``<cache>/finetuned``: the only place the app writes models."""
    return default_cache_dir() / "finetuned"


def run_directory(name: str) -> Path:
    """The folder of the app's run called ``name`` inside :func:`runs_dir`.

    Raises:
        InputError: ``name`` is not a plain folder name (letters, digits, ``.``, ``_``, ``-``;
            no separator, no ``..``; at most 80 characters).
    """
    name = name.strip()
    if not _RUN_NAME.fullmatch(name) or set(name) <= {"."}:
        raise InputError(
            "a run name is a plain folder name (letters, digits, '.', '_', '-', at most 80 "
            "characters): the app saves its runs in its own runs folder only"
        )
    return runs_dir() / name


def owner_list() -> list[str]:
    """The names and directories listed in ``$WORKBENCH_APP_MODELS`` (empty when unset)."""
    text = os.environ.get(OWNER_LIST, "")
    return [part.strip() for part in text.split(os.pathsep) if part.strip()]


def _own_roots() -> list[Path]:
    return [Path(os.path.realpath(models_dir())), Path(os.path.realpath(runs_dir()))]


def hf_cache_dir() -> Path:
    """The local Hugging Face hub cache: ``$HF_HUB_CACHE``, else ``$HF_HOME/hub``, else
    ``~/.cache/huggingface/hub``."""
    if os.environ.get("HF_HUB_CACHE"):
        return Path(os.environ["HF_HUB_CACHE"]).expanduser()
    home = os.environ.get("HF_HOME") or os.path.join("~", ".cache", "huggingface")
    return Path(home).expanduser() / "hub"


def _in_hf_cache(name: str) -> bool:
    folder = hf_cache_dir() / ("models--" + name.replace("/", "--")) / "snapshots"
    return any(folder.glob("*/config.json"))


def is_offered(name: str | None) -> bool:
    """Whether the server offers the model ``name`` (see the module's rules)."""
    if name is None or not name.strip():
        return True
    name = name.strip()
    if len(name) > MAX_NAME or "\x00" in name:
        return False
    listed = owner_list()
    if name in listed:
        return True
    if _HUB_ID.fullmatch(name) and ".." not in name:
        if model_root(models_dir() / name.rsplit("/", 1)[-1]) is not None:
            return True
        if not name.startswith(".") and _in_hf_cache(name):
            return True
    real = Path(os.path.realpath(os.path.expanduser(name)))
    owners = {os.path.realpath(os.path.expanduser(p)) for p in listed}
    if str(real) in owners:
        return True
    inside = any(real != root and real.is_relative_to(root) for root in _own_roots())
    return inside and (real / "config.json").is_file()


def check_offered(name: str | None) -> str | None:
    """``name`` stripped (None for the packaged model) when the server offers it.

    Raises:
        InputError: with :data:`NOT_OFFERED`, whatever the reason.
    """
    if not is_offered(name):
        raise InputError(NOT_OFFERED)
    return name.strip() or None if name is not None else None


def offered_models() -> list[str]:
    """The models to list for a visitor: fetched models (by name), the app's runs (newest
    first) and the owner's list; the packaged model (``None``) is not in the list."""
    fetched = [root.name for root in sorted(models_dir().glob("*")) if model_root(root)]
    runs = sorted(runs_dir().glob("*/config.json"), key=lambda p: -p.stat().st_mtime)
    return list(dict.fromkeys([*fetched, *(str(p.parent) for p in runs), *owner_list()]))
