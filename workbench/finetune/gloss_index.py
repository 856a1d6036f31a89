"""The sense index of a trained WSD bi-encoder: every sense's gloss vector, saved with the model.

The trained gloss encoder embeds the gloss of every synset once (or, with ``wsd_index="data"``,
of the candidate senses of the lemmas in the run's data); each sense key gets its synset's
vector. The rows go into a :class:`~workbench.wsd.index.SenseIndex` (FAISS, candidates by lemma
and POS) saved in ``<model dir>/sense_index`` (:data:`workbench.wsd.store.MODEL_INDEX`), where
``workbench wsd eval / disambiguate --model <model dir>`` find it
(:func:`workbench.wsd.store.model_index`): the context encoder, loaded by the
:class:`~workbench.encoding.encoder.Encoder` from the same directory, gives the query (the last
layer, :data:`CONTEXT_LAYERS`, subwords mean-pooled, :data:`CONTEXT_POOLING`), and the index
answers with the candidate of highest inner product.

The rows are the gloss vectors as trained, not L2-normalised: the model was trained on their
dot product with the context vector, and a gloss vector's norm carries what training put in it
(frequent senses grow longer). The index normalises the query only, which does not change the
ranking of one query's candidates; the scores it reports are dot products divided by the query's
norm.

Example::

    vectors = embed_synsets(model, table, ["bank.n.01", "bank.n.02"])   # (2, dim) float32
    index = gloss_index(enc, keys, key_vectors, training=TrainingInfo("semcor"))
    save_index(index, "runs/wsd/sense_index")
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from contextlib import nullcontext

import numpy as np
import torch

from workbench.encoding.encoder import Encoder
from workbench.encoding.pooling import Pooling
from workbench.finetune.glosses import GlossTable
from workbench.finetune.modeling import BiEncoderModel, encoder_config
from workbench.wsd.config import EncoderInfo, SenseIndexConfig, TrainingInfo
from workbench.wsd.index import ORIGINS, SenseIndex

#: The context vector of a trained bi-encoder: the last hidden state ...
CONTEXT_LAYERS = "-1"
#: ... of a word's subwords, averaged (the Encoder's default pooling).
CONTEXT_POOLING: Pooling = "mean"
EMBED_CHUNK = 4096  # glosses moved to the device at a time when embedding all of WordNet


def embed_synsets(
    model: BiEncoderModel,
    table: GlossTable,
    synsets: Sequence[str],
    progress: Callable[[float], None] | None = None,
) -> np.ndarray:
    """Gloss vectors ``(len(synsets), dim)`` float32 of the trained gloss encoder.

    Glosses are encoded longest first in chunks of similar length (as in training), on the
    model's device, with bf16 autocast on a GPU, without gradients.
    """
    rows = table.rows_of(synsets)
    order = table.by_length(rows)
    device = next(model.parameters()).device
    autocast = (
        torch.autocast("cuda", dtype=torch.bfloat16) if device.type == "cuda" else nullcontext()
    )
    pad_id = table.tokenizer.pad_token_id or 0
    found: dict[int, np.ndarray] = {}
    was_training = model.training
    model.eval()
    try:
        with torch.inference_mode(), autocast:
            for start in range(0, len(order), EMBED_CHUNK):
                part = order[start : start + EMBED_CHUNK]
                ids, mask = table.batch(part, pad_id)
                vecs = model.encode_glosses(
                    torch.from_numpy(ids).to(device), torch.from_numpy(mask).to(device)
                )
                for r, v in zip(part, vecs.float().cpu().numpy(), strict=True):
                    found[r] = v
                if progress is not None:
                    progress(min(start + EMBED_CHUNK, len(order)) / len(order))
    finally:
        model.train(was_training)
    dim = int(encoder_config(model.gloss_encoder).hidden_size)
    out = np.zeros((len(rows), dim), dtype=np.float32)
    for i, r in enumerate(rows):
        out[i] = found[r]
    return out


def gloss_index(
    encoder: Encoder,
    keys: Sequence[str],
    vectors: np.ndarray,
    training: TrainingInfo,
    counts: dict[str, int] | None = None,
) -> SenseIndex:
    """A :class:`SenseIndex` whose rows are trained gloss vectors, as they are (see the module
    docstring), for queries of ``encoder`` (the tuned context encoder) at
    :data:`CONTEXT_LAYERS`.

    Args:
        encoder: the context encoder, loaded from the model directory.
        keys: sense keys, one per row of ``vectors``.
        vectors: ``(len(keys), dim)`` gloss vectors.
        training: where the model was trained (stated with every result).
        counts: training occurrences per key (0 for the others).
    """
    vectors = np.asarray(vectors, dtype=np.float32)
    index = SenseIndex(SenseIndexConfig(layers=CONTEXT_LAYERS))
    code = np.full(len(keys), ORIGINS.index("gloss"), dtype=np.int8)
    seen = np.array([(counts or {}).get(k, 0) for k in keys], dtype=np.int64)
    index.set_rows(tuple(keys), vectors, code, seen)
    index.postprocessor_ = None
    index.encoder_ = EncoderInfo.of(encoder)
    index.training_ = training
    return index
