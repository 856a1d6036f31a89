"""Answering without the training stack: a model exported once to ONNX and run by ONNX Runtime.

:mod:`~workbench.encoding.exported.store` keeps exports on disk (one folder per model
fingerprint, dtype and opset; complete or absent; checked on load);
:mod:`~workbench.encoding.exported.make` makes one from the torch model and checks it on a probe
(the only module here that imports torch); :mod:`~workbench.encoding.exported.runtime` runs one
(ONNX Runtime, ``tokenizers``, numpy); :mod:`~workbench.encoding.exported.backend` decides which
backend answers for an :class:`~workbench.encoding.encoder.Encoder` and why.
"""
