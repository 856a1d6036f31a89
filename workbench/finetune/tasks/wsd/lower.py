"""The frozen lower layers of a ``top_layers`` bi-encoder run, computed once per text.

With ``top_layers`` = N only the top N layers of the context and gloss encoders train; below
them both keep their starting weights, so each context and each gloss gives the trained layers
the same input at every step. :class:`LowerLayers` hands the collate those inputs: it looks
each token-id sequence up in an :class:`~workbench.finetune.training.activations.ActivationCache`
(one per distinct frozen part: the two encoders share one when they start from the same
model), computes the missing ones with the encoder's own lower layers
(:func:`~workbench.finetune.training.top_layers.lower_states`, longest first, in chunks of
similar length) and stores them. :meth:`LowerLayers.fill` does that for a whole data set ahead
of training, with a progress bar and its ETA.

Example::

    lower = LowerLayers(below=4, pad_id=0)
    lower.fill(model.encoder, [row["input_ids"] for row in rows], progress=True)
    hidden = lower.batch(model.encoder, [row["input_ids"] for row in rows[:8]])  # (8, w, dim)
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np
import torch
from torch import nn

from workbench.finetune.tasks.wsd.model import chunk_bounds
from workbench.finetune.training.activations import ActivationCache, frozen_fingerprint
from workbench.finetune.training.model_io import encoder_config
from workbench.finetune.training.top_layers import frozen_modules, lower_states

#: Padded tokens per forward pass of the lower layers.
LOWER_BATCH_TOKENS = 8192
#: Sequences computed between two writes to the cache.
STORE_EVERY = 4096


class LowerLayers:
    """Cached hidden states entering layer ``below`` of each encoder, by token ids.

    Args:
        below: the number of frozen layers under the trained ones.
        pad_id: the tokenizer's padding id.
        root: the cache dir (default: the workbench's).
    """

    def __init__(self, below: int, pad_id: int, root: str | Path | None = None) -> None:
        self.below = int(below)
        self.pad_id = int(pad_id)
        self.root = root
        self._caches: dict[int, ActivationCache] = {}  # id(encoder) -> its cache
        self._by_identity: dict[str, ActivationCache] = {}

    def cache(self, encoder: nn.Module) -> ActivationCache:
        """The activation cache of ``encoder``'s frozen part (shared by encoders whose frozen
        weights are the same)."""
        found = self._caches.get(id(encoder))
        if found is None:
            fingerprint = frozen_fingerprint(frozen_modules(encoder, self.below))
            found = self._by_identity.get(fingerprint)
            if found is None:
                dim = int(encoder_config(encoder).hidden_size)
                identity = {"frozen": fingerprint, "below": self.below}
                found = ActivationCache(identity, dim, self.root)
                self._by_identity[fingerprint] = found
            self._caches[id(encoder)] = found
        return found

    def fill(
        self, encoder: nn.Module, sequences: Sequence[Sequence[int]], bar: object = None
    ) -> int:
        """Compute and store the activations of the ``sequences`` not cached yet; returns how
        many were computed. ``bar``: a tqdm bar counting tokens, advanced as they are done."""
        cache = self.cache(encoder)
        found, _ = cache.lookup(sequences)
        unique: dict[tuple[int, ...], None] = {}
        for seq, hit in zip(sequences, found, strict=True):
            if hit is None:
                unique[tuple(seq)] = None
        missing = sorted(unique, key=len, reverse=True)
        device = next(encoder.parameters()).device
        done_ids: list[tuple[int, ...]] = []
        done_states: list[np.ndarray] = []
        for start, stop in chunk_bounds([len(s) for s in missing], LOWER_BATCH_TOKENS):
            chunk = missing[start:stop]
            width = len(chunk[0])
            ids = torch.full((len(chunk), width), self.pad_id, dtype=torch.long)
            mask = torch.zeros((len(chunk), width), dtype=torch.long)
            for i, seq in enumerate(chunk):
                ids[i, : len(seq)] = torch.tensor(seq)
                mask[i, : len(seq)] = 1
            out = lower_states(encoder, ids.to(device), mask.to(device), self.below)
            states = out.float().cpu().numpy()
            for i, seq in enumerate(chunk):
                done_ids.append(seq)
                done_states.append(states[i, : len(seq)])
            if len(done_ids) >= STORE_EVERY:
                cache.store(done_ids, done_states)
                done_ids, done_states = [], []
            if bar is not None:
                bar.update(sum(len(s) for s in chunk))  # type: ignore[attr-defined]
        if done_ids:
            cache.store(done_ids, done_states)
        return len(missing)

    def batch(self, encoder: nn.Module, sequences: Sequence[Sequence[int]]) -> np.ndarray:
        """``(len(sequences), width, dim)`` float32: each sequence's cached activations (computed
        first where missing), zero-padded to the longest."""
        cache = self.cache(encoder)
        found, n = cache.lookup(sequences)
        if n < len(sequences):
            self.fill(encoder, sequences)
            found, n = cache.lookup(sequences)
        width = max(len(s) for s in sequences)
        out = np.zeros((len(sequences), width, cache.dim), dtype=np.float32)
        for i, states in enumerate(found):
            if states is None:  # a cache that could not keep it: computed above, not stored
                raise RuntimeError("activations missing after they were computed")
            out[i, : len(states)] = states
        return out
