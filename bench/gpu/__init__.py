"""Benchmarks run on a remote GPU machine: what travels, the session run there, what comes back."""
