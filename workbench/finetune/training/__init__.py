"""The training machinery every task shares: options, the loop, what trains, checkpoints, and
the model directory a run writes."""
