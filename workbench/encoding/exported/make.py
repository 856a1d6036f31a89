"""Making an export: the torch model's graph written by ``torch.onnx.export`` and checked on a
probe before it is kept. The only module of :mod:`workbench.encoding.exported` that needs torch
(imported inside the functions, as the encoder imports this module).

The graph takes ``input_ids`` and ``attention_mask`` ``(batch, seq)`` (both axes dynamic) and
gives every hidden state stacked into one output ``(n_layers + 1, batch, seq, dim)``. Before the
export is kept, a probe batch (two sentences of different lengths, so one is padded) runs
through both the torch model and ONNX Runtime: every hidden state must agree within
:data:`TOLERANCE` of its largest value at the real (unpadded) positions, or the export is
refused, the refusal recorded (:func:`~workbench.encoding.exported.store.write_refusal`) and the
model stays on torch.

Example::

    record = make_export(model, tokenizer, facts, folder)   # about 2-5 s for MiniLM
"""

from __future__ import annotations

import json
import tempfile
import warnings
from dataclasses import asdict, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from workbench.encoding.exported.runtime import OnnxModel
from workbench.encoding.exported.store import (
    FORMAT,
    OPSET,
    RECORD_FILE,
    ExportRecord,
    ModelFacts,
    exports_dir,
    put_in_place,
    read_export,
    versions,
    write_export,
    write_refusal,
)
from workbench.errors import ModelLoadError

if TYPE_CHECKING:
    import torch

#: The most a hidden state of the export may differ from the torch model's, relative to the
#: largest absolute value of that state on the probe (float32 agrees to about 1e-6).
TOLERANCE = 1e-4
#: The probe: two sentences, the second shorter (padded in the batch).
PROBE = (
    ["She", "sat", "on", "the", "bank", "and", "watched", "the", "river", "flow", "by", "."],
    ["Embeddings", "differ", "by", "layer", "."],
)


class ExportRefused(ModelLoadError):
    """The export disagreed with the torch model on the probe (or could not be made)."""


class _Stacked:
    """The model with every hidden state stacked into one output (what is exported)."""

    @staticmethod
    def wrap(model: Any) -> torch.nn.Module:
        import torch

        class Stacked(torch.nn.Module):
            def __init__(self) -> None:
                super().__init__()
                self.model = model

            def forward(self, input_ids: torch.Tensor, attention_mask: torch.Tensor):
                out = self.model(
                    input_ids=input_ids, attention_mask=attention_mask, output_hidden_states=True
                )
                return torch.stack(out.hidden_states, 0)

        return Stacked().eval()


def probe_batch(facts: ModelFacts, tokenizer: Any) -> tuple[np.ndarray, np.ndarray]:
    """The probe's ``(2, width)`` ids and mask, specials around each sentence, padded."""
    enc = tokenizer(list(PROBE), is_split_into_words=True, add_special_tokens=False)
    rows = [list(facts.head) + list(ids) + list(facts.tail) for ids in enc["input_ids"]]
    rows = [r[: facts.max_length] for r in rows]
    width = max(len(r) for r in rows)
    ids = np.full((len(rows), width), facts.pad, dtype=np.int64)
    mask = np.zeros((len(rows), width), dtype=np.int64)
    for i, r in enumerate(rows):
        ids[i, : len(r)] = r
        mask[i, : len(r)] = 1
    return ids, mask


def probe_error(reference: np.ndarray, exported: np.ndarray, mask: np.ndarray) -> float:
    """The largest difference between two ``(n_states, batch, seq, dim)`` stacks at the real
    positions of ``mask``, relative to each state's largest absolute value there."""
    real = mask.astype(bool)
    worst = 0.0
    for ref, got in zip(reference, exported):
        a, b = ref[real], got[real]
        scale = max(float(np.abs(a).max()), 1e-6)
        worst = max(worst, float(np.abs(a - b).max()) / scale)
    return worst if np.isfinite(worst) else float("inf")


def make_export(model: Any, tokenizer: Any, facts: ModelFacts, folder: Path) -> ExportRecord:
    """Export ``model`` (a float32 torch encoder on the CPU, eval mode) with its ``tokenizer``
    into ``folder``, checked on the probe.

    Raises:
        ExportRefused: the export failed, or disagreed with the torch model (recorded, so no
            later process tries again).
    """
    import torch

    stacked = _Stacked.wrap(model)
    ids, mask = probe_batch(facts, tokenizer)
    exports_dir().mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=exports_dir(), prefix=".making-") as tmp:
        graph = Path(tmp) / "model.onnx"
        try:
            with torch.no_grad(), warnings.catch_warnings():
                warnings.simplefilter("ignore")  # the tracer's notes on the model's Python code
                reference = stacked(torch.from_numpy(ids), torch.from_numpy(mask)).numpy()
                torch.onnx.export(
                    stacked,
                    (torch.from_numpy(ids), torch.from_numpy(mask)),
                    str(graph),
                    input_names=["input_ids", "attention_mask"],
                    output_names=["hidden_states"],
                    dynamic_axes={
                        "input_ids": {0: "batch", 1: "seq"},
                        "attention_mask": {0: "batch", 1: "seq"},
                        "hidden_states": {1: "batch", 2: "seq"},
                    },
                    opset_version=OPSET,
                    dynamo=False,
                )
        except Exception as exc:  # noqa: BLE001 - the exporter raises anything
            reason = f"torch.onnx.export failed: {type(exc).__name__}: {str(exc)[:200]}"
            write_refusal(facts.fingerprint, "float32", OPSET, reason, versions())
            raise ExportRefused(reason) from exc
        record = ExportRecord(
            **asdict(facts),
            dtype="float32",
            opset=OPSET,
            format=FORMAT,
            probe_error=float("nan"),
            tolerance=TOLERANCE,
            model_sha256="",
            tokenizer_sha256="",
            versions=versions(),
        )
        text = tokenizer.backend_tokenizer.to_str()
        staged = Path(tmp) / "staged"
        staged_record = write_export(staged, record, graph, text)
        exported = OnnxModel(staged, staged_record).hidden_states(ids, mask)
        error = probe_error(reference, exported, mask)
        if not error <= TOLERANCE:
            reason = (
                f"its hidden states differ from torch's by {error:.2e} of their scale on the "
                f"probe (at most {TOLERANCE:.0e} is accepted)"
            )
            write_refusal(facts.fingerprint, "float32", OPSET, reason, versions())
            raise ExportRefused(reason)
        final = replace(staged_record, probe_error=error)
        (staged / RECORD_FILE).write_text(json.dumps(asdict(final), indent=1), encoding="utf-8")
        put_in_place(staged, folder)
    found = read_export(folder, facts.fingerprint, "float32", OPSET)
    if found is None:  # pragma: no cover - renamed just above
        raise ExportRefused(f"the export in {folder} vanished after it was written")
    return found
