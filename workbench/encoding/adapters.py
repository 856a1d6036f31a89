"""A model directory of LoRA adapters on a base model, in PEFT's own format, loaded as one model.

Layout of an adapter directory:

* ``adapter_config.json`` + ``adapter_model.safetensors``: what ``PeftModel.save_pretrained``
  writes (``PeftModel.from_pretrained(base, directory)`` loads it in PEFT itself);
* ``base_model.json`` (:data:`BASE_RECORD`): which base model the adapters were trained on
  (its name, whether it is the packaged default, its weights' fingerprint,
  :func:`workbench.encoding.models.weights_fingerprint`) and the SHA-256 of the adapter
  weights.

Loading (:func:`apply_adapter`) reads the JSON config and the safetensors weights only, so no
code in the directory ever runs (a ``*.bin`` adapter, which PEFT would unpickle, is refused);
the adapters are then merged into the base weights in memory, so the model runs at the base
model's speed. A damaged file, a missing weight or an adapter recorded for another base is a
:class:`~workbench.errors.ModelLoadError` naming the file and both fingerprints. Resolving the
base model by its recorded name is :func:`workbench.encoding.models.resolve_model`'s work.

Example::

    record = read_base_record("runs/wsd")        # AdapterBase(name=..., fingerprint=...)
    check_base(Path("runs/wsd"), record, fingerprint_of_the_loaded_base)
    model = apply_adapter(base_model, Path("runs/wsd"))   # merged, eval mode
"""

from __future__ import annotations

import json
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from workbench.errors import ModelLoadError
from workbench.fileio import atomic_path, sha256_file

if TYPE_CHECKING:
    from torch import nn

ADAPTER_CONFIG = "adapter_config.json"
ADAPTER_WEIGHTS = "adapter_model.safetensors"
#: PEFT's pickled adapter file: never loaded.
PICKLED_WEIGHTS = "adapter_model.bin"
BASE_RECORD = "base_model.json"
RECORD_FORMAT = "workbench-adapter/1"


@dataclass(frozen=True)
class AdapterBase:
    """What an adapter directory records of its base model and of its own weights.

    Attributes:
        name: the base model as the user named it (a hub id or a directory), or the packaged
            default's label when ``packaged``.
        packaged: the base is the packaged default model (found wherever it is installed).
        fingerprint: the base model's weights fingerprint when the adapters were saved.
        adapter_sha256: SHA-256 of ``adapter_model.safetensors``.
    """

    name: str
    packaged: bool
    fingerprint: str
    adapter_sha256: str


def is_adapter_dir(path: str | Path) -> bool:
    """Whether ``path`` is a directory of adapters (it holds :data:`ADAPTER_CONFIG`)."""
    return (Path(path) / ADAPTER_CONFIG).is_file()


def save_adapter(
    model: nn.Module, directory: Path, name: str, packaged: bool, fingerprint: str
) -> AdapterBase:
    """Save the LoRA adapters of a peft-wrapped ``model`` into ``directory`` in PEFT's format
    (safetensors), naming the base ``name`` in ``adapter_config.json`` (not where it was
    installed), and write ``base_model.json`` (:func:`write_base_record`); returns the record.
    """
    save_pretrained = getattr(model, "save_pretrained", None)
    if save_pretrained is None or not hasattr(model, "peft_config"):
        raise ModelLoadError(f"{type(model).__name__} carries no LoRA adapters to save.")
    directory.mkdir(parents=True, exist_ok=True)
    save_pretrained(str(directory), safe_serialization=True)
    (directory / "README.md").unlink(missing_ok=True)  # peft's empty model card template
    config = adapter_config(directory)
    config["base_model_name_or_path"] = name
    with atomic_path(directory / ADAPTER_CONFIG) as tmp:
        tmp.write_text(json.dumps(config, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    return write_base_record(directory, name, packaged, fingerprint)


def write_base_record(directory: Path, name: str, packaged: bool, fingerprint: str) -> AdapterBase:
    """Write ``base_model.json`` beside adapters already saved in ``directory`` (atomically),
    with the SHA-256 of their weights; returns what it wrote."""
    record = AdapterBase(name, packaged, fingerprint, sha256_file(directory / ADAPTER_WEIGHTS))
    with atomic_path(directory / BASE_RECORD) as tmp:
        data = {"format": RECORD_FORMAT, **asdict(record)}
        tmp.write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")
    return record


def read_base_record(directory: str | Path) -> AdapterBase:
    """The base record of an adapter directory.

    Raises:
        ModelLoadError: naming the file: missing, unreadable, or not a workbench record.
    """
    path = Path(directory) / BASE_RECORD
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        if not isinstance(data, dict) or data.get("format") != RECORD_FORMAT:
            raise ValueError(f"not a {RECORD_FORMAT} record")
        record = AdapterBase(
            name=str(data["name"]),
            packaged=bool(data["packaged"]),
            fingerprint=str(data["fingerprint"]),
            adapter_sha256=str(data["adapter_sha256"]),
        )
    except FileNotFoundError:
        raise ModelLoadError(
            f"{path} is missing: the adapters in {directory} do not say which base model they "
            "were trained on, so they cannot be loaded."
        ) from None
    except (OSError, ValueError, KeyError, TypeError, RecursionError) as exc:
        raise ModelLoadError(f"{path} cannot be read as an adapter's base record ({exc}).") from exc
    return record


def check_base(directory: Path, record: AdapterBase, fingerprint: str) -> None:
    """Refuse adapters recorded for another base than the one found (``fingerprint``), and
    adapter weights whose bytes changed since they were saved.

    Raises:
        ModelLoadError: naming the file and the fingerprints.
    """
    weights = directory / ADAPTER_WEIGHTS
    if (directory / PICKLED_WEIGHTS).exists() and not weights.is_file():
        raise ModelLoadError(
            f"{directory / PICKLED_WEIGHTS} is a pickled adapter; it is never loaded (a pickle "
            f"can run code): save the adapter as {ADAPTER_WEIGHTS}."
        )
    if not weights.is_file():
        raise ModelLoadError(f"{weights} is missing: the adapter directory is incomplete.")
    if record.fingerprint != fingerprint:
        raise ModelLoadError(
            f"The adapters in {weights} were trained on base model '{record.name}' with "
            f"fingerprint {record.fingerprint}, but the base model found has fingerprint "
            f"{fingerprint}: they belong to another model and are not loaded."
        )
    if sha256_file(weights) != record.adapter_sha256:
        raise ModelLoadError(
            f"{weights} is damaged or was replaced: its SHA-256 is not the one recorded in "
            f"{directory / BASE_RECORD} (base model '{record.name}', fingerprint "
            f"{record.fingerprint})."
        )


def adapter_config(directory: Path) -> dict[str, Any]:
    """The adapter's ``adapter_config.json`` as a dict.

    Raises:
        ModelLoadError: naming the file: unreadable, or not a LoRA adapter's config.
    """
    path = directory / ADAPTER_CONFIG
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError, RecursionError) as exc:
        raise ModelLoadError(f"{path} cannot be read as an adapter config ({exc}).") from exc
    if not isinstance(data, dict) or data.get("peft_type") != "LORA":
        raise ModelLoadError(f"{path} is not the config of a LoRA adapter (peft_type LORA).")
    return data


@contextmanager
def quiet_peft() -> Iterator[None]:
    """Silence the deprecation notice transformers gives when peft wraps a model
    (``is_gradient_checkpointing``): noise for the user, nothing they can act on."""
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=".*is_gradient_checkpointing.*")
        yield


def load_adapter(base: nn.Module, directory: Path, trainable: bool = False) -> nn.Module:
    """``base`` wrapped by peft with the LoRA adapters of ``directory`` (unmerged); with
    ``trainable`` the adapters train on (the base stays frozen). Only the JSON config and the
    safetensors weights are read.

    Raises:
        ModelLoadError: naming the file: a config peft refuses, weights that do not fit the
            base (missing or extra adapter tensors, other shapes), or a damaged file.
    """
    from peft import LoraConfig, get_peft_model, set_peft_model_state_dict
    from safetensors import SafetensorError
    from safetensors.torch import load_file

    config = adapter_config(directory)
    weights = directory / ADAPTER_WEIGHTS
    try:
        lora = LoraConfig.from_pretrained(str(directory))
        lora.inference_mode = not trainable
        lora.base_model_name_or_path = None  # the record names the base; peft need not
        with quiet_peft():
            model = get_peft_model(base, lora)
    except (ValueError, TypeError, KeyError) as exc:
        raise ModelLoadError(
            f"{directory / ADAPTER_CONFIG} does not fit the base model "
            f"({config.get('target_modules')}): {exc}"
        ) from exc
    try:
        state = load_file(str(weights))
    except (SafetensorError, OSError) as exc:
        raise ModelLoadError(f"{weights} is damaged or not a safetensors file ({exc}).") from exc
    try:
        result = set_peft_model_state_dict(model, state)
    except RuntimeError as exc:  # a shape that does not fit
        raise ModelLoadError(f"{weights} does not fit the base model: {exc}") from exc
    missing = [k for k in getattr(result, "missing_keys", []) if "lora_" in k]
    unexpected = list(getattr(result, "unexpected_keys", []))
    if missing or unexpected:
        what = missing[:2] or unexpected[:2]
        raise ModelLoadError(
            f"{weights} does not hold the adapter weights its config describes "
            f"({len(missing)} missing, {len(unexpected)} unexpected: {what})."
        )
    return model


def apply_adapter(base: nn.Module, directory: Path) -> nn.Module:
    """The base model with the LoRA adapters of ``directory`` merged into its weights, in eval
    mode (:func:`load_adapter`, then peft's ``merge_and_unload``)."""
    merged: nn.Module = getattr(load_adapter(base, directory), "merge_and_unload")()  # noqa: B009
    merged.eval()
    return merged
