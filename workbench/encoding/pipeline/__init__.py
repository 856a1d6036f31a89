"""The encoder's throughput machinery, the only part of ``workbench.encoding`` with threads.

:meth:`workbench.encoding.encoder.Encoder.encode` runs its batches in a plain loop, or, where
its :class:`~workbench.encoding.pipeline.overlap.PipelineConfig` says so (by default on cuda),
through :func:`~workbench.encoding.pipeline.overlap.run_overlapped`: a producer thread tokenizes
the input chunk by chunk (:mod:`~workbench.encoding.pipeline.stream`) and builds the next
batches while the device runs this one, and a writer thread writes the pooled rows
(:mod:`~workbench.encoding.pipeline.threads`). On cuda the encoder's batch budget is measured
(:mod:`~workbench.encoding.pipeline.budget`).
"""
