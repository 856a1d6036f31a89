"""The fine-tuned model directory: loadable by :class:`workbench.Encoder` like any other model.

Layout of ``<output>/``:

* the fine-tuned encoder, which the ``Encoder`` loads like any model: after a LoRA run
  (``lora_r`` > 0) its adapters, unmerged, in PEFT's format with a record of the base model
  (:mod:`workbench.encoding.adapters`); after full fine-tuning ``config.json`` +
  ``model.safetensors`` (``save_pretrained`` of the bare transformer) and the tokenizer's files;
* ``head.safetensors`` + ``head.json``: the task head and what rebuilds it (task, labels);
  for masked-LM the LM head minus the weights it shares with the word embeddings; for the WSD
  bi-encoder no weights (its second transformer is a model directory of its own, next line);
* ``gloss_encoder/`` (WSD bi-encoder only): the gloss encoder as a model directory of its own,
  adapters or full weights as above; absent when a LoRA run kept it at the base model
  (``head.json``: ``"gloss_encoder": "base"``; :mod:`workbench.wsd.biencoder` reads the
  directory);
* ``training_card.json``: task, base model, data checksums, options, per-epoch metrics, and
  the model's files (``files``); written last, so a directory with a card is complete;
* ``checkpoint/`` while a run is unfinished (:mod:`workbench.finetune.training.checkpoint`).

A *run directory* (:func:`is_run_dir`) is one the workbench made for a run: its ledger
(:mod:`workbench.outputs`) names the kind :data:`RUN_KIND` and lists what the workbench wrote in
it. It is the only kind of non-empty directory a run writes into (:func:`check_output`), and
one holding anything the workbench did not write is refused, ``overwrite`` or not. The new
model is written into a temporary directory beside ``output``, card last, and swapped in
place of the old directory in one step (:func:`staged_model_dir`): ``output`` holds the old
model or the new one, whole, never a mix; the old model is gone only once the new one is
complete.

Nothing here knows a task: what a task saves of its model it says itself
(:class:`~workbench.finetune.tasks.base.Task`), and it rebuilds the model from the directory
(:func:`workbench.finetune.tasks.registry.load_finetuned`).

Example::

    enc = Encoder(model="runs/wic")              # the fine-tuned encoder, for any analysis
    model, tokenizer, head = load_finetuned("runs/wic")   # encoder + head, for predictions
"""

from __future__ import annotations

import json
import os
from collections.abc import Collection, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

import torch

from workbench.encoding import models
from workbench.encoding.adapters import (
    AdapterBase,
    read_base_record,
    save_adapter,
    save_trained_layers,
)
from workbench.errors import InputError, ModelLoadError, OutputError
from workbench.fileio import check_writable, remove_path, temporary_path
from workbench.finetune.training.encoders import quiet_transformers
from workbench.finetune.training.model_io import encoder_config
from workbench.finetune.training.parameters import carries_adapters
from workbench.outputs import (
    LEDGER,
    claim_directory,
    directory_entries,
    directory_kind,
    mark_directory,
    output_file,
    replace_directory,
)
from workbench.wsd.biencoder import CARD, HEAD_CONFIG

if TYPE_CHECKING:
    from transformers import PreTrainedTokenizerBase

HEAD_WEIGHTS = "head.safetensors"
CHECKPOINT_DIR = (
    "checkpoint"  # a started run's checkpoints (workbench.finetune.training.checkpoint)
)


def adapter_base_of(source: models.ModelSource, encoder: torch.nn.Module) -> AdapterBase:
    """The base model a LoRA run's adapters are saved against: the base of an adapter
    directory ``source`` (the run went on training its adapters), else ``source`` itself (the
    packaged default named as such, a local directory by its full path, a hub id by name)."""
    base = models.adapter_base(source)
    if base is not None:
        record = read_base_record(source.location)
        return AdapterBase(record.name, record.packaged, record.fingerprint, "")
    packaged = source.location == str(models.default_model_path())
    name = models.DEFAULT_MODEL_LABEL if packaged else source.location
    fingerprint = models.weights_fingerprint(source, encoder_config(encoder))
    return AdapterBase(name, packaged, fingerprint, "")


def save_encoder(
    encoder: torch.nn.Module,
    tokenizer: PreTrainedTokenizerBase,
    output: Path,
    base: AdapterBase | None,
    top_layers: int = 0,
    names: Collection[str] | None = None,
) -> None:
    """Write one transformer as a model directory: its LoRA adapters against ``base`` when it
    carries them (PEFT's format); after a ``top_layers`` run its trained layers against
    ``base`` (those ``names`` says, when given: :func:`~workbench.encoding.adapters.
    save_trained_layers`); else its full weights and the tokenizer."""
    from transformers import PreTrainedModel

    if carries_adapters(encoder) or top_layers:
        if base is None:
            raise InputError("Saving what a run trained needs the base model it trained on.")
        if carries_adapters(encoder):
            save_adapter(encoder, output, base.name, base.packaged, base.fingerprint)
        else:
            save_trained_layers(encoder, output, base.name, base.packaged, base.fingerprint, names)
        return
    if not isinstance(encoder, PreTrainedModel):
        raise InputError(f"The encoder to save is a {type(encoder).__name__}, not a transformer.")
    output.mkdir(parents=True, exist_ok=True)
    with quiet_transformers():  # no "Writing model shards" bar for one file
        encoder.save_pretrained(output)
    tokenizer.save_pretrained(output)


def save_model_dir(
    encoder: torch.nn.Module,
    tokenizer: PreTrainedTokenizerBase,
    head_config: dict[str, Any],
    head_weights: dict[str, torch.Tensor],
    card: dict[str, Any],
    output: Path,
    base: AdapterBase | None = None,
    top_layers: int = 0,
) -> Path:
    """Write the model directory (see the module docstring) of a task model whose transformer
    is ``encoder``: the head's ``head.json`` config and its weights (a
    task's :meth:`~workbench.finetune.tasks.base.Task.head_config` and
    :meth:`~workbench.finetune.tasks.base.Task.head_state`); returns ``output``. ``base``: the
    base model LoRA adapters or a ``top_layers`` run's trained layers are saved against
    (needed then). What else a task saves (the WSD bi-encoder's gloss encoder) its
    :meth:`~workbench.finetune.tasks.base.Task.save_parts` writes."""
    from safetensors.torch import save_file

    output.mkdir(parents=True, exist_ok=True)
    save_encoder(encoder, tokenizer, output, base, top_layers)
    save_file(head_weights, str(output / HEAD_WEIGHTS))
    (output / HEAD_CONFIG).write_text(json.dumps(head_config, indent=2) + "\n")
    write_card(card, output)
    return output


#: The kind of a run directory in its ledger (:mod:`workbench.outputs`).
RUN_KIND = "finetune-run"


def is_run_dir(directory: Path) -> bool:
    """Whether ``directory`` is a run directory: one the workbench made for a fine-tuning run
    (its ledger says so), finished or not; a folder that merely holds a ``checkpoint/`` or a
    card is not."""
    return directory_kind(directory) == RUN_KIND


def check_output(output: Path, resume: bool, overwrite: bool) -> None:
    """Refuse, before any work and without making or deleting anything, an ``output`` a run may
    not write into: a file; a non-empty directory that is not a run directory, or one holding
    anything the workbench did not write (``overwrite`` or not); a finished run (without
    ``resume`` or ``overwrite``); an unfinished one (a checkpoint, without ``resume`` or
    ``overwrite``); ``resume`` with no checkpoint; a place where the new model cannot be
    written (the directory beside which it is staged).

    Raises:
        OutputError: the directory holds the user's files or cannot be written.
        InputError: a run there that the options do not say what to do with.
    """
    state = claim_directory(output, RUN_KIND, label="run directory")
    check_writable(output / CARD)  # the checkpoints go inside it ...
    try:
        check_writable(temporary_path(output))  # ... and the new model is staged beside it
    except OutputError as exc:
        cause = exc.__cause__
        reason = cause.strerror if isinstance(cause, OSError) and cause.strerror else str(exc)
        raise OutputError(
            f"cannot write the new model beside {output} (in {output.parent}), where it is "
            f"made before it takes the place of {output.name}: {reason}"
        ) from exc
    started = state == "ours" and has_checkpoint(output)
    finished = state == "ours" and (output / CARD).is_file()
    if resume and not started:
        what = "a finished model and no checkpoint" if finished else "no checkpoint"
        raise InputError(f"Nothing to resume: {output} holds {what} ({output / CHECKPOINT_DIR}).")
    if resume or overwrite:
        return
    if finished and started:
        raise InputError(
            f"{output} already holds a fine-tuned model and a checkpoint in "
            f"{output / CHECKPOINT_DIR} (of a run stopped before its end, or kept with "
            "--keep-checkpoint): pass resume=True (--resume) to train on from that checkpoint "
            "or overwrite=True (--overwrite) to start again; the model is replaced only once "
            "the new one is complete."
        )
    if finished:
        raise InputError(
            f"{output} already holds a fine-tuned model: choose another output directory or "
            "pass overwrite=True (--overwrite); it is replaced only once the new model is "
            "complete."
        )
    if started:
        raise InputError(
            f"{output} holds an unfinished run (its checkpoint is in {output / CHECKPOINT_DIR}): "
            "pass resume=True (--resume) to continue it or overwrite=True (--overwrite) to "
            "start again."
        )


def has_checkpoint(output: Path) -> bool:
    """Whether the run directory ``output`` holds a started run's checkpoint (a ``checkpoint/``
    with something in it): a run stopped before its end, or one kept with its checkpoint."""
    checkpoint = output / CHECKPOINT_DIR
    return checkpoint.is_dir() and bool(directory_entries(checkpoint))


def start_output(output: Path, resume: bool, overwrite: bool) -> bool:
    """Make ``output`` the run directory once every check has passed and training starts: it
    is created if missing and marked (:data:`RUN_KIND`) with its ``checkpoint/``. Starting
    again (``overwrite`` without ``resume``) deletes an unfinished run's checkpoint; a finished
    model stays until the new one replaces it (:func:`staged_model_dir`). Returns whether the
    directory was made here."""
    made = not os.path.lexists(output)
    if overwrite and not resume:
        remove_path(output / CHECKPOINT_DIR)
    (output / CHECKPOINT_DIR).mkdir(parents=True, exist_ok=True)
    mark_directory(output, RUN_KIND, [CHECKPOINT_DIR])
    return made


def forget_output(output: Path, made: bool) -> None:
    """Undo :func:`start_output` for a run that stopped before its first checkpoint: its empty
    ``checkpoint/`` goes, and the directory too when this run made it and nothing else is in
    it; a checkpoint, a finished model or anything else is kept."""
    checkpoint = output / CHECKPOINT_DIR
    if checkpoint.is_dir() and not directory_entries(checkpoint):
        remove_path(checkpoint)
    if made and output.is_dir() and not directory_entries(output):
        remove_path(output / LEDGER)
        try:
            output.rmdir()
        except OSError:
            pass


def model_files(directory: Path) -> list[str]:
    """The entries of a model directory that make the model: all but the card, the
    checkpoint, the ledger and temporaries (the card's ``files``)."""
    skip = {CARD, CHECKPOINT_DIR}
    return [n for n in directory_entries(directory) if n not in skip]


@contextmanager
def staged_model_dir(output: Path, keep_checkpoint: bool = False) -> Iterator[Path]:
    """Yield a temporary directory beside ``output`` to write the new model into (card last);
    then put it in place of ``output`` in one step (:func:`workbench.outputs.replace_directory`):
    the old model is deleted only now, with the run's checkpoint unless ``keep_checkpoint``
    (it moves into the new directory). On an error the temporary directory is deleted and
    ``output`` is left as it was (its checkpoint, if any, resumes the run).

    Raises:
        OutputError: the new directory has no card (it is not complete) or cannot be put in
            place.
    """
    staging = temporary_path(output)
    staging.mkdir(parents=True)
    try:
        yield staging
        if not (staging / CARD).is_file():
            raise OutputError(f"the new model for {output} has no {CARD}: it is not complete")
        checkpoint = output / CHECKPOINT_DIR
        if keep_checkpoint and checkpoint.is_dir():
            os.replace(checkpoint, staging / CHECKPOINT_DIR)
        mark_directory(staging, RUN_KIND)
        replace_directory(staging, output)
    except BaseException:
        remove_path(staging)
        raise


def write_card(card: dict[str, Any], output: Path) -> None:
    """Write ``training_card.json`` (whole or not at all; recorded in the directory's ledger)."""
    with output_file(output / CARD) as tmp:
        tmp.write_text(json.dumps(card, indent=2, default=str) + "\n")


def read_card(directory: str | Path) -> dict[str, Any]:
    """The training card of a fine-tuned model directory.

    Raises:
        ModelLoadError: the directory has no training card.
    """
    path = Path(directory) / CARD
    if not path.is_file():
        raise ModelLoadError(f"{directory} is not a fine-tuned model directory (no {CARD}).")
    return json.loads(path.read_text())
