"""Experiments whose figures docs/results.md reports (quality, not speed)."""
