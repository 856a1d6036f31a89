"""Evaluation and reporting of fine-tuned models: frozen-encoder baselines, the WSD bi-encoder's
scores, before/after comparisons, and figures."""
