"""The project's own exception types.

Every error a user can cause is raised at the boundary where the bad value enters, as one of
these, with a message that names the offending item and says what to do. Front ends (CLI, app)
catch :class:`WorkbenchError` and show its message instead of a traceback.
"""

from __future__ import annotations


class WorkbenchError(Exception):
    """Base class of every error the workbench raises on purpose."""


class InputError(WorkbenchError, ValueError):
    """Bad user input: empty text, a non-string item, a word not in the sentence, ..."""


class ModelLoadError(WorkbenchError):
    """A model name or path that cannot be loaded (unknown, missing offline, broken files)."""


class CacheError(WorkbenchError):
    """A cache entry that cannot be used: made by another model, truncated, or corrupted."""


class DataError(WorkbenchError):
    """A corpus or data file that is missing or malformed."""


class LimitError(DataError):
    """Content past a limit of :data:`workbench.limits.LIMITS` (``WORKBENCH_LIMIT_<NAME>``):
    refused for this run, never taken for damage, so a cached file past a lowered limit is
    kept, not deleted."""


class MismatchError(WorkbenchError):
    """A fitted object (standardizer, sense index) applied to vectors of another model/config."""


class EncodingError(WorkbenchError):
    """An encoding run that could not finish: the device ran out of memory on a batch, or a
    stage of the pipeline failed; nothing is written as if complete."""


class TrainingError(WorkbenchError):
    """A training run that cannot go on: its loss became NaN or infinite. The run stops at
    once; its last good checkpoint (of the last complete epoch) is kept."""


class OutputError(WorkbenchError, OSError):
    """An output that cannot be written (a missing or read-only directory, a full disk), or
    that would replace an input or a file the user did not name. Also an ``OSError``."""
