"""Benchmark (no GPU needed): what bucketed batch shapes cost in padding, shapes and graph memory.

Run:  python bench/bucket_shapes.py --json docs/bench_runs/bucket_shapes.json

CUDA graphs (``Encoder(compile="cudagraphs")``) need batches in few shapes, each captured
once; padding a batch to its bucket costs device time (a replayed batch pays no launches, so
its time is its tokens'), and each graph keeps its hidden states. For the first N SemCor
sentences, at a budget of 16,384 and 131,072 padded tokens (the H100's eager choice for the
packaged model), the input streamed (the cuda default) and in one chunk, this plans the
batches with the encoder's own code (:meth:`Encoder.model_inputs`) under

- ``exact``: each batch padded to its longest window (the baseline: what eager runs);
- ``x32-full``: the previous bucketing, widths in multiples of 32 and every batch filled to
  the budget's rows;
- ``ladder-pow2``: the library's (:func:`workbench.encoding.batching.bucket_width`: four widths
  an octave; :func:`~workbench.encoding.batching.bucket_rows`: rows in powers of two),

and reports batches, distinct graph shapes (shape and whether it is padded), padded tokens per
real token, and the graphs' memory in full batches (the sum over distinct shapes of rows x
width, over the budget: each full batch of hidden states is 88 MB for the packaged model at
16,384 tokens in bfloat16).
"""

from __future__ import annotations

import argparse
import warnings
from collections.abc import Callable, Iterator
from contextlib import contextmanager, nullcontext

from extract import load_sentences
from machine import machine_facts
from record import write_json

from workbench import Encoder
from workbench.encoding import batching
from workbench.encoding.pipeline import PipelineConfig
from workbench.encoding.stream import first_chunk_words


def x32_width(width: int, limit: int) -> int:
    """The previous rule: ``width`` rounded up to a multiple of 32, at most ``limit``."""
    return min(-(-width // 32) * 32, max(limit, width))


def full_rows(rows: int, full: int) -> int:
    """The previous rule: every batch filled to the budget's rows."""
    return max(rows, full)


@contextmanager
def rules(width: Callable[[int, int], int], rows: Callable[[int, int], int]) -> Iterator[None]:
    """The batching module's bucket rules replaced for the block (a baseline's)."""
    saved = batching.bucket_width, batching.bucket_rows
    batching.bucket_width, batching.bucket_rows = width, rows
    try:
        yield
    finally:
        batching.bucket_width, batching.bucket_rows = saved


def plan(words: list[list[str]], budget: int, stream: bool, scheme: str) -> dict:
    """One scheme's batches of ``words`` at ``budget``: their shapes, padding and memory."""
    config = PipelineConfig(
        shapes="exact" if scheme == "exact" else "bucketed",
        min_fill=batching.GPU_MIN_FILL,
        stream_words=first_chunk_words(budget) if stream else 0,
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        enc = Encoder(device="cpu", max_batch_tokens=budget, pipeline=config)
    real = padded = batches = 0
    shapes: set[tuple[int, int, bool]] = set()
    with rules(x32_width, full_rows) if scheme == "x32-full" else nullcontext():
        for ids, mask in enc.model_inputs(words):
            batches += 1
            real += int(mask.sum())
            padded += ids.size
            shapes.add((ids.shape[0], ids.shape[1], not mask.all()))
    return {
        "scheme": scheme,
        "budget": budget,
        "stream": stream,
        "batches": batches,
        "shapes": len(shapes),
        "widths": len({w for _, w, _ in shapes}),
        "real_tokens": real,
        "padded_tokens": padded,
        "padded_per_real": padded / real,
        "graph_memory_full_batches": sum(r * w for r, w, _ in shapes) / budget,
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sentences", default="2000,20000", help="sizes, comma-separated")
    ap.add_argument("--budgets", default="16384,131072", help="padded tokens per batch")
    ap.add_argument("--json", default=None, help="write the results here")
    args = ap.parse_args()
    result: dict = {"args": vars(args), "machine": machine_facts(), "rows": []}
    for size in args.sentences.split(","):
        words, source, _ = load_sentences(int(size))
        for budget in (int(b) for b in args.budgets.split(",")):
            for stream in (True, False):
                for scheme in ("exact", "x32-full", "ladder-pow2"):
                    row = {"corpus": source, "sentences": len(words)}
                    row.update(plan(words, budget, stream, scheme))
                    result["rows"].append(row)
                    mode = "streamed" if stream else "whole"
                    print(
                        f"{len(words):6d} sentences, budget {budget:6d}, {mode:8s} "
                        f"{scheme:12s}: {row['batches']:4d} batches, {row['shapes']:3d} shapes "
                        f"({row['widths']} widths), {row['padded_per_real']:.2f} padded per "
                        f"real token, graphs {row['graph_memory_full_batches']:5.1f} full batches",
                        flush=True,
                    )
    write_json(args.json, result)


if __name__ == "__main__":
    main()
