"""The command line's one opening of a WSD system: ``wsd eval``, ``train``, ``disambiguate``
and ``compare`` all open theirs here (:func:`workbench.wsd.systems.open_system`, its
progress said on stderr), so every command opens a system by the same rules.

Example::

    opened = open_for_command("best", None, device="cpu")
"""

from __future__ import annotations

import sys
from collections.abc import Mapping
from pathlib import Path

from workbench.encoding.device import DtypeName
from workbench.encoding.pooling import Pooling
from workbench.wsd.levers import TestTimeLevers
from workbench.wsd.opened import OpenedSystem
from workbench.wsd.systems import open_system


def say(message: str) -> None:
    """A progress line of the command, on stderr (stdout holds its results)."""
    print(message, file=sys.stderr, flush=True)


def open_for_command(
    system: str | Path,
    model: str | None = None,
    *,
    device: str | None = None,
    dtype: DtypeName = "auto",
    pooling: Pooling = "mean",
    changes: Mapping[str, object] | None = None,
    train: str | None = None,
    gold: str | None = None,
    levers: TestTimeLevers | None = None,
) -> OpenedSystem:
    """``system`` (a registry name or a saved index folder) opened on ``model`` as
    :func:`~workbench.wsd.systems.open_system` opens it, its progress said by :func:`say`.
    Nothing loads until the system is used."""
    return open_system(system, model, device=device, dtype=dtype, pooling=pooling,
                       changes=changes, train=train, gold=gold, say=say,
                       levers=levers)  # fmt: skip
