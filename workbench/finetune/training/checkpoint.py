"""Per-epoch checkpoints for resuming an interrupted run, in a format that cannot run code.

A checkpoint (``<output>/checkpoint/last.safetensors``) holds everything that decides what
happens next: the trained weights (the parameters that train, not the frozen base: for a LoRA
run its adapters only) and the optimizer state, the scheduler, every random generator's state,
the epoch history, the best dev score so far and the early-stopping counter, plus the options and
data checksums it was made with (a resume with other options or data is refused).
``best.safetensors`` keeps the weights of the best epoch so far (model selection on the dev
metric).

Both are safetensors files: the tensors (weights, optimizer moments, torch's generator states)
as tensors, everything else (scheduler, step counts, Python's and NumPy's generator states,
the run's bookkeeping) as JSON in the file's metadata (:func:`pack_tree`), so loading one never
unpickles anything: a planted or shared run directory cannot run code. The metadata also holds
the SHA-256 of each tensor and of the JSON part, checked on load (one flipped bit is refused),
and a resume checks the bookkeeping's ranges (:func:`bookkeeping_problem`) and the base model's
weights fingerprint recorded in the run's identity (a base replaced in place is refused).
Pickled ``last.pt`` / ``best.pt`` files of earlier versions are refused, never loaded. Each file
is written to a temporary name of this writer and renamed
(:func:`workbench.fileio.atomic_path`), so a process killed while writing leaves the previous
checkpoint; the next run removes what it left.
"""

from __future__ import annotations

import hashlib
import json
import math
import random
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import torch

from workbench.errors import DataError, InputError
from workbench.fileio import atomic_path, remove_stale_temporaries

LAST = "last.safetensors"
BEST = "best.safetensors"
LEGACY = ("last.pt", "best.pt")  # pickled checkpoints of earlier versions: never loaded
FORMAT = "workbench-checkpoint/1"
#: The key of the JSON part's digest among a checkpoint's ``digests`` (no tensor's key: those
#: start with ``/`` or are ``tensor``).
TREE_DIGEST = "__tree__"
#: The most optimizer steps or batches a checkpoint's bookkeeping may count.
MAX_COUNT = 1 << 48


@dataclass
class RunState:
    """The loop's bookkeeping, saved in every checkpoint.

    Attributes:
        epoch: epochs completed.
        history: one dict per completed epoch
            (:class:`workbench.finetune.training.loop.EpochRecord`).
        best: best dev metric so far (None before the first evaluation).
        best_epoch: the epoch that reached it (0: none yet).
        bad_epochs: epochs since the last improvement (early stopping).
        step: optimizer steps done.
        batch: batches of epoch ``epoch + 1`` already trained: an epoch that ``max_minutes``,
            ``max_steps`` or a stop request cut goes on from there when the run is resumed
            (0: none).
    """

    epoch: int = 0
    history: list | None = None
    best: float | None = None
    best_epoch: int = 0
    bad_epochs: int = 0
    step: int = 0
    batch: int = 0


def rng_state() -> dict:
    """States of Python's, NumPy's and torch's (CPU and CUDA) random generators."""
    state = {
        "python": random.getstate(),
        "numpy": np.random.get_state(),
        "torch": torch.get_rng_state(),
    }
    if torch.cuda.is_available():
        state["cuda"] = torch.cuda.get_rng_state_all()
    return state


def set_rng_state(state: dict) -> None:
    """Restore what :func:`rng_state` returned."""
    random.setstate(state["python"])
    np.random.set_state(state["numpy"])
    torch.set_rng_state(state["torch"])
    if "cuda" in state and torch.cuda.is_available():
        torch.cuda.set_rng_state_all(state["cuda"])


# ---------------------------------------------------------------------- a tree as JSON + tensors

_NUMERIC_KINDS = "biuf"  # NumPy dtype kinds an array in the JSON part may have


def pack_tree(obj: Any, tensors: dict[str, torch.Tensor], path: str = "") -> Any:
    """``obj`` as JSON-able data, its tensors moved into ``tensors`` (CPU copies, keyed by
    where they were in ``obj``) and replaced by ``{"__tensor__": key}``.

    Tuples, dicts with non-string keys (an optimizer's parameter ids) and small NumPy arrays
    (a generator's state) are tagged so that :func:`unpack_tree` gives them back as they were.

    Raises:
        TypeError: a value that is not a tensor, array, number, string, bool, None, or a
            list, tuple or dict of them.
    """
    if isinstance(obj, torch.Tensor):
        key = path or "tensor"
        if key in tensors:
            key = f"{key}#{len(tensors)}"
        tensors[key] = obj.detach().to("cpu", copy=True).contiguous()
        return {"__tensor__": key}
    if isinstance(obj, np.ndarray):
        if obj.dtype.kind not in _NUMERIC_KINDS:
            raise TypeError(f"{path}: a numpy array of {obj.dtype} cannot be stored")
        return {"__ndarray__": obj.tolist(), "dtype": obj.dtype.str}
    if isinstance(obj, np.generic):
        return obj.item()
    if obj is None or isinstance(obj, (bool, int, float, str)):
        return obj
    if isinstance(obj, tuple):
        return {"__tuple__": [pack_tree(v, tensors, f"{path}/{i}") for i, v in enumerate(obj)]}
    if isinstance(obj, list):
        return [pack_tree(v, tensors, f"{path}/{i}") for i, v in enumerate(obj)]
    if isinstance(obj, dict):
        if all(isinstance(k, str) and not k.startswith("__") for k in obj):
            return {k: pack_tree(v, tensors, f"{path}/{k}") for k, v in obj.items()}
        return {
            "__items__": [
                [pack_tree(k, tensors, f"{path}/key"), pack_tree(v, tensors, f"{path}/{k}")]
                for k, v in obj.items()
            ]
        }
    raise TypeError(f"{path or 'value'}: a {type(obj).__name__} cannot be stored in a checkpoint")


def unpack_tree(obj: Any, tensors: dict[str, torch.Tensor]) -> Any:
    """The inverse of :func:`pack_tree`: plain data, tuples, dicts, NumPy arrays (numeric
    only) and the tensors it names.

    Raises:
        ValueError: a tag that names no tensor or a non-numeric array (a damaged file).
    """
    if isinstance(obj, list):
        return [unpack_tree(v, tensors) for v in obj]
    if not isinstance(obj, dict):
        return obj
    if "__tensor__" in obj:
        key = obj["__tensor__"]
        if not isinstance(key, str) or key not in tensors:
            raise ValueError(f"the checkpoint names a tensor it does not hold ({key!r})")
        return tensors[key]
    if "__tuple__" in obj:
        return tuple(unpack_tree(v, tensors) for v in obj["__tuple__"])
    if "__ndarray__" in obj:
        dtype = np.dtype(str(obj.get("dtype")))
        if dtype.kind not in _NUMERIC_KINDS:
            raise ValueError(f"the checkpoint holds an array of {dtype}")
        return np.array(obj["__ndarray__"], dtype=dtype)
    if "__items__" in obj:
        return {unpack_tree(k, tensors): unpack_tree(v, tensors) for k, v in obj["__items__"]}
    return {k: unpack_tree(v, tensors) for k, v in obj.items()}


def tensor_digest(tensor: torch.Tensor) -> str:
    """The SHA-256 of a CPU tensor's dtype, shape and bytes (any dtype, bfloat16 included)."""
    t = tensor.detach().to("cpu").contiguous()
    h = hashlib.sha256(f"{t.dtype}{tuple(t.shape)}\n".encode())
    h.update(t.reshape(-1).view(torch.uint8).numpy().tobytes())
    return h.hexdigest()


def save_tree(obj: Any, path: Path) -> None:
    """Write ``obj`` to ``path`` as one safetensors file (tensors + JSON metadata), atomically,
    with the SHA-256 of each tensor (:func:`tensor_digest`) and of the JSON part in its
    metadata (``digests``), which :func:`load_tree` checks; temporaries that killed writers
    left for ``path`` are removed first."""
    from safetensors.torch import save_file

    tensors: dict[str, torch.Tensor] = {}
    tree = json.dumps(pack_tree(obj, tensors))
    digests = {key: tensor_digest(t) for key, t in tensors.items()}
    digests[TREE_DIGEST] = hashlib.sha256(tree.encode("utf-8")).hexdigest()
    remove_stale_temporaries(path.parent, [path.name])
    metadata = {"format": FORMAT, "tree": tree, "digests": json.dumps(digests)}
    with atomic_path(path) as tmp:
        save_file(tensors, str(tmp), metadata=metadata)


def load_tree(path: Path) -> Any:
    """Read what :func:`save_tree` wrote, each tensor and the JSON part checked against the
    digests the file carries (one flipped bit is refused); no code in the file is ever run.

    Raises:
        DataError: a missing, truncated or damaged file (a tensor or the bookkeeping that
            does not match its digest), one without digests, or one of another format.
    """
    from safetensors import SafetensorError, safe_open

    try:
        with safe_open(str(path), framework="pt", device="cpu") as fh:
            meta = fh.metadata() or {}
            tensors = {key: fh.get_tensor(key) for key in fh.keys()}  # noqa: SIM118
        if meta.get("format") != FORMAT:
            raise ValueError(f"not a workbench checkpoint (format {meta.get('format')!r})")
        if "digests" not in meta:
            raise ValueError("it carries no digests of its tensors (an earlier version's)")
        digests = json.loads(meta["digests"])
        if not isinstance(digests, dict) or set(digests) != {*tensors, TREE_DIGEST}:
            raise ValueError("its digests do not list its tensors")
        tree = meta["tree"]
        if hashlib.sha256(tree.encode("utf-8")).hexdigest() != digests[TREE_DIGEST]:
            raise ValueError("its bookkeeping does not match its digest")
        for key, tensor in tensors.items():
            if tensor_digest(tensor) != digests[key]:
                raise ValueError(f"tensor {key!r} does not match its digest")
        return unpack_tree(json.loads(tree), tensors)
    except (SafetensorError, OSError, ValueError, KeyError, TypeError, RecursionError) as exc:
        raise DataError(
            f"{path} is damaged or not a workbench checkpoint ({exc}); resume is impossible: "
            "start a new run (without --resume)"
        ) from exc


# ---------------------------------------------------------------------- checkpoints


def trained_state_dict(model: torch.nn.Module) -> dict[str, torch.Tensor]:
    """Detached CPU copies of the parameters that train (``requires_grad``): what a run changes;
    the frozen rest is rebuilt from the base model."""
    return {
        k: v.detach().to("cpu", copy=True) for k, v in model.named_parameters() if v.requires_grad
    }


def load_trained(model: torch.nn.Module, state: dict[str, torch.Tensor], path: Path) -> None:
    """Put weights of :func:`trained_state_dict` back into ``model``.

    Raises:
        DataError: ``state`` lacks a parameter that trains in ``model`` or names one it does
            not have (a checkpoint of another model).
    """
    trained = {k for k, v in model.named_parameters() if v.requires_grad}
    missing, unknown = trained - set(state), set(state) - set(model.state_dict())
    if missing or unknown:
        raise DataError(
            f"{path} does not hold this model's trained weights ({len(missing)} missing, "
            f"{len(unknown)} unknown: {sorted(missing or unknown)[:2]}); start a new run"
        )
    model.load_state_dict(state, strict=False)


def save_weights(model: torch.nn.Module, path: Path) -> None:
    """Write a model's trained weights (:func:`trained_state_dict`) to ``path``, atomically."""
    save_tree(trained_state_dict(model), path)


def load_weights(path: Path) -> dict[str, torch.Tensor]:
    """The weights :func:`save_weights` wrote (:class:`DataError` if damaged)."""
    state = load_tree(path)
    if not isinstance(state, dict) or not all(isinstance(v, torch.Tensor) for v in state.values()):
        raise DataError(f"{path} holds no model weights")
    return state


def save_checkpoint(
    directory: Path,
    model: torch.nn.Module,
    optimizer: torch.optim.Optimizer,
    scheduler: torch.optim.lr_scheduler.LRScheduler,
    state: RunState,
    identity: dict,
) -> None:
    """Write ``last.safetensors`` (see the module docstring). ``identity``: options and data
    checksums."""
    save_tree(
        {
            "model": trained_state_dict(model),
            "optimizer": optimizer.state_dict(),
            "scheduler": scheduler.state_dict(),
            "rng": rng_state(),
            "state": state.__dict__,
            "identity": identity,
        },
        directory / LAST,
    )


def load_checkpoint(
    directory: Path, identity: dict, defaults: Mapping[str, Any] | None = None
) -> dict:
    """Read ``last.safetensors`` and check it was made by the same run (options and data).
    An option the checkpoint does not record (one added to workbench after it was written)
    counts as the same when this run leaves it at its default (``defaults``: every option's).

    Raises:
        InputError: no checkpoint there (or only a pickled one of an earlier version, which is
            never loaded), or one made with other options or data.
        DataError: a damaged (truncated) checkpoint.
    """
    path = directory / LAST
    remove_stale_temporaries(directory, [LAST, BEST])
    if not path.is_file():
        legacy = [name for name in LEGACY if (directory / name).is_file()]
        if legacy:
            raise InputError(
                f"{directory / legacy[0]} is a pickled checkpoint of an earlier workbench "
                "version; it is not loaded (a pickle can run code): start a new run"
            )
        raise InputError(f"Nothing to resume: no checkpoint at {path}.")
    ckpt = load_tree(path)
    fields = ("model", "optimizer", "scheduler", "rng", "state", "identity")
    if not isinstance(ckpt, dict) or any(k not in ckpt for k in fields):
        raise DataError(f"{path} is not a complete workbench checkpoint: start a new run")
    saved, bookkeeping = ckpt["identity"], ckpt["state"]
    known = set(RunState.__dataclass_fields__)
    if not isinstance(saved, dict) or not isinstance(bookkeeping, dict) or set(bookkeeping) - known:
        raise DataError(f"{path} is not a complete workbench checkpoint: start a new run")
    fingerprints = saved.get("base_fingerprint"), identity.get("base_fingerprint")
    if all(fingerprints) and fingerprints[0] != fingerprints[1]:
        raise InputError(
            f"The checkpoint in {directory} was made on other weights of the base model "
            f"{identity.get('base')!r} (fingerprint {fingerprints[0]}, now {fingerprints[1]}): "
            "it was replaced since the run began, and a resume would train on other frozen "
            "layers. Put the original base back, or start a new run (without --resume)."
        )
    options = identity.get("options")
    epochs = options.get("epochs") if isinstance(options, dict) else None
    problem = bookkeeping_problem(bookkeeping, epochs if isinstance(epochs, int) else None)
    if problem:
        raise DataError(f"{path} is damaged: {problem}; start a new run (without --resume)")
    diff = sorted(
        k for k in set(saved) | set(identity) if not _same(k, saved, identity, defaults or {})
    )
    if diff:
        raise InputError(
            f"The checkpoint in {directory} was made with other settings ({', '.join(diff)} "
            "differ): resume with the same options and data, or start a new run."
        )
    return ckpt


def _same(key: str, saved: dict, identity: dict, defaults: Mapping[str, Any]) -> bool:
    """Whether a checkpoint's identity entry ``key`` is this run's. Of the ``options`` only
    this run's are compared: a checkpoint of an earlier version records every task's options
    in one flat dict (another task's at their defaults, which did nothing), and one it does
    not record is the same when this run's is its default in ``defaults``. The base is the
    same when the fingerprints of its weights are, whatever its name (``runs/base`` and
    ``/home/me/runs/base`` are one folder); without fingerprints its name decides."""
    mine, theirs = identity.get(key), saved.get(key)
    fingerprints = saved.get("base_fingerprint"), identity.get("base_fingerprint")
    if key == "base" and all(fingerprints) and fingerprints[0] == fingerprints[1]:
        return True
    if key == "options" and isinstance(mine, dict) and isinstance(theirs, dict):
        return all(
            theirs[k] == v if k in theirs else k in defaults and defaults[k] == v
            for k, v in mine.items()
        )
    return theirs == mine


def _whole(value: Any, low: int, high: int) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and low <= value <= high


def bookkeeping_problem(state: dict[str, Any], epochs: int | None = None) -> str | None:
    """Why a checkpoint's bookkeeping (:class:`RunState`'s fields) cannot be a run's, in
    words; None when every field is in its range: ``epoch`` whole, 0 to ``epochs`` (the run's;
    None: :data:`MAX_COUNT`), ``best_epoch`` up to the epoch being trained, ``bad_epochs`` up
    to the epochs recorded, ``step`` and ``batch`` whole and 0 to :data:`MAX_COUNT`, ``best``
    a number (not infinite) or absent, ``history`` a list of records."""
    most = MAX_COUNT if epochs is None else epochs
    epoch = state.get("epoch", 0)
    if not _whole(epoch, 0, most):
        return f"its epoch is {json.dumps(epoch)[:40]}, not a whole number from 0 to {most}"
    history = state.get("history")
    if history is not None and (
        not isinstance(history, list) or not all(isinstance(h, dict) for h in history)
    ):
        return "its history is not a list of epoch records"
    for name, high in (("best_epoch", epoch + 1), ("bad_epochs", len(history or []))):
        if not _whole(state.get(name, 0), 0, high):
            value = json.dumps(state.get(name))[:40]
            return f"its {name} is {value}, not a whole number from 0 to {high}"
    for name in ("step", "batch"):
        if not _whole(state.get(name, 0), 0, MAX_COUNT):
            return f"its {name} count is {json.dumps(state.get(name))[:40]}, not 0 or more"
    best = state.get("best")  # NaN kept: a metric undefined on the dev data is recorded so
    if best is not None and (
        isinstance(best, bool) or not isinstance(best, (int, float)) or math.isinf(best)
    ):
        return f"its best dev score is {json.dumps(best)[:40]}, not a number"
    return None
