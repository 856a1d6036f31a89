"""Speed and memory benchmarks, each against a plain baseline in the same process.

Their figures: docs/benchmarks.md."""
