"""Benchmark: what the limits on outside content cost on the normal path (docs/robustness.md).

Run:  python -m bench run limits [--repeats 7] [--sentences 300] [--json PATH]

Each row runs the same call twice in this process, interleaved within each repeat: as the
workbench runs it (with the checks of :mod:`workbench.limits`), and with those checks replaced
by the plain operation they guard (no-ops, or ``json.loads`` of the whole file); medians.

1. A verified cache hit: :meth:`EmbeddingCache.load` of a stored entry of the packaged model
   (meta.json read by ``read_json``, ``index.npz`` headers by ``check_npz``) against the same
   load with plain ``json.loads`` and no header check.
2. Reading a gloss cache: a fresh :class:`GlossCache` reading shards of 384-wide vectors
   (``check_npz`` before ``np.load``, ``check_finite`` of every vector) against the same with
   both checks off.
3. Encoding: :meth:`Encoder.encode` of SemCor sentences with the packaged model (the output
   checked finite) against the same without the check.

Under rows 1-4, the checks alone are timed against the whole operation (``ratio`` is then
their share of it): on a shared machine the difference of two whole runs is mostly noise, the
checks' own time is not.
4. A CSV download of a 20,000-row table: :func:`plain_csv` (each cell through ``csv_cell``)
   against the same writer with cells as they are.
5. Text shown in the app: ``webapp.text.plain`` of a 300-character message against the
   message as it is.
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
import time
import warnings
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np

import workbench.encoding.cache as cache_module
import workbench.encoding.encoder as encoder_module
import workbench.viz.export as export_module
import workbench.wsd.gloss_cache as gloss_module
from bench.lib.machine import machine_facts
from bench.lib.record import write_json
from webapp.text import plain
from workbench import limits
from workbench.corpora.datasets import load_dataset
from workbench.encoding.cache import EmbeddingCache, encode_cached
from workbench.encoding.encoder import Encoder
from workbench.viz.export import csv_cell, plain_csv
from workbench.wsd.gloss_cache import GlossCache


@contextmanager
def swapped(module: Any, **plain_versions: Callable[..., Any]) -> Iterator[None]:
    """``module``'s names replaced by ``plain_versions`` inside the block."""
    saved = {name: getattr(module, name) for name in plain_versions}
    for name, fn in plain_versions.items():
        setattr(module, name, fn)
    try:
        yield
    finally:
        for name, fn in saved.items():
            setattr(module, name, fn)


def _nothing(*args: Any, **kwargs: Any) -> Any:
    return args[0] if args else None


def _plain_json(path: Any, *args: Any, **kwargs: Any) -> Any:
    return json.loads(Path(path).read_text(encoding="utf-8"))


def _seconds(fn: Callable[[], Any]) -> float:
    t0 = time.perf_counter()
    fn()
    return time.perf_counter() - t0


def interleaved(ours: Callable[[], Any], base: Callable[[], Any], repeats: int) -> tuple:
    """Medians (seconds) of ``ours`` and ``base``, run in turn ``repeats`` times each after
    one warm-up of each, which goes first alternating from repeat to repeat."""
    ours()
    base()
    a, b = [], []
    for i in range(repeats):
        if i % 2:
            b.append(_seconds(base))
            a.append(_seconds(ours))
        else:
            a.append(_seconds(ours))
            b.append(_seconds(base))
    return statistics.median(a), statistics.median(b), a, b


def row(rows: list[dict], name: str, result: tuple) -> None:
    ours, base, a, b = result
    print(f"{name:<58} {ours * 1e3:10.2f} ms  without {base * 1e3:10.2f} ms  "
          f"ratio {ours / base:5.3f}")  # fmt: skip
    rows.append({"name": name, "ours_s": ours, "without_s": base, "ratio": ours / base,
                 "ours_all": a, "without_all": b})  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--sentences", type=int, default=300)
    parser.add_argument("--json", default=None)
    args = parser.parse_args()
    rows: list[dict] = []
    warnings.simplefilter("ignore")
    enc = Encoder(device="cpu")
    words = [s.words for s in load_dataset("semcor").sentences[: args.sentences]]
    with tempfile.TemporaryDirectory() as name:
        root = Path(name)
        cache = EmbeddingCache(root / "cache")
        encode_cached(enc, words, cache=cache)
        (key,) = [e.key for e in cache.entries()]
        identity = cache.read_meta(key)["identity"]

        def hit() -> None:
            cache.load(key, identity, verify=True)

        def hit_plain() -> None:
            with swapped(cache_module, read_json=_plain_json, check_npz=_nothing):
                cache.load(key, identity, verify=True)

        size = sum(p.stat().st_size for p in cache.path(key).iterdir()) / 2**20
        row(rows, f"cache hit, verified ({size:.0f} MiB entry)",
            interleaved(hit, hit_plain, args.repeats))  # fmt: skip
        entry = cache.path(key)

        def cache_checks() -> None:
            limits.read_json(entry / "meta.json")
            limits.check_npz(entry / "index.npz")

        row(rows, "  the checks alone (read_json + check_npz) / the hit",
            interleaved(cache_checks, hit, args.repeats))  # fmt: skip

        identity_g = {"gloss_encoder": "bench", "pooling": "mean"}
        writer = GlossCache(identity_g, 384, root=root / "g")
        rng = np.random.default_rng(0)
        for shard in range(8):  # 8 shards of 15,000 glosses: about WordNet's 117,659
            texts = [f"gloss {shard} {i}" for i in range(15_000)]
            writer.store(texts, rng.standard_normal((len(texts), 384), dtype=np.float32))

        def glosses() -> None:
            GlossCache(identity_g, 384, root=root / "g").refresh()

        def glosses_plain() -> None:
            with swapped(gloss_module, check_npz=_nothing, check_finite=_nothing):
                GlossCache(identity_g, 384, root=root / "g").refresh()

        row(rows, "gloss cache read, 8 shards x 15,000 x 384",
            interleaved(glosses, glosses_plain, args.repeats))  # fmt: skip
        shards = sorted((root / "g").rglob("*.npz"))
        all_vectors = np.concatenate([np.load(p)["vectors"] for p in shards])

        def checks_alone() -> None:
            for path in shards:
                limits.check_npz(path)
            limits.check_finite(all_vectors, "bench")

        row(rows, "  the checks alone (8 check_npz + check_finite) / np.load",
            interleaved(checks_alone, lambda: [np.load(p)["vectors"] for p in shards],
                        args.repeats))  # fmt: skip

    def encode() -> None:
        enc.encode(words, progress=False)

    def encode_plain() -> None:
        with swapped(encoder_module, non_finite=lambda v: 0):
            enc.encode(words, progress=False)

    row(rows, f"encode {len(words)} SemCor sentences, packaged model",
        interleaved(encode, encode_plain, max(3, args.repeats // 2)))  # fmt: skip
    output = enc.encode(words, progress=False).vectors
    row(rows, f"  the check alone (non_finite of {output.nbytes / 2**20:.0f} MiB) / encode",
        interleaved(lambda: limits.non_finite(output), encode, 3))  # fmt: skip

    table = [
        {"word": f"w{i}", "sentence": "A bank by the river " * 3, "score": -i / 7,
         "label": "=x" if i % 100 == 0 else "bank%1:17:01::"}
        for i in range(20_000)
    ]  # fmt: skip

    def csv_plain() -> None:
        with swapped(export_module, csv_cell=lambda v: "" if v is None else v):
            plain_csv(table)

    row(rows, "CSV of 20,000 rows x 4 columns",
        interleaved(lambda: plain_csv(table), csv_plain, args.repeats))  # fmt: skip
    cells = [v for r in table for v in r.values()]
    row(rows, "  the check alone (csv_cell of 80,000 cells) / the CSV",
        interleaved(lambda: [csv_cell(v) for v in cells], lambda: plain_csv(table),
                    args.repeats))  # fmt: skip
    message = "cache entry /home/u/.cache/workbench/embeddings/ab12 has a damaged meta.json " * 4
    row(rows, "a 300-character message shown as plain text (x1000)",
        interleaved(lambda: [plain(message) for _ in range(1000)],
                    lambda: [str(message) for _ in range(1000)], args.repeats))  # fmt: skip
    write_json(args.json, {"machine": machine_facts(), "repeats": args.repeats,
                           "sentences": len(words), "rows": rows})  # fmt: skip


if __name__ == "__main__":
    main()
