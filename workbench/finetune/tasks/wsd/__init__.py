"""The WSD bi-encoder task: the task, its model and loss, the glosses it reads, and the end of
its training run."""
