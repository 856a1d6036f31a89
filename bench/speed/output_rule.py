"""Benchmark: what the output rule and the options check cost, each against the plain operation
it wraps, in this process (workbench.outputs, workbench.bounds).

Run:  python -m bench run output_rule [--repeats 200] [--json docs/bench_runs/output_rule_cpu.json]

1. ``claim_file`` of an output the workbench wrote before (an ``lstat``, the folder's ledger
   read and compared; a probe file made and removed) against ``os.path.exists`` of it, with a
   ledger of 1 and of 1,000 entries.
2. ``output_file`` writing a file (a second check under the folder's lock, the rename, the
   ledger rewritten) against ``atomic_path`` writing the same bytes (temporary + rename only),
   for 1 KiB and 8 MiB.
3. ``replace_directory`` putting a folder of 20 files in place of another (one ``renameat2``
   swap where Linux has it, then the old folder deleted) against ``os.replace`` onto nothing
   plus ``shutil.rmtree`` of the old one.
4. A numeric option through its bound (``cli.options.number``) against ``float(text)``, and a
   ``TrainConfig`` built with every bound checked, per call.

Medians of ``--repeats`` calls each (microseconds); the machine is shared, so the load average is
stored with the figures.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from bench.lib.machine import machine_facts
from bench.lib.record import write_json
from workbench.bounds import POSITIVE
from workbench.cli.options import number
from workbench.fileio import atomic_path
from workbench.finetune.training.config import TrainConfig
from workbench.outputs import claim_file, mark_directory, output_file, record, replace_directory


def _median_us(fn: Callable[[], object], repeats: int) -> float:
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return 1e6 * statistics.median(times)


def _row(rows: list[dict], name: str, ours: float, base: float) -> None:
    print(f"{name:<46} {ours:10.1f} us  baseline {base:10.1f} us  +{ours - base:9.1f} us")
    rows.append({"what": name, "ours_us": ours, "baseline_us": base, "extra_us": ours - base})


def _folder(path: Path, n_files: int) -> Path:
    path.mkdir()
    for i in range(n_files):
        (path / f"f{i}.bin").write_bytes(b"x" * 4096)
    return path


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=200)
    parser.add_argument("--json", default=None)
    args = parser.parse_args()
    rows: list[dict] = []
    with tempfile.TemporaryDirectory() as name:
        root = Path(name)
        for n in (1, 1000):
            folder = root / f"ledger{n}"
            folder.mkdir()
            for i in range(n):
                (folder / f"o{i}.json").write_text("{}")
            record(*(folder / f"o{i}.json" for i in range(n)))
            target = folder / "o0.json"
            ours = _median_us(lambda t=target: claim_file(t), args.repeats)
            plain = _median_us(lambda t=target: os.path.exists(t), args.repeats)
            _row(rows, f"claim_file, ledger of {n}", ours, plain)
        for size in (1 << 10, 8 << 20):
            data = os.urandom(size)
            target = root / f"w{size}.bin"

            def write_ours(target: Path = target, data: bytes = data) -> None:
                with output_file(target) as tmp:
                    tmp.write_bytes(data)

            def write_plain(target: Path = target, data: bytes = data) -> None:
                with atomic_path(target) as tmp:
                    tmp.write_bytes(data)

            repeats = args.repeats if size < (1 << 20) else max(5, args.repeats // 20)
            _row(rows, f"output_file of {size >> 10} KiB", _median_us(write_ours, repeats),
                 _median_us(write_plain, repeats))  # fmt: skip

        def swap() -> None:
            new, old = _folder(root / "new", 20), root / "model"
            if not old.exists():
                mark_directory(_folder(old, 20), "bench")
            replace_directory(new, old)

        def plain_swap() -> None:
            new, old = _folder(root / "new2", 20), root / "model2"
            if old.exists():
                shutil.rmtree(old)
            os.replace(new, old)

        repeats = max(5, args.repeats // 10)
        _row(rows, "replace_directory, 20 files", _median_us(swap, repeats),
             _median_us(plain_swap, repeats))  # fmt: skip
    lr = number(POSITIVE)
    _row(rows, "a numeric option through its bound", _median_us(lambda: lr("5e-5"), args.repeats),
         _median_us(lambda: float("5e-5"), args.repeats))  # fmt: skip
    _row(rows, "TrainConfig(), every bound checked", _median_us(TrainConfig, args.repeats),
         _median_us(lambda: None, args.repeats))  # fmt: skip
    write_json(args.json, {"machine": machine_facts(), "repeats": args.repeats, "rows": rows})


if __name__ == "__main__":
    main()
