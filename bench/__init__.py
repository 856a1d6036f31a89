"""The benchmark suite: speed benchmarks, experiments and their shared helpers (bench/README.md).

Run one with ``python -m bench run NAME``; ``python -m bench list`` names them all."""
