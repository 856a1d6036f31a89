"""A model directory of what training added to a base model, loaded as one model: LoRA adapters
in PEFT's own format, or the trained layers themselves.

Layout of an adapter directory, one of two forms:

* LoRA: ``adapter_config.json`` + ``adapter_model.safetensors``, what ``PeftModel.save_pretrained``
  writes (``PeftModel.from_pretrained(base, directory)`` loads it in PEFT itself);
* trained layers: ``trained_layers.safetensors`` (:data:`LAYER_WEIGHTS`), the full weights of the
  layers a ``top_layers`` run trained, under the base model's own parameter names
  (``encoder.layer.5.attention.self.query.weight``, ...), float32;

and in both ``base_model.json`` (:data:`BASE_RECORD`): which base model they were trained on (its
name, whether it is the packaged default, its weights' fingerprint,
:func:`workbench.encoding.models.weights_fingerprint`) and the SHA-256 of the weights file.

Loading (:func:`apply_adapter`) reads JSON and safetensors only, so no code in the directory
ever runs (a ``*.bin`` adapter, which PEFT would unpickle, is refused); LoRA adapters are
merged into the base weights in memory and trained layers replace the base's, so the model
runs at the base model's speed. A damaged file, a missing or foreign weight, a shape the base
does not have, a value that is not finite, or weights recorded for another base is a
:class:`~workbench.errors.ModelLoadError` naming the file (and both fingerprints). Resolving
the base model by its recorded name is :func:`workbench.encoding.models.resolve_model`'s work.

Example::

    record = read_base_record("runs/wsd")        # AdapterBase(name=..., fingerprint=...)
    check_base(Path("runs/wsd"), record, fingerprint_of_the_loaded_base)
    model = apply_adapter(base_model, Path("runs/wsd"))   # merged, eval mode
    save_trained_layers(encoder, Path("runs/x"), "base", True, fingerprint)  # a top_layers run
"""

from __future__ import annotations

import json
import warnings
from collections.abc import Collection, Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from workbench.encoding.weights_check import check_file
from workbench.errors import ModelLoadError
from workbench.fileio import atomic_path, sha256_file

if TYPE_CHECKING:
    from torch import nn

ADAPTER_CONFIG = "adapter_config.json"
ADAPTER_WEIGHTS = "adapter_model.safetensors"
#: The weights of the layers a ``top_layers`` run trained (the second form).
LAYER_WEIGHTS = "trained_layers.safetensors"
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
    """Whether ``path`` is a directory of what training added to a base model: LoRA adapters
    (it holds :data:`ADAPTER_CONFIG`) or trained layers (:data:`LAYER_WEIGHTS`)."""
    return (Path(path) / ADAPTER_CONFIG).is_file() or (Path(path) / LAYER_WEIGHTS).is_file()


def weights_file(directory: str | Path) -> Path:
    """The weights file of an adapter directory: :data:`LAYER_WEIGHTS` for trained layers,
    else :data:`ADAPTER_WEIGHTS`."""
    layers = Path(directory) / LAYER_WEIGHTS
    return (
        layers
        if layers.is_file() and not (Path(directory) / ADAPTER_CONFIG).is_file()
        else (Path(directory) / ADAPTER_WEIGHTS)
    )


def content_files(directory: str | Path) -> tuple[str, ...]:
    """The files whose content is an adapter directory's own (besides its base): the config
    and weights of LoRA adapters, or the trained layers."""
    if weights_file(directory).name == LAYER_WEIGHTS:
        return (LAYER_WEIGHTS,)
    return (ADAPTER_CONFIG, ADAPTER_WEIGHTS)


def save_trained_layers(
    model: nn.Module,
    directory: Path,
    name: str,
    packaged: bool,
    fingerprint: str,
    names: Collection[str] | None = None,
) -> AdapterBase:
    """Save the parameters of ``model`` that train (``requires_grad``: the layers a
    ``top_layers`` run trained; or those ``names`` says, e.g. the top layers of a transformer
    that stayed frozen in a run but differs from its base) into ``directory`` as
    :data:`LAYER_WEIGHTS` (float32, the bare model's parameter names), and write
    ``base_model.json``; returns the record.

    Raises:
        ModelLoadError: nothing of ``model`` trains (or is named).
    """
    import torch
    from safetensors.torch import save_file

    state = {
        key: p.detach().to("cpu", torch.float32).contiguous().clone()
        for key, p in model.named_parameters()
        if (p.requires_grad if names is None else key in names)
    }
    if not state:
        raise ModelLoadError(f"{type(model).__name__} has no trained layers to save.")
    directory.mkdir(parents=True, exist_ok=True)
    with atomic_path(directory / LAYER_WEIGHTS, suffix=".safetensors") as tmp:
        save_file(state, str(tmp), metadata={"format": "workbench-trained-layers/1"})
    return write_base_record(directory, name, packaged, fingerprint)


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
    with the SHA-256 of their weights (:func:`weights_file`); returns what it wrote."""
    record = AdapterBase(name, packaged, fingerprint, sha256_file(weights_file(directory)))
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
    weights = weights_file(directory)
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
            base (missing or extra adapter tensors, other shapes), a damaged file, or a value
            that is not finite (:func:`workbench.encoding.weights_check.check_file`).
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
        check_file(weights)  # every value finite (kept per file)
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


def load_trained_layers(base: nn.Module, directory: Path) -> nn.Module:
    """``base`` with the trained layers of ``directory`` (:data:`LAYER_WEIGHTS`) in place of
    its own, in eval mode. Only the safetensors file is read.

    Raises:
        ModelLoadError: naming the file: damaged, a weight the base does not have or of another
            shape, or a value that is not finite
            (:func:`workbench.encoding.weights_check.check_file`, before the file is loaded).
    """
    import torch
    from safetensors import SafetensorError
    from safetensors.torch import load_file

    path = directory / LAYER_WEIGHTS
    check_file(path)  # every value finite (kept per file)
    try:
        state = load_file(str(path))
    except (SafetensorError, OSError) as exc:
        raise ModelLoadError(f"{path} is damaged or not a safetensors file ({exc}).") from exc
    own = dict(base.named_parameters())
    for key, value in state.items():
        if key not in own or tuple(own[key].shape) != tuple(value.shape):
            what = "a weight the base model does not have" if key not in own else "another shape"
            raise ModelLoadError(f"{path} does not fit the base model: '{key}' is {what}.")
    if not state:
        raise ModelLoadError(f"{path} holds no weights.")
    with torch.no_grad():
        for key, value in state.items():
            own[key].copy_(value.to(own[key].dtype))
    base.eval()
    return base


def apply_adapter(base: nn.Module, directory: Path) -> nn.Module:
    """The base model with what ``directory`` adds, in eval mode: its trained layers in place
    (:func:`load_trained_layers`), or its LoRA adapters merged into the weights
    (:func:`load_adapter`, then peft's ``merge_and_unload``)."""
    if weights_file(directory).name == LAYER_WEIGHTS:
        return load_trained_layers(base, directory)
    merged: nn.Module = getattr(load_adapter(base, directory), "merge_and_unload")()  # noqa: B009
    merged.eval()
    return merged
