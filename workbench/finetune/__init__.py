"""Fine-tuning: sequence, pair and token classification and masked-LM adaptation.

One task module each (:mod:`.sequence`, :mod:`.pair`, :mod:`.token`, :mod:`.mlm`) over one
training loop (:mod:`.loop`); data readers in :mod:`.data`; built-in tasks made from SemCor
and WordNet in :mod:`.wic` and :mod:`.supersense`. The result is a model directory that
:class:`workbench.Encoder` loads like any other (:mod:`.store`).

The task kinds and the one call that runs them are in :mod:`.tasks`.
"""
