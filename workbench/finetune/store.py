"""The fine-tuned model directory: loadable by :class:`workbench.Encoder` like any other model.

Layout of ``<output>/``:

* the fine-tuned encoder, which the ``Encoder`` loads like any model: after a LoRA run
  (``lora_r`` > 0) its adapters, unmerged, in PEFT's format with a record of the base model
  (:mod:`workbench.encoding.adapters`: a few MB); after full fine-tuning ``config.json`` +
  ``model.safetensors`` (``save_pretrained`` of the bare transformer) and the tokenizer's files;
* ``head.safetensors`` + ``head.json``: the task head and what rebuilds it (task, labels);
  for masked-LM the LM head minus the weights it shares with the word embeddings; for the WSD
  bi-encoder no weights (its second transformer is a model directory of its own, next line);
* ``gloss_encoder/`` (WSD bi-encoder only): the gloss encoder as a model directory of its own,
  adapters or full weights as above; absent when a LoRA run kept it at the base model
  (``head.json``: ``"gloss_encoder": "base"``; :mod:`workbench.wsd.biencoder` reads the
  directory);
* ``training_card.json``: task, base model, data checksums, options, per-epoch metrics;
* ``checkpoint/`` while a run is unfinished (:mod:`workbench.finetune.checkpoint`).

A directory holding a card or ``checkpoint/`` is a *run directory* (:func:`is_run_dir`): the
only kind of non-empty directory a run writes into (:func:`prepare_output`), so no file of the
user's is replaced.

Example::

    enc = Encoder(model="runs/wic")              # the fine-tuned encoder, for any analysis
    model, tokenizer, head = load_finetuned("runs/wic")   # encoder + head, for predictions
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import TYPE_CHECKING, Any

import torch

from workbench.encoding import models
from workbench.encoding.adapters import (
    AdapterBase,
    apply_adapter,
    read_base_record,
    save_adapter,
)
from workbench.errors import InputError, ModelLoadError, OutputError
from workbench.fileio import check_writable
from workbench.finetune.base import quiet_transformers
from workbench.finetune.modeling import (
    BiEncoderModel,
    MaskedLMModel,
    SequenceModel,
    TaskModel,
    TokenModel,
    encoder_config,
)
from workbench.finetune.parameters import carries_adapters
from workbench.wsd.biencoder import (
    BASE_GLOSS_ENCODER,
    CARD,
    GLOSS_ENCODER,
    HEAD_CONFIG,
    bi_encoder_head,
    gloss_source,
)

if TYPE_CHECKING:
    from transformers import PreTrainedTokenizerBase

HEAD_WEIGHTS = "head.safetensors"
CHECKPOINT_DIR = "checkpoint"  # a started run's checkpoints (workbench.finetune.checkpoint)


def head_state(model: TaskModel) -> dict[str, torch.Tensor]:
    """The weights that are not the encoder's (tied copies of encoder weights left out)."""
    if isinstance(model, MaskedLMModel):
        prefix = model.lm.base_model_prefix + "."
        shared = {p.data_ptr() for p in model.encoder.parameters()}
        items = model.lm.state_dict().items()
        return {
            k: v.detach().cpu().contiguous().clone()
            for k, v in items
            if not k.startswith(prefix) and v.data_ptr() not in shared
        }
    if isinstance(model, BiEncoderModel):
        return {}  # its gloss encoder is saved as a model directory (GLOSS_ENCODER)
    return {k: v.detach().cpu().contiguous().clone() for k, v in model.head.state_dict().items()}


def adapter_base_of(source: models.ModelSource, model: TaskModel) -> AdapterBase:
    """The base model a LoRA run's adapters are saved against: the base of an adapter
    directory ``source`` (the run went on training its adapters), else ``source`` itself (the
    packaged default named as such, a local directory by its full path, a hub id by name)."""
    base = models.adapter_base(source)
    if base is not None:
        record = read_base_record(source.location)
        return AdapterBase(record.name, record.packaged, record.fingerprint, "")
    packaged = source.location == str(models.default_model_path())
    name = models.DEFAULT_MODEL_LABEL if packaged else source.location
    fingerprint = models.weights_fingerprint(source, encoder_config(model.encoder))
    return AdapterBase(name, packaged, fingerprint, "")


def save_encoder(
    encoder: torch.nn.Module,
    tokenizer: PreTrainedTokenizerBase,
    output: Path,
    base: AdapterBase | None,
) -> None:
    """Write one transformer as a model directory: its LoRA adapters against ``base`` when it
    carries them (PEFT's format), else its full weights and the tokenizer."""
    from transformers import PreTrainedModel

    if carries_adapters(encoder):
        if base is None:
            raise InputError("Saving LoRA adapters needs the base model they were trained on.")
        save_adapter(encoder, output, base.name, base.packaged, base.fingerprint)
        return
    if not isinstance(encoder, PreTrainedModel):
        raise InputError(f"The encoder to save is a {type(encoder).__name__}, not a transformer.")
    output.mkdir(parents=True, exist_ok=True)
    with quiet_transformers():  # no "Writing model shards" bar for one file
        encoder.save_pretrained(output)
    tokenizer.save_pretrained(output)


def save_model_dir(
    model: TaskModel,
    tokenizer: PreTrainedTokenizerBase,
    head_config: dict[str, Any],
    card: dict[str, Any],
    output: Path,
    base: AdapterBase | None = None,
) -> Path:
    """Write the model directory (see the module docstring); returns ``output``. ``base``:
    the base model LoRA adapters are saved against (needed when the model carries them)."""
    from safetensors.torch import save_file

    output.mkdir(parents=True, exist_ok=True)
    save_encoder(model.encoder, tokenizer, output, base)
    if isinstance(model, BiEncoderModel) and head_config.get("gloss_encoder") != BASE_GLOSS_ENCODER:
        save_encoder(model.gloss_encoder, tokenizer, output / GLOSS_ENCODER, base)
    save_file(head_state(model), str(output / HEAD_WEIGHTS))
    (output / HEAD_CONFIG).write_text(json.dumps(head_config, indent=2) + "\n")
    write_card(card, output)
    return output


def is_run_dir(directory: Path) -> bool:
    """Whether ``directory`` is a run directory of the trainer: it holds the training card of
    a finished run or the ``checkpoint/`` folder of a started one."""
    return (directory / CARD).is_file() or (directory / CHECKPOINT_DIR).is_dir()


def check_output_dir(output: Path) -> None:
    """Refuse an ``output`` that exists, is not empty and is not a run directory
    (:func:`is_run_dir`): fine-tuning writes ``config.json``, the tokenizer files and more
    there and would replace the user's files of those names (``--overwrite`` would delete
    them all).

    Raises:
        OutputError: naming the directory.
    """
    if not output.is_dir() or is_run_dir(output):
        return  # absent, a file (check_writable says so) or a run directory
    try:
        empty = next(output.iterdir(), None) is None
    except OSError as exc:
        raise OutputError(f"cannot use {output} as the output directory: {exc}") from exc
    if not empty:
        raise OutputError(
            f"{output} is not empty and is not a workbench run directory (no {CARD} or "
            f"{CHECKPOINT_DIR}/): choose a new or empty output directory; its files are left as "
            "they are"
        )


def prepare_output(output: Path, resume: bool, overwrite: bool) -> None:
    """Make ``output`` ready for a run, before any work: refuse a directory holding other
    files (:func:`check_output_dir`) or one that cannot be written; a finished run is kept unless
    ``resume`` (continue it) or ``overwrite`` (delete it first) says otherwise.

    Raises:
        OutputError: the directory holds other files or cannot be written.
        InputError: it holds a finished run and neither ``resume`` nor ``overwrite`` is set.
    """
    check_output_dir(output)  # nothing of the user's is replaced
    check_writable(output / CARD)  # before any work
    finished = (output / CARD).is_file() and not (output / CHECKPOINT_DIR).is_dir()
    if finished and not (resume or overwrite):
        raise InputError(
            f"{output} already holds a fine-tuned model: choose another output "
            "directory or pass overwrite=True (--overwrite)."
        )
    if overwrite and not resume and output.exists():
        shutil.rmtree(output)


def write_card(card: dict[str, Any], output: Path) -> None:
    """Write ``training_card.json`` (atomically)."""
    tmp = output / (CARD + ".tmp")
    tmp.write_text(json.dumps(card, indent=2, default=str) + "\n")
    tmp.replace(output / CARD)


def read_card(directory: str | Path) -> dict[str, Any]:
    """The training card of a fine-tuned model directory.

    Raises:
        ModelLoadError: the directory has no training card.
    """
    path = Path(directory) / CARD
    if not path.is_file():
        raise ModelLoadError(f"{directory} is not a fine-tuned model directory (no {CARD}).")
    return json.loads(path.read_text())


def load_finetuned(
    directory: str | Path,
) -> tuple[TaskModel, PreTrainedTokenizerBase, dict[str, Any]]:
    """Rebuild encoder + head from a model directory, for predictions (eval mode, CPU, float32;
    LoRA adapters merged in).

    Returns:
        ``(model, tokenizer, head_config)``; ``model(**batch)`` returns ``(loss, logits)``.
    """
    from safetensors.torch import load_file
    from transformers import AutoModelForMaskedLM

    directory = Path(directory)
    if not (directory / HEAD_CONFIG).is_file():
        raise ModelLoadError(f"{directory} has no {HEAD_CONFIG}: not a fine-tuned model dir.")
    head = json.loads((directory / HEAD_CONFIG).read_text())
    weights = load_file(str(directory / HEAD_WEIGHTS))
    source = models.resolve_model(str(directory))
    tokenizer = models.load_tokenizer(source)
    task = head["task"]
    model: TaskModel
    if task == "mlm":
        base = models.adapter_base(source)
        with quiet_transformers():  # it reports the head as missing; it is loaded next
            lm = AutoModelForMaskedLM.from_pretrained((base or source).location)
        model = MaskedLMModel(lm)
        if base is not None:
            model.set_encoder(apply_adapter(model.encoder, directory))
        model.lm.load_state_dict(weights, strict=False)
    elif task == "wsd":
        if bi_encoder_head(directory) is None:
            raise ModelLoadError(f"{directory} is a WSD head without its gloss encoder.")
        model = BiEncoderModel(
            models.load_model(source, torch.float32),
            models.load_model(gloss_source(directory, head), torch.float32),
            head["gloss_pooling"],
        )
    else:
        encoder = models.load_model(source, torch.float32)
        n = len(head["labels"])
        if task == "token":
            model = TokenModel(encoder, n, head["head_dropout"])
        else:
            model = SequenceModel(encoder, n, head["head_pooling"], head["head_dropout"])
        model.head.load_state_dict(weights)
    return model.eval(), tokenizer, head
