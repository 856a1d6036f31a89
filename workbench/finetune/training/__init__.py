"""The training machinery every task shares: options, the loop, the task models and the
pretrained transformer they start from, what trains, checkpoints, and the model directory a run
writes."""
