"""The WSD bi-encoder task: the task, its model and loss, and the glosses it reads."""
