"""Per-epoch checkpoints for resuming an interrupted run.

A checkpoint (``<output>/checkpoint/last.pt``) holds everything that decides what happens next:
model and optimizer state, the scheduler, every random generator's state, the epoch history,
the best dev score so far and the early-stopping counter, plus the options and data checksums
it was made with (a resume with other options or data is refused). It is written atomically
(temporary file, then rename), so a process killed while writing leaves the previous one.
``best.pt`` keeps the weights of the best epoch so far (model selection on the dev metric).
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch

from workbench.errors import InputError
from workbench.fileio import atomic_path

LAST = "last.pt"
BEST = "best.pt"


@dataclass
class RunState:
    """The loop's bookkeeping, saved in every checkpoint.

    Attributes:
        epoch: epochs completed.
        history: one dict per completed epoch (see :class:`workbench.finetune.loop.EpochRecord`).
        best: best dev metric so far (None before the first evaluation).
        best_epoch: the epoch that reached it (0: none yet).
        bad_epochs: epochs since the last improvement (early stopping).
        step: optimizer steps done.
    """

    epoch: int = 0
    history: list | None = None
    best: float | None = None
    best_epoch: int = 0
    bad_epochs: int = 0
    step: int = 0


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


def atomic_save(obj: object, path: Path) -> None:
    """``torch.save`` to a temporary file, then rename over ``path``."""
    with atomic_path(path) as tmp:
        torch.save(obj, tmp)


def cpu_state_dict(model: torch.nn.Module) -> dict[str, torch.Tensor]:
    """A detached CPU copy of a model's state dict."""
    return {k: v.detach().to("cpu", copy=True) for k, v in model.state_dict().items()}


def save_checkpoint(
    directory: Path,
    model: torch.nn.Module,
    optimizer: torch.optim.Optimizer,
    scheduler: torch.optim.lr_scheduler.LRScheduler,
    state: RunState,
    identity: dict,
) -> None:
    """Write ``last.pt`` (see the module docstring). ``identity``: options and data checksums."""
    atomic_save(
        {
            "model": cpu_state_dict(model),
            "optimizer": optimizer.state_dict(),
            "scheduler": scheduler.state_dict(),
            "rng": rng_state(),
            "state": state.__dict__,
            "identity": identity,
        },
        directory / LAST,
    )


def load_checkpoint(directory: Path, identity: dict) -> dict:
    """Read ``last.pt`` and check it was made by the same run (options and data).

    Raises:
        InputError: no checkpoint there, or one made with other options or data.
    """
    path = directory / LAST
    if not path.is_file():
        raise InputError(f"Nothing to resume: no checkpoint at {path}.")
    ckpt = torch.load(path, map_location="cpu", weights_only=False)
    saved = ckpt["identity"]
    diff = sorted(k for k in set(saved) | set(identity) if saved.get(k) != identity.get(k))
    if diff:
        raise InputError(
            f"The checkpoint in {directory} was made with other settings ({', '.join(diff)} "
            "differ): resume with the same options and data, or start a new run."
        )
    return ckpt
