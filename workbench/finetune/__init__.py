"""Fine-tuning: sequence, pair and token classification, masked-LM adaptation and the WSD
bi-encoder, over one training loop. The folder says what each file is:

* :mod:`.tasks`: one module per task (:mod:`.tasks.sequence`, :mod:`.tasks.pair`,
  :mod:`.tasks.token`, :mod:`.tasks.mlm` with :mod:`.tasks.masking`, and the WSD bi-encoder in
  :mod:`.tasks.wsd`, its model and loss beside it), what every task provides to the loop
  (:mod:`.tasks.base`), and the registry of task kinds with the one call that runs them
  (:mod:`.tasks.registry`);
* :mod:`.training`: the shared machinery: options (:mod:`.training.config`), the loop
  (:mod:`.training.loop`), the task models of the classification and masked-LM tasks
  (:mod:`.training.modeling`, :mod:`.training.model_io`) and the pretrained transformer they
  start from (:mod:`.training.encoders`), what trains (:mod:`.training.parameters`),
  checkpoints (:mod:`.training.checkpoint`), and the model directory a run writes, which
  :class:`workbench.Encoder` loads like any other (:mod:`.training.store`);
* :mod:`.data`: example types and file readers (:mod:`.data.readers`), BIO tags
  (:mod:`.data.bio`), the splits of one run (:mod:`.data.splits`) and the built-in datasets made
  from SemCor and WordNet (:mod:`.data.wic`, :mod:`.data.supersense`) or from WordNet's usage
  examples alone, offline (:mod:`.data.wordnet_tasks`);
* :mod:`.evaluation`: frozen-encoder baselines (:mod:`.evaluation.baselines`), before/after
  comparisons
  (:mod:`.evaluation.compare`, :mod:`.evaluation.compare_senses`) and figures
  (:mod:`.evaluation.plots`);
* :mod:`.runs`: a whole run as the command line and the app start it (training on a run's data,
  then the baselines, into the training card).
"""
