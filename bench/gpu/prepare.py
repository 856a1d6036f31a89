"""The files a GPU session carries (``bench/gpu/session.py``), built here into ``.gpu/``.

Run:  python -m bench run gpu/prepare          # about 75 s; prints each piece's size and the total

Each piece is a ``.tar.xz`` (``session.PIECES`` says where ``run`` unpacks it); the total with
the working tree must stay under what may travel to the remote machine (``session.LIMIT_MIB``),
or this exits with 1.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import tarfile
from pathlib import Path

import nltk
import plotly
import torch
from safetensors.torch import load_file, save_file

from bench.gpu.session import CARRY, LIMIT_MIB, MINILM, MPNET, PIECES, REPO
from workbench.corpora.datasets import data_dir
from workbench.encoding.models import default_model_path, model_root, models_dir
from workbench.lexicon.wordnet import normalised_copy

TOKENIZER_FILES = (
    "config.json", "tokenizer.json", "tokenizer_config.json", "special_tokens_map.json",
    "vocab.txt", "vocab.json", "merges.txt", "sentencepiece.bpe.model",
)  # fmt: skip
#: plotly's browser bundles: only HTML export reads them, and they are most of its size
PLOTLY_DROPPED = ("package_data/plotly.min.js", "package_data/datasets", "labextension")


def _add_tree(tar: tarfile.TarFile, source: Path, name: str, skip: tuple[str, ...] = ()) -> None:
    """Add ``source`` as ``name``, leaving out paths under it that start with one of ``skip``
    and Python's bytecode caches."""

    def keep(info: tarfile.TarInfo) -> tarfile.TarInfo | None:
        inner = info.name[len(name) + 1 :]
        if "__pycache__" in info.name or any(inner.startswith(s) for s in skip):
            return None
        return info

    tar.add(source, arcname=name, filter=keep)


def write_minilm(target: Path) -> None:
    """The packaged model's config and tokenizer, its weights in float16."""
    source = default_model_path()
    target.mkdir(parents=True)
    for name in TOKENIZER_FILES:
        if (source / name).is_file():
            shutil.copyfile(source / name, target / name)
    weights = load_file(source / "model.safetensors")
    half = {k: v.to(torch.float16).contiguous() for k, v in weights.items()}
    save_file(half, target / "model.safetensors", metadata={"format": "pt"})
    (target / "CARRIED.txt").write_text(
        f"float16 copy of the weights of {source} (float32); config and tokenizer unchanged\n"
    )


def _write_mpnet_shape(target: Path) -> bool:
    """all-mpnet-base-v2's config and tokenizer (after ``workbench model fetch``), no weights."""
    source = model_root(models_dir() / "all-mpnet-base-v2")
    if source is None:
        print("  all-mpnet-base-v2 is not fetched (workbench model fetch): no mpnet step there")
        return False
    target.mkdir(parents=True)
    for name in TOKENIZER_FILES:
        if (source / name).is_file():
            shutil.copyfile(source / name, target / name)
    return True


def _tracked_bytes() -> int:
    """Bytes of what a device call sends besides the carried paths: tracked files and
    untracked ones git does not ignore."""
    names = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=REPO, capture_output=True, check=True,
    ).stdout.split(b"\0")  # fmt: skip
    return sum(
        (REPO / n.decode()).stat().st_size for n in names if n and (REPO / n.decode()).is_file()
    )


def prepare() -> int:
    if CARRY.exists():
        shutil.rmtree(CARRY)
    CARRY.mkdir()
    staging = CARRY / "staging"
    made: dict[str, Path] = {}
    print("minilm (float16) ...")
    write_minilm(staging / MINILM)
    made[MINILM] = staging / MINILM
    print("mpnet-shape ...")
    if _write_mpnet_shape(staging / MPNET):
        made[MPNET] = staging / MPNET
    made["wordnet"] = normalised_copy()
    made["wsd-data"] = data_dir() / "WSD_Evaluation_Framework"
    for name, source in made.items():
        print(f"{name} <- {source}")
        with tarfile.open(CARRY / f"{name}.tar.xz", "w:xz", preset=6) as tar:
            _add_tree(tar, source, str(PIECES[name][0]))
    with tarfile.open(CARRY / "site.tar.xz", "w:xz", preset=6) as tar:
        for module, skip in ((nltk, ()), (plotly, PLOTLY_DROPPED)):
            package = Path(module.__file__).parent
            _add_tree(tar, package, package.name, skip=skip)
            for info in package.parent.glob(f"{package.name}-*.dist-info"):  # its version
                _add_tree(tar, info, info.name)
        _add_tree(tar, package.parent / "_plotly_utils", "_plotly_utils")
    shutil.rmtree(staging)
    sizes = {p.name: p.stat().st_size for p in sorted(CARRY.iterdir())}
    tree = _tracked_bytes()
    total = tree + sum(sizes.values())
    manifest = {"pieces": sizes, "tree_bytes": tree, "total_bytes": total,
                "limit_bytes": LIMIT_MIB * 2**20}  # fmt: skip
    (CARRY / "manifest.json").write_text(json.dumps(manifest, indent=1) + "\n")
    for name, size in sizes.items():
        print(f"  {name:24s} {size / 2**20:7.1f} MiB")
    print(f"  {'working tree':24s} {tree / 2**20:7.1f} MiB")
    print(f"  {'in all':24s} {total / 2**20:7.1f} MiB of {LIMIT_MIB} MiB a call may take")
    if total > LIMIT_MIB * 2**20:
        print("too large for one device call", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(prepare())
