"""The training side of the WSD bi-encoder in one package: its task and options, its model and
loss, the glosses it reads, the cached lower layers of a ``top_layers`` run, what it scores
(:mod:`.evaluation`), the end of its training run and the work on a trained directory
(:mod:`.finish`: the gloss cache, the POS probe), and a run in two stages by one command
(:mod:`.stages`: both towers, then the context tower alone). Loading and answering with a
trained one is :mod:`workbench.wsd.biencoder` (no torch training stack on the answering path)."""
