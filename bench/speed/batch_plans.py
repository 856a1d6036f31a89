"""Benchmark (a model, no GPU needed): the batches ``encode`` plans on a GPU and what they cost.

Run:  python -m bench run batch_plans --json docs/bench_runs/batch_plans_h200_model.json

On a GPU a batch costs a fixed time however small (kernel launches: the packaged model's bare
forward on an H200 took 2.2 ms for 8,192 tokens and 2.3 ms for 16,384), so how the encoder
cuts an input into batches sets much of the forward pass's speed. This plans the batches of
the first N SemCor sentences at a GPU's budget (65,536 tokens, the H200's measured one), for

- the input in one chunk (``whole``) or streamed (:mod:`workbench.encoding.pipeline.stream`,
  the cuda default: chunks from a quarter of the budget's words, doubling), and
- ``min_fill`` (the share of the budget a batch holds before a drop in length closes it) 0.1
  (the CPU's), 0.25 (the cuda default) and 0.5,

and reports each plan's batch count, padding and mean batch size (exact: the encoder's own
planning code, :meth:`Encoder.batch_stream`), and the forward time a cost curve predicts:
each batch takes the time the curve gives for its padded size (interpolated over log size;
below the curve's smallest size, that size's time). The curve is a GPU run's measured budget
(``Encoder.budget.measured``: synthetic 32-token rows at 8k-128k tokens); by default the H200's
of 2026-11-26. The prediction is calibrated against that run's measured bare forward on the
``whole`` / 0.1 plan of 2,000 and 20,000 sentences (what the encoder ran then), and both are
printed: a model to choose defaults by, not a GPU measurement.
"""

from __future__ import annotations

import argparse
import json
import warnings

import numpy as np

from bench.lib.machine import machine_facts
from bench.lib.record import write_json
from bench.speed.extract import load_sentences
from workbench import Encoder
from workbench.encoding.alignment import normalize_input
from workbench.encoding.pipeline.overlap import PipelineConfig
from workbench.encoding.pipeline.stream import first_chunk_words

#: The H200's measured budget curve (tokens per batch, tokens/s; bench/gpu/session.py's log,
#: docs/bench_runs/gpu_session_h200_logs.json) and its bare forward on the encoder's batches.
H200_CURVE = [(8192, 3691914.98), (16384, 7204499.65), (32768, 7818784.65),
              (65536, 8403289.87), (131072, 8736595.50)]  # fmt: skip
H200_FORWARD_S = {2000: 57298 / 1345660, 20000: 520397 / 3576456}  # whole, min_fill 0.1
BUDGET = 65536
FILLS = (0.1, 0.25, 0.5)


def batch_seconds(curve: list[tuple[int, float]], padded: int) -> float:
    """The time ``curve`` gives a batch of ``padded`` tokens."""
    sizes = np.log([c[0] for c in curve])
    seconds = [c[0] / c[1] for c in curve]
    if padded <= curve[0][0]:
        return seconds[0]
    return float(np.interp(np.log(padded), sizes, seconds))


def plan(words: list[list[str]], stream: bool, fill: float, curve) -> dict:
    """The batches of one setting, their padding and the forward time the curve predicts."""
    first = first_chunk_words(BUDGET) if stream else 0
    config = PipelineConfig(overlap=True, stream_words=first, min_fill=fill)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        enc = Encoder(device="cpu", max_batch_tokens=BUDGET, pipeline=config)
    shapes = []
    batches = enc.batch_stream(words, None, enc.pooling)
    for builder, batch in batches:
        shapes.append((len(batch), int(builder.lengths[batch].max()) + enc.specials.count))
    real = sum(len(p.flat_ids) + enc.specials.count * len(p.windows) for p in batches.preps)
    padded = sum(r * w for r, w in shapes)
    predicted = sum(batch_seconds(curve, r * w) for r, w in shapes)
    return {
        "chunks": len(batches.bounds),
        "batches": len(shapes),
        "tokens": real,
        "padded_tokens": padded,
        "padding": padded / real - 1,
        "mean_batch_tokens": padded / len(shapes),
        "predicted_forward_s": predicted,
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sentences", default="2000,20000,all", help="sizes, comma-separated")
    ap.add_argument("--curve", default=None, help="a JSON list of [tokens, tokens/s] pairs")
    ap.add_argument("--json", default=None, help="write the results here")
    args = ap.parse_args()
    curve = [tuple(c) for c in json.loads(args.curve)] if args.curve else H200_CURVE
    result: dict = {"args": vars(args), "machine": machine_facts(), "curve": curve, "rows": []}
    for size in args.sentences.split(","):
        n = None if size == "all" else int(size)
        raw, source, _ = load_sentences(n)
        words = normalize_input(raw)
        for stream in (False, True):
            for fill in FILLS:
                row = {
                    "corpus": source,
                    "sentences": len(words),
                    "stream": stream,
                    "min_fill": fill,
                }
                row.update(plan(words, stream, fill, curve))
                measured = H200_FORWARD_S.get(len(words)) if args.curve is None else None
                if measured is not None and not stream and fill == 0.1:
                    row["measured_forward_s"] = measured
                    row["predicted_over_measured"] = row["predicted_forward_s"] / measured
                result["rows"].append(row)
                mode = "streamed" if stream else "whole"
                check = ""
                if "measured_forward_s" in row:
                    ratio = row["predicted_over_measured"]
                    check = f"  (measured {measured:.4f} s: predicted x{ratio:.2f})"
                print(
                    f"{len(words):6d} sentences {mode:8s} min_fill {fill:4.2f}: "
                    f"{row['chunks']} chunk(s), {row['batches']:4d} batches, "
                    f"{100 * row['padding']:5.1f}% padding, mean {row['mean_batch_tokens']:7.0f} "
                    f"tokens; predicted forward {row['predicted_forward_s']:.4f} s "
                    f"({row['tokens'] / row['predicted_forward_s'] / 1e6:.2f} M tok/s){check}",
                    flush=True,
                )
    write_json(args.json, result)


if __name__ == "__main__":
    main()
