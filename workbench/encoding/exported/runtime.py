"""An exported model at work: ONNX Runtime on the CPU, with the export's tokenizer and facts.

:class:`OnnxModel` opens an export folder (already checked by
:func:`~workbench.encoding.exported.store.read_export`) and gives every hidden state of a batch
as one numpy array; nothing here imports torch or transformers.

Example::

    onnx = OnnxModel(folder, record)
    states = onnx.hidden_states(ids, mask)    # (n_layers + 1, batch, seq, dim) float32
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np
import onnxruntime as ort

from workbench.encoding.batching import Batch
from workbench.encoding.exported.store import MODEL_FILE, TOKENIZER_FILE, ExportRecord
from workbench.encoding.pooling import pool_words_array
from workbench.encoding.stage_clock import no_clock
from workbench.encoding.tokenizer import WordTokenizer
from workbench.errors import ModelLoadError


def session_options(threads: int | None = None) -> ort.SessionOptions:
    """ONNX Runtime's options for an export: every graph optimisation, ``threads`` threads
    for one operator (default: ``$WORKBENCH_THREADS``, else ONNX Runtime's own choice, one
    per physical core)."""
    options = ort.SessionOptions()
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    options.log_severity_level = 3  # errors only: its warnings about unused initialisers are noise
    wanted = threads or int(os.environ.get("WORKBENCH_THREADS", "0") or 0)
    if wanted > 0:
        options.intra_op_num_threads = wanted
    return options


class OnnxModel:
    """An export loaded into an ONNX Runtime session on the CPU.

    Args:
        folder: the export's folder.
        record: its checked record.

    Attributes:
        record: the export's record (the model's facts).
        tokenizer: the model's tokenizer (:class:`~workbench.encoding.tokenizer.WordTokenizer`).
        session: the ONNX Runtime session.
    """

    def __init__(self, folder: Path, record: ExportRecord) -> None:
        self.folder = folder
        self.record = record
        self.tokenizer = WordTokenizer.from_file(
            folder / TOKENIZER_FILE, record.unk, record.pad, record.model_max_length
        )
        try:
            self.session = ort.InferenceSession(
                str(folder / MODEL_FILE), session_options(), providers=["CPUExecutionProvider"]
            )
        except Exception as exc:  # noqa: BLE001 - onnxruntime raises its own exception types
            raise ModelLoadError(f"ONNX Runtime cannot open {folder / MODEL_FILE}: {exc}") from exc

    def hidden_states(self, ids: np.ndarray, mask: np.ndarray | None) -> np.ndarray:
        """Every hidden state of a batch.

        Args:
            ids: ``(batch, seq)`` int64 input ids.
            mask: ``(batch, seq)`` int64 attention mask (None: no padding).

        Returns:
            ``(n_layers + 1, batch, seq, dim)`` float32, the embedding output first.
        """
        ids = np.ascontiguousarray(ids, dtype=np.int64)
        mask = np.ones_like(ids) if mask is None else np.ascontiguousarray(mask, dtype=np.int64)
        (states,) = self.session.run(None, {"input_ids": ids, "attention_mask": mask})
        return states

    def pooled(
        self,
        batch: Batch,
        layers: Sequence[int],
        dtype: np.dtype,
        lap: Callable[[str], None] = no_clock,
    ) -> np.ndarray:
        """A batch's word rows ``(batch.plan.n_words, len(layers), dim)`` in ``dtype``, in the
        order of ``batch.rows``: every hidden state computed, the kept ones pooled; ``lap`` is
        told as ``forward`` and ``pooling`` end (:mod:`workbench.encoding.stage_clock`)."""
        states = self.hidden_states(batch.ids, batch.mask if batch.padded else None)
        lap("forward")
        pooled = pool_words_array(batch.plan, states[list(layers)], dtype)
        lap("pooling")
        return pooled
