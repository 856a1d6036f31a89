"""The WSD bi-encoder task: the task, its glosses, and what ends its training run."""
