"""Write a file so that readers never see it half-written: to a temporary name beside it,
then one rename over the final path (``os.replace`` is atomic on POSIX and Windows).

Example::

    with atomic_path("out/keys.txt") as tmp:
        tmp.write_text("d000.s000.t000 bank%1:14:00::\\n")
    # out/keys.txt now holds the whole text; on an exception it is untouched
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path


@contextmanager
def atomic_path(path: str | os.PathLike[str], suffix: str = "") -> Iterator[Path]:
    """Yield a temporary path in ``path``'s directory; on success rename it over ``path``,
    on failure delete it. ``suffix`` ends the temporary name (``np.savez`` adds ``.npz`` to
    names without it, ``np.save`` ``.npy``)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.{uuid.uuid4().hex[:8]}.tmp{suffix}")
    try:
        yield tmp
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
