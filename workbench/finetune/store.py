"""The fine-tuned model directory: loadable by :class:`workbench.Encoder` like any other model.

Layout of ``<output>/``:

* ``config.json``, ``model.safetensors``: the fine-tuned encoder (``save_pretrained`` of the
  bare transformer, LoRA adapters merged in), which ``AutoModel`` (and so the ``Encoder``) loads;
* the tokenizer's files (``save_pretrained``);
* ``head.safetensors`` + ``head.json``: the task head and what rebuilds it (task, labels);
  for masked-LM the LM head minus the weights it shares with the word embeddings; for the WSD
  bi-encoder no weights (its second transformer is a model directory of its own, next line);
* ``gloss_encoder/`` (WSD bi-encoder only): the gloss encoder as a model directory of its own,
  and ``sense_index/``, the gloss vectors of the WordNet senses
  (:mod:`workbench.finetune.gloss_index`);
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

from workbench.errors import InputError, ModelLoadError, OutputError
from workbench.fileio import check_writable
from workbench.finetune.base import quiet_transformers
from workbench.finetune.modeling import (
    BiEncoderModel,
    MaskedLMModel,
    SequenceModel,
    TaskModel,
    TokenModel,
)

if TYPE_CHECKING:
    from transformers import PreTrainedTokenizerBase

CARD = "training_card.json"
HEAD_WEIGHTS = "head.safetensors"
HEAD_CONFIG = "head.json"
GLOSS_ENCODER = "gloss_encoder"  # the WSD bi-encoder's gloss encoder, a model directory
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


def save_model_dir(
    model: TaskModel,
    tokenizer: PreTrainedTokenizerBase,
    head_config: dict[str, Any],
    card: dict[str, Any],
    output: Path,
) -> Path:
    """Write the model directory (see the module docstring); returns ``output``."""
    from safetensors.torch import save_file
    from transformers import PreTrainedModel

    encoder = model.encoder
    if not isinstance(encoder, PreTrainedModel):
        raise InputError(
            f"The encoder to save is a {type(encoder).__name__}, not a transformers model "
            "(merge LoRA adapters first: merge_lora)."
        )
    gloss = model.gloss_encoder if isinstance(model, BiEncoderModel) else None
    if gloss is not None and not isinstance(gloss, PreTrainedModel):
        raise InputError(
            f"The gloss encoder to save is a {type(gloss).__name__}: merge LoRA first."
        )
    output.mkdir(parents=True, exist_ok=True)
    with quiet_transformers():  # no "Writing model shards" bar for one file
        encoder.save_pretrained(output)
        if gloss is not None:
            gloss.save_pretrained(output / GLOSS_ENCODER)
            tokenizer.save_pretrained(output / GLOSS_ENCODER)
    tokenizer.save_pretrained(output)
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


def bi_encoder_head(directory: str | Path) -> dict[str, Any] | None:
    """The head config of a trained WSD bi-encoder directory (its ``head.json``, task
    ``wsd``, with a ``gloss_encoder/`` beside it); None for any other directory or model.

    Raises:
        ModelLoadError: such a directory whose ``head.json`` is not a readable WSD head
            (damaged, or missing the gloss pooling and text).
    """
    directory = Path(directory)
    config = directory / HEAD_CONFIG
    if not (config.is_file() and (directory / GLOSS_ENCODER).is_dir()):
        return None
    try:
        head = json.loads(config.read_text())
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ModelLoadError(f"{config} cannot be read as JSON: {exc}") from exc
    if not isinstance(head, dict) or head.get("task") != "wsd":
        return None
    missing = [k for k in ("gloss_pooling", "gloss_text") if not isinstance(head.get(k), str)]
    if missing:
        raise ModelLoadError(f"{config} is a WSD head without {' or '.join(missing)}.")
    return head


def load_finetuned(
    directory: str | Path,
) -> tuple[TaskModel, PreTrainedTokenizerBase, dict[str, Any]]:
    """Rebuild encoder + head from a model directory, for predictions (eval mode, CPU).

    Returns:
        ``(model, tokenizer, head_config)``; ``model(**batch)`` returns ``(loss, logits)``.
    """
    from safetensors.torch import load_file
    from transformers import AutoModel, AutoModelForMaskedLM, AutoTokenizer

    directory = Path(directory)
    if not (directory / HEAD_CONFIG).is_file():
        raise ModelLoadError(f"{directory} has no {HEAD_CONFIG}: not a fine-tuned model dir.")
    head = json.loads((directory / HEAD_CONFIG).read_text())
    weights = load_file(str(directory / HEAD_WEIGHTS))
    tokenizer = AutoTokenizer.from_pretrained(directory)
    task = head["task"]
    model: TaskModel
    if task == "mlm":
        with quiet_transformers():  # it reports the head as missing; it is loaded next
            model = MaskedLMModel(AutoModelForMaskedLM.from_pretrained(directory))
        model.lm.load_state_dict(weights, strict=False)
    elif task == "wsd":
        model = BiEncoderModel(
            AutoModel.from_pretrained(directory),
            AutoModel.from_pretrained(directory / GLOSS_ENCODER),
            head["gloss_pooling"],
        )
    else:
        encoder = AutoModel.from_pretrained(directory)
        n = len(head["labels"])
        if task == "token":
            model = TokenModel(encoder, n, head["head_dropout"])
        else:
            model = SequenceModel(encoder, n, head["head_pooling"], head["head_dropout"])
        model.head.load_state_dict(weights)
    return model.eval(), tokenizer, head
