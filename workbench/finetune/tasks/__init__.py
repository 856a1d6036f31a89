"""The fine-tuning tasks: one module each, what every task provides to the training loop, and
the registry of task kinds."""
