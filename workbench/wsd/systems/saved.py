"""A saved index folder (``workbench wsd train --out DIR``, then ``--index DIR`` or the app's
"saved:" choices): it answers as it is, read with the model's encoder.

Example::

    SavedIndex(Path("my-index")).open(Request()).name   # 'saved'; loaded when first used
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from workbench.encoding.encoder import Encoder
from workbench.encoding.rows import Progress
from workbench.wsd.builds import SystemProgress
from workbench.wsd.config import EncoderInfo
from workbench.wsd.opened import OpenedSystem
from workbench.wsd.store import load_index
from workbench.wsd.systems.base import Request


@dataclass(frozen=True)
class SavedIndex:
    """The index saved in the folder ``path``: no system of the registry (it is offered by its
    folder, not by a name), opened as one."""

    path: Path
    name = "saved"

    def open(self, request: Request) -> OpenedSystem:
        """The saved index, loaded (and checked against the encoder) when first used."""
        path = self.path

        def saved(enc: Encoder, progress: Progress, said: SystemProgress) -> Any:
            return load_index(path, EncoderInfo.of(enc))

        return OpenedSystem(self.name, request.encoder_of(), whole=saved, pos_probe=None)
