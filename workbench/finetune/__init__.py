"""Fine-tuning: sequence, pair and token classification, masked-LM adaptation and the WSD
bi-encoder, over one training loop. The folder says what each file is:

* :mod:`.tasks`: one module per task (:mod:`.tasks.sequence`, :mod:`.tasks.pair`,
  :mod:`.tasks.token`, :mod:`.tasks.mlm`, and the WSD bi-encoder in :mod:`.tasks.wsd`, its model
  and loss beside it), what every task provides to the loop (:mod:`.tasks.base`), and the
  registry of task kinds with the one call that runs them (:mod:`.tasks.registry`);
* :mod:`.training`: the shared machinery: options (:mod:`.training.config`), the loop
  (:mod:`.training.loop`), what trains (:mod:`.training.parameters`), checkpoints, and the model
  directory a run writes, which :class:`workbench.Encoder` loads like any other
  (:mod:`.training.store`);
* :mod:`.data`: the data a task reads (:mod:`.data.readers`) and the built-in datasets made from
  SemCor and WordNet (:mod:`.data.wic`, :mod:`.data.supersense`);
* :mod:`.evaluation`: baselines, before/after comparisons and figures;
* :mod:`.runs`: a whole run as the command line and the app start it (data, training,
  baselines).
"""
