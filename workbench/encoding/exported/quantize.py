"""The int8 export: a model's float32 export with its matrix products' weights quantised to int8
(ONNX Runtime's dynamic quantisation), checked against the float32 export on the probe before it
is kept. No torch: it is made from the float32 export alone.

Every ``MatMul`` of the graph gets int8 weights, one scale per output channel, and int8
activations quantised on the fly per batch (``onnxruntime.quantization.quantize_dynamic``); the
embeddings, layer norms and softmax stay float32, so the first hidden state is exact. Before the
export is kept, the probe (:data:`~workbench.encoding.exported.make.PROBE`) runs through both
exports: at every real position of every hidden state the int8 vector's cosine with the float32
one must be at least ``1 -`` :data:`TOLERANCE`, or the export is refused and recorded (that model
answers in float32 where int8 was asked: an error names why).

The record's ``probe_error`` is the probe's largest ``1 - cosine`` (float32 exports record a
relative difference instead; the two never meet: an export is read only for its own dtype).

Example::

    record = make_int8_export(float_folder, float_record, export_folder(fp, "int8"))
"""

from __future__ import annotations

import json
import tempfile
import warnings
from dataclasses import asdict, replace
from pathlib import Path

import numpy as np

from workbench.encoding.exported.make import ExportRefused, probe_batch
from workbench.encoding.exported.runtime import OnnxModel
from workbench.encoding.exported.store import (
    MODEL_FILE,
    OPSET,
    RECORD_FILE,
    TOKENIZER_FILE,
    ExportRecord,
    exports_dir,
    put_in_place,
    read_export,
    versions,
    write_export,
    write_refusal,
)

#: The most ``1 - cosine`` an int8 vector may differ from the float32 one at any probe position
#: (what MiniLM's export measured: docs/benchmarks.md).
TOLERANCE = 0.1
DTYPE = "int8"


def cosine_error(reference: np.ndarray, got: np.ndarray, mask: np.ndarray) -> float:
    """The largest ``1 - cosine`` between the vectors of two ``(n_states, batch, seq, dim)``
    stacks at the real positions of ``mask`` (``inf`` where a vector is not finite)."""
    real = mask.astype(bool)
    a, b = reference[:, real], got[:, real]  # (n_states, n_real, dim)
    dots = (a * b).sum(-1)
    norms = np.linalg.norm(a, axis=-1) * np.linalg.norm(b, axis=-1)
    cosine = dots / np.maximum(norms, 1e-12)
    worst = float((1.0 - cosine).max())
    return worst if np.isfinite(worst) else float("inf")


def make_int8_export(float_folder: Path, float_record: ExportRecord, folder: Path) -> ExportRecord:
    """Quantise the float32 export in ``float_folder`` into ``folder``, checked on the probe.

    Raises:
        ExportRefused: ONNX Runtime's quantiser failed, or the int8 vectors strayed past
            :data:`TOLERANCE` (recorded, so no later process tries again with these versions).
    """
    from onnxruntime.quantization import QuantType, quantize_dynamic

    fingerprint = float_record.fingerprint
    exact = OnnxModel(float_folder, float_record)
    ids, mask = probe_batch(float_record, exact.tokenizer)
    exports_dir().mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=exports_dir(), prefix=".making-") as tmp:
        graph = Path(tmp) / MODEL_FILE
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # the quantiser's advice on pre-processing
                quantize_dynamic(
                    float_folder / MODEL_FILE,
                    graph,
                    weight_type=QuantType.QInt8,
                    op_types_to_quantize=["MatMul"],
                    per_channel=True,
                )
        except Exception as exc:  # noqa: BLE001 - the quantiser raises anything
            reason = f"ONNX Runtime's quantiser failed: {type(exc).__name__}: {str(exc)[:200]}"
            write_refusal(fingerprint, DTYPE, OPSET, reason, versions())
            raise ExportRefused(reason) from exc
        record = replace(float_record, dtype=DTYPE, probe_error=float("nan"), tolerance=TOLERANCE,
                         versions=versions())  # fmt: skip
        text = (float_folder / TOKENIZER_FILE).read_text(encoding="utf-8")
        staged = Path(tmp) / "staged"
        staged_record = write_export(staged, record, graph, text)
        error = cosine_error(
            exact.hidden_states(ids, mask),
            OnnxModel(staged, staged_record).hidden_states(ids, mask),
            mask,
        )
        if not error <= TOLERANCE:
            reason = (
                f"its int8 vectors' cosine with the float32 ones falls to {1 - error:.3f} on "
                f"the probe (at least {1 - TOLERANCE:.2f} is accepted)"
            )
            write_refusal(fingerprint, DTYPE, OPSET, reason, versions())
            raise ExportRefused(reason)
        final = replace(staged_record, probe_error=error)
        (staged / RECORD_FILE).write_text(json.dumps(asdict(final), indent=1), encoding="utf-8")
        put_in_place(staged, folder)
    found = read_export(folder, fingerprint, DTYPE, OPSET)
    if found is None:  # pragma: no cover - renamed just above
        raise ExportRefused(f"the export in {folder} vanished after it was written")
    return found
