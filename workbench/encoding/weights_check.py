"""A model's weights checked finite when it is loaded: every floating tensor of its weight
files, with no NaN and no infinity.

What comes out of a model with NaN weights depends on the CPU's kernels (one attention kernel
propagates the NaN, another returns finite, meaningless vectors), so the weights themselves are
checked, once per file:

* a ``.safetensors`` file is scanned tensor by tensor from the offsets its header gives, a
  chunk of at most :data:`CHUNK_BYTES` at a time read with ``numpy`` (the file is never read
  whole); a value is NaN or infinite when all bits of its exponent are set (the one test that
  holds for float64, float32, float16, bfloat16 and the 8-bit floats, none of which need
  converting);
* a model without safetensors weights (a ``pytorch_model.bin``, a hub model) is checked on
  the state dict that was loaded (:func:`check_state_dict`), never by unpickling anything.

The verdict on a file is kept in the process by the file's path, size, ``mtime_ns`` and inode
(:func:`check_file`): loading the same model again does not scan it again, and a file replaced
or rewritten is scanned anew.

Example::

    check_file(Path("model/model.safetensors"))   # ModelLoadError naming the tensor
    check_model(model, Path("model"))             # after AutoModel.from_pretrained
"""

from __future__ import annotations

import functools
import json
import math
import os
import stat
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from workbench.errors import ModelLoadError
from workbench.limits import limit

if TYPE_CHECKING:
    import torch
    from torch import nn

#: Bytes of one tensor read and checked at a time.
CHUNK_BYTES = 8 << 20
#: Elements of a loaded tensor checked at a time.
CHUNK_ELEMENTS = 1 << 22

#: Per floating dtype of safetensors: the unsigned integer of its width (little-endian) and the
#: mask of its exponent bits (E4M3: exponent and mantissa, its only NaN; E8M0: all bits). A
#: value is NaN or infinite exactly when ``bits & mask == mask``.
FLOAT_BITS: dict[str, tuple[str, int]] = {
    "F64": ("<u8", 0x7FF0_0000_0000_0000),
    "F32": ("<u4", 0x7F80_0000),
    "F16": ("<u2", 0x7C00),
    "BF16": ("<u2", 0x7F80),
    "F8_E5M2": ("u1", 0x7C),
    "F8_E4M3": ("u1", 0x7F),
    "F8_E8M0": ("u1", 0xFF),
}
#: Item sizes of the other safetensors dtypes (not checked, but their extents are).
OTHER_SIZES = {
    "I64": 8, "U64": 8, "I32": 4, "U32": 4, "I16": 2, "U16": 2,
    "I8": 1, "U8": 1, "BOOL": 1,
}  # fmt: skip

#: Weight files of a model folder in the order transformers prefers them; a shard index's
#: ``weight_map`` names the shards.
SAFETENSORS = "model.safetensors"
SAFETENSORS_INDEX = "model.safetensors.index.json"


def non_finite_bits(raw: bytes | memoryview, dtype: str) -> int:
    """How many values of safetensors ``dtype`` in ``raw`` (little-endian bytes) are NaN or
    infinite; 0 for integer and boolean dtypes.

    Example::

        non_finite_bits(np.array([1, np.nan], "<f4").tobytes(), "F32")  # 1
    """
    if dtype not in FLOAT_BITS:
        return 0
    kind, mask = FLOAT_BITS[dtype]
    bits = np.frombuffer(raw, dtype=kind)
    return int(np.count_nonzero((bits & np.array(mask, dtype=kind)) == mask))


def item_size(dtype: str) -> int | None:
    """Bytes per value of the safetensors ``dtype``; None for one this module does not know."""
    if dtype in FLOAT_BITS:
        return np.dtype(FLOAT_BITS[dtype][0]).itemsize
    return OTHER_SIZES.get(dtype)


def _header(path: Path, fh: Any, size: int) -> tuple[dict[str, Any], int]:
    """The header of the open safetensors file ``fh`` of ``size`` bytes and where its data
    begins, its length checked against the file and the ``json_bytes`` limit."""
    prefix = fh.read(8)
    length = int.from_bytes(prefix, "little") if len(prefix) == 8 else -1
    if not 0 < length <= min(size - 8, limit("json_bytes")):
        raise ModelLoadError(f"{path} is not a safetensors file (a header of {length:,} bytes)")
    try:
        header = json.loads(fh.read(length))
    except (ValueError, RecursionError) as exc:
        raise ModelLoadError(f"{path} has a damaged safetensors header ({exc})") from exc
    if not isinstance(header, dict):
        raise ModelLoadError(f"{path} has a damaged safetensors header (not a JSON object)")
    return header, 8 + length


def _extent(path: Path, key: str, info: Any, data_bytes: int) -> tuple[str, int, int]:
    """The dtype and byte range of tensor ``key``, checked to lie in the file and to hold
    exactly its shape."""
    try:
        dtype = str(info["dtype"])
        shape = [int(n) for n in info["shape"]]
        begin, end = (int(n) for n in info["data_offsets"])
    except (TypeError, KeyError, ValueError) as exc:
        raise ModelLoadError(f"{path}: tensor '{key}' has a damaged header entry ({exc})") from exc
    itemsize = item_size(dtype)
    if itemsize is None:
        raise ModelLoadError(f"{path}: tensor '{key}' has an unknown dtype {dtype!r}")
    if min(shape, default=0) < 0 or not 0 <= begin <= end <= data_bytes:
        raise ModelLoadError(
            f"{path}: tensor '{key}' lies outside the file (bytes {begin:,} to {end:,} of "
            f"{data_bytes:,})"
        )
    if end - begin != math.prod(shape) * itemsize:
        raise ModelLoadError(
            f"{path}: tensor '{key}' of shape {shape} ({dtype}) does not fill its "
            f"{end - begin:,} bytes"
        )
    return dtype, begin, end


def scan_safetensors(path: Path, chunk_bytes: int = CHUNK_BYTES) -> str | None:
    """Why the safetensors file ``path`` cannot be trusted (a tensor with NaN or infinite
    values, named, or a damaged header), None when every floating tensor is finite. Each
    tensor is read from its header's offsets, ``chunk_bytes`` at a time.

    Raises:
        ModelLoadError: the file cannot be opened or read.
    """
    try:
        with open(path, "rb") as fh:
            info = os.fstat(fh.fileno())
            if not stat.S_ISREG(info.st_mode):
                return f"{path} is not a regular file"
            header, start = _header(path, fh, info.st_size)
            data_bytes = info.st_size - start
            for key, entry in header.items():
                if key == "__metadata__":
                    continue
                dtype, begin, end = _extent(path, key, entry, data_bytes)
                if dtype not in FLOAT_BITS:
                    continue
                itemsize = np.dtype(FLOAT_BITS[dtype][0]).itemsize
                step = max(1, chunk_bytes // itemsize) * itemsize
                fh.seek(start + begin)
                bad, left = 0, end - begin
                while left > 0:
                    raw = fh.read(min(step, left))
                    if not raw:
                        return f"{path} ends inside tensor '{key}'"
                    left -= len(raw)
                    bad += non_finite_bits(raw, dtype)
                if bad:
                    return non_finite_message(str(path), key, bad)
    except ModelLoadError as exc:
        return str(exc)
    except OSError as exc:
        raise ModelLoadError(f"{path} cannot be read: {exc.strerror or exc}") from exc
    return None


def non_finite_message(where: str, key: str, bad: int) -> str:
    """The refusal of a model whose tensor ``key`` in ``where`` holds ``bad`` NaN or infinite
    values."""
    return (
        f"model weights in {where} are non-finite: tensor '{key}' holds {bad:,} NaN or "
        f"infinite value{'s' * (bad != 1)}, so the model is not loaded (its vectors would mean "
        "nothing)"
    )


@functools.lru_cache(maxsize=256)
def _verdict(path: str, size: int, mtime_ns: int, inode: int) -> str | None:
    # one scan per file and process while its size, mtime and inode stay the same
    return scan_safetensors(Path(path))


def file_identity(path: Path) -> tuple[str, int, int, int]:
    """``path`` resolved, with its size, ``mtime_ns`` and inode: what a kept verdict is kept
    by."""
    real = path.resolve()
    info = real.stat()
    return str(real), info.st_size, info.st_mtime_ns, info.st_ino


def check_file(path: Path) -> None:
    """Refuse the safetensors file ``path`` when a floating tensor in it holds NaN or an
    infinity, or its header is damaged (:func:`scan_safetensors`); the verdict is kept in the
    process by :func:`file_identity`, so an unchanged file is scanned once.

    Raises:
        ModelLoadError: naming the file and the tensor.
    """
    try:
        identity = file_identity(path)
    except OSError as exc:
        raise ModelLoadError(f"{path} cannot be read: {exc.strerror or exc}") from exc
    problem = _verdict(*identity)
    if problem is not None:
        raise ModelLoadError(problem)


def safetensors_files(folder: Path) -> list[Path]:
    """The safetensors weight files that transformers loads from the model folder ``folder``:
    ``model.safetensors``, else the shards its index names (each checked to lie inside the
    folder); none for a folder of other weights.

    Raises:
        ModelLoadError: an index that cannot be read or names a shard outside the folder.
    """
    single = folder / SAFETENSORS
    if single.is_file():
        return [single]
    index = folder / SAFETENSORS_INDEX
    if not index.is_file():
        return []
    try:
        weight_map = json.loads(index.read_text(encoding="utf-8"))["weight_map"]
        names = sorted({str(name) for name in weight_map.values()})
    except (OSError, ValueError, KeyError, TypeError, AttributeError, RecursionError) as exc:
        raise ModelLoadError(f"{index} cannot be read as a shard index ({exc})") from exc
    root = folder.resolve()
    shards = [(folder / name) for name in names]
    for shard in shards:
        if not shard.resolve().is_relative_to(root):
            raise ModelLoadError(f"{index} names a shard outside its folder: {shard.name!r}")
    return shards


def non_finite_tensor(tensor: torch.Tensor) -> int:
    """How many values of ``tensor`` are NaN or infinite (0 unless it is floating), counted
    :data:`CHUNK_ELEMENTS` at a time."""
    import torch

    if not tensor.is_floating_point() or tensor.is_meta or tensor.numel() == 0:
        return 0
    flat = tensor.detach().reshape(-1)
    bad = 0
    for start in range(0, flat.numel(), CHUNK_ELEMENTS):
        part = flat[start : start + CHUNK_ELEMENTS]
        bad += int(part.numel() - int(torch.isfinite(part).sum()))
    return bad


def check_state_dict(state: dict[str, torch.Tensor], where: str) -> None:
    """Refuse the loaded weights ``state`` when a floating tensor holds NaN or an infinity.

    Raises:
        ModelLoadError: naming ``where`` and the tensor.
    """
    for key, tensor in state.items():
        bad = non_finite_tensor(tensor)
        if bad:
            raise ModelLoadError(non_finite_message(where, key, bad))


#: The loaded models whose weights were checked, by the identities of their weight files.
_CHECKED_STATES: set[tuple[tuple[str, int, int, int], ...]] = set()


def check_model(model: nn.Module, folder: Path | None) -> None:
    """Refuse a model just loaded (from the local ``folder``, or from the hub when None) whose
    weights hold NaN or an infinity: its safetensors files scanned (:func:`check_file`), else
    its loaded state dict (:func:`check_state_dict`), kept as checked by the identities of the
    folder's ``.bin`` files.

    Raises:
        ModelLoadError: naming the file (or the folder) and the tensor.
    """
    files = safetensors_files(folder) if folder is not None else []
    for path in files:
        check_file(path)
    if files:
        return
    bins = sorted(folder.glob("pytorch_model*.bin")) if folder is not None else []
    key = tuple(file_identity(path) for path in bins)
    if key and key in _CHECKED_STATES:
        return
    hub_id = str(getattr(model, "name_or_path", "the model"))
    where = str(bins[0]) if len(bins) == 1 else (str(folder) if folder is not None else hub_id)
    check_state_dict(model.state_dict(), where)
    if key:
        _CHECKED_STATES.add(key)
