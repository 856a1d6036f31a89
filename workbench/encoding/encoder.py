"""``Encoder``: load a model once, encode words into layerwise contextual vectors.

Pipeline of :meth:`Encoder.encode`:

1. validate and split the input (:func:`workbench.encoding.alignment.normalize_input`);
2. tokenize every sentence at once with the fast tokenizer, group subwords by word
   (``word_ids()``) into one id array and word offsets per sentence; a word the tokenizer maps
   to nothing is given the unknown token (noted);
3. cut sentences longer than the model's maximum into overlapping windows of whole words;
   each word takes its vector from the window where it has the most context;
4. sort windows by length and form batches under a token budget (padding only to each
   batch's own longest sequence; a batch closes early where lengths drop by more than 3%);
5. run the model (eagerly, or compiled: :mod:`workbench.encoding.runner`) under
   ``torch.inference_mode`` with all hidden states, pool subwords into words on the device
   (a gather, plus a segment sum for multi-subword words: :mod:`workbench.encoding.pooling`),
   and write the rows straight into the output (:mod:`workbench.encoding.rows`) in input order.

Example:
    >>> enc = Encoder()                                  # packaged all-MiniLM-L6-v2
    >>> emb = enc.encode([["The", "bank", "raised", "rates"]])
    >>> emb.vectors.shape
    (4, 7, 384)
"""

from __future__ import annotations

import gc
import os
from collections.abc import Iterator, Sequence
from contextlib import contextmanager

import numpy as np
import torch

from workbench.encoding import models
from workbench.encoding.alignment import Sentences, normalize_input
from workbench.encoding.embeddings import LayerwiseEmbeddings
from workbench.encoding.pooling import (
    LayerSpec,
    Pooling,
    apply_pooling,
    check_pooling,
    pooling_plan_flat,
)
from workbench.encoding.prepare import Prepared, prepare
from workbench.encoding.rows import Progress, RowLayout, allocate, keep_masks, progress_reporter
from workbench.encoding.runner import ModelRunner
from workbench.errors import InputError


class Encoder:
    """A loaded encoder that turns words into vectors for every layer.

    Args:
        model: ``None`` for the packaged default (all-MiniLM-L6-v2), a local model directory,
            or a HuggingFace hub id (looked up in the local cache first, then online).
        device: ``cuda``, ``cuda:1``, ``mps``, ``cpu``; default: cuda, else mps, else cpu.
        dtype: compute dtype; ``auto`` = bfloat16 on cuda, float32 elsewhere. Results are
            always float32 (or float16 if stored so).
        pooling: default subword -> word pooling (``first``, ``mean``, ``last``).
        max_batch_tokens: padded tokens per batch (batch size x longest sequence).
        max_length: model input length (default: what the tokenizer and position embeddings
            allow); longer sentences are encoded in windows.
        stride: subwords between consecutive window starts (default: half a window).
        compile: run the forward pass through ``torch.compile`` (see
            :mod:`workbench.encoding.runner`): 5-10% faster on CPU after a one-off 10-25 s
            compilation, so worth it for long runs only.

    Attributes:
        model, tokenizer: the loaded HuggingFace objects.
        name, fingerprint: the model's label and a short hash identifying its weights.
        n_layers, dim, max_length, device, dtype.
    """

    def __init__(
        self,
        model: str | os.PathLike | None = None,
        device: str | None = None,
        dtype: models.DtypeName = "auto",
        pooling: Pooling = "mean",
        max_batch_tokens: int = 8192,
        max_length: int | None = None,
        stride: int | None = None,
        compile: bool = False,
    ) -> None:
        self.source = models.resolve_model(model)
        self.device = models.choose_device(device)
        self.dtype = models.choose_dtype(dtype, self.device)
        self.pooling = check_pooling(pooling)
        if max_batch_tokens < 1:
            raise InputError("max_batch_tokens must be positive.")
        self.max_batch_tokens = int(max_batch_tokens)
        self.tokenizer = models.load_tokenizer(self.source)
        self.model = models.load_model(self.source, self.dtype)
        # nn.Module.to moves in place; transformers' own `to` is typed for another call form
        torch.nn.Module.to(self.model, self.device)
        config = self.model.config
        self.name = self.source.name
        self.fingerprint = models.weights_fingerprint(self.source, config)
        self.n_layers = int(config.num_hidden_layers)
        self.dim = int(config.hidden_size)
        self.max_length = self._input_limit(max_length)
        self._head, self._tail = self._special_template()
        self._prefix = len(self._head)
        budget = self.max_length - len(self._head) - len(self._tail)
        if budget < 1:
            raise InputError(f"max_length {self.max_length} leaves no room for words.")
        self.window_tokens = budget
        self.stride = stride
        self.runner = ModelRunner(self.model, self.device, compile)

    # ------------------------------------------------------------------ set-up helpers
    def _input_limit(self, requested: int | None) -> int:
        """Longest input the model takes: tokenizer limit, position embeddings, padding offset."""
        positions = getattr(self.model.config, "max_position_embeddings", None) or 512
        emb = getattr(self.model, "embeddings", None)
        offset = getattr(emb, "padding_idx", None)  # position ids start after padding_idx
        if isinstance(offset, int) and offset > 0 and positions > 2:
            positions -= offset + 1
        limit = min(positions, int(min(self.tokenizer.model_max_length, 1_000_000)))
        if requested is not None:
            if requested > limit:
                raise InputError(f"max_length {requested} exceeds this model's limit of {limit}.")
            limit = requested
        return int(limit)

    def _special_template(self) -> tuple[list[int], list[int]]:
        """The special tokens the tokenizer puts before and after a sentence ([CLS] .. [SEP]).

        Read off a probe encoding, so it holds for any tokenizer (and any transformers
        version) without knowing the model: ids whose word id is ``None`` before the first
        word are the head, those after the last word the tail.
        """
        probe = self.tokenizer([["a"]], is_split_into_words=True, add_special_tokens=True)
        ids, wids = probe["input_ids"][0], probe.word_ids(0)
        first = next(i for i, w in enumerate(wids) if w is not None)
        last = max(i for i, w in enumerate(wids) if w is not None)
        return list(ids[:first]), list(ids[last + 1 :])

    @property
    def n_hidden(self) -> int:
        """Number of hidden states (embedding output + each layer)."""
        return self.n_layers + 1

    def describe(self) -> dict:
        """Facts about the loaded model, for ``workbench info`` and the app's sidebar."""
        n_params = sum(p.numel() for p in self.model.parameters())
        return {
            "model": self.name,
            "location": self.source.location,
            "architecture": type(self.model).__name__,
            "fingerprint": self.fingerprint,
            "layers": self.n_layers,
            "hidden_states": self.n_hidden,
            "dim": self.dim,
            "parameters": n_params,
            "max_length": self.max_length,
            "device": self.device,
            "dtype": str(self.dtype).replace("torch.", ""),
            "pooling": self.pooling,
        }

    # ------------------------------------------------------------------ tokenization
    def _prepare(self, sentences: list[list[str]]) -> Prepared:
        return prepare(self.tokenizer, sentences, self.window_tokens, self.stride)

    def _batches(self, lengths: np.ndarray) -> list[np.ndarray]:
        """Window indices grouped into batches, longest first.

        A batch closes when one more sequence would take its padded size past the token budget,
        or, once it holds a tenth of the budget, when the next sequence is more than 3% shorter
        than its longest, so many batches hold sequences of one length. On 2,000 SemCor
        sentences padding is 1.8% of the tokens (docs/benchmarks.md, "Extraction").
        """
        order = np.argsort(-lengths, kind="stable")
        batches: list[np.ndarray] = []
        current: list[int] = []
        width = 0
        min_tokens = self.max_batch_tokens // 10
        for idx in order.tolist():
            length = int(lengths[idx])
            if current:
                full = width * (len(current) + 1) > self.max_batch_tokens
                ragged = length < 0.97 * width and width * len(current) >= min_tokens
                if full or ragged:
                    batches.append(np.array(current))
                    current = []
            if not current:
                width = length
            current.append(idx)
        if current:
            batches.append(np.array(current))
        return batches

    # ------------------------------------------------------------------ encoding
    def encode(
        self,
        sentences: Sentences,
        layers: Sequence[int] | None = None,
        keep: Sequence[Sequence[int]] | None = None,
        progress: Progress = None,
        out: str | os.PathLike | None = None,
        store_dtype: str = "float32",
        pooling: Pooling | None = None,
    ) -> LayerwiseEmbeddings:
        """Encode sentences into word vectors for every (or the chosen) hidden state.

        Args:
            sentences: raw strings (split by :func:`workbench.encoding.alignment.split_words`) or
                pre-split word lists. The whole input is validated before any work starts.
            layers: hidden-state indices to keep (default all: 0 = embedding output .. n_layers).
            keep: per sentence, the word positions to keep (default: every word).
            progress: ``True``/``False`` for a tqdm bar, a callable taking the fraction done,
                or ``None``: a bar from 5,000 words on.
            out: path of a ``.npy`` file to stream the vectors to (memory-mapped), for corpora
                larger than RAM; the returned ``vectors`` is then a read-only memory map.
            store_dtype: ``float32`` (default) or ``float16`` for the stored vectors.
            pooling: subword pooling for this call (default: the encoder's).

        Returns:
            :class:`LayerwiseEmbeddings` with ``vectors`` ``(n_kept_words, n_kept_layers, dim)``,
            rows in input order (sentence by sentence, word by word).
        """
        with _gc_paused():
            return self._encode(sentences, layers, keep, progress, out, store_dtype, pooling)

    def _encode(self, sentences, layers, keep, progress, out, store_dtype, pooling):
        words = normalize_input(sentences)
        pooling = check_pooling(pooling or self.pooling)
        kept_layers = self.check_layers(layers)
        masks = keep_masks(words, keep)
        if store_dtype not in ("float32", "float16"):
            raise InputError(f"store_dtype must be float32 or float16, not '{store_dtype}'.")
        prep = self._prepare(words)

        layout = RowLayout.build(words, masks)
        shape = (layout.n, len(kept_layers), self.dim)
        vectors = allocate(shape, np.dtype(store_dtype), out)
        lengths = np.array([prep.window_length(w) for w in prep.windows], dtype=np.int64)
        self._run(prep, lengths, kept_layers, pooling, layout.row_of, vectors, progress)
        if isinstance(vectors, np.memmap):
            vectors.flush()
            vectors = np.load(out, mmap_mode="r")
        return LayerwiseEmbeddings(
            vectors=vectors,
            layers=kept_layers,
            words=layout.words,
            sentence_index=layout.sentence,
            word_index=layout.position,
            spans=layout.spans(prep.offsets),
            n_sentences=len(words),
            n_hidden=self.n_hidden,
            model_name=self.name,
            fingerprint=self.fingerprint,
            pooling=pooling,
            notes=prep.notes,
        )

    def check_layers(self, layers: Sequence[int] | None) -> tuple[int, ...]:
        """Absolute, sorted, distinct hidden-state indices to keep (all by default).

        Raises:
            InputError: an empty list, or an index outside ``-n_hidden .. n_hidden - 1``.
        """
        if layers is None:
            return tuple(range(self.n_hidden))
        if len(layers) == 0:
            raise InputError("layers is empty: keep at least one hidden state.")
        return tuple(sorted(set(LayerSpec(tuple(int(x) for x in layers)).resolve(self.n_hidden))))

    def _run(self, prep, lengths, kept_layers, pooling, row_of, vectors, progress) -> None:
        """Run every batch and write the pooled rows of owned, kept words into ``vectors``."""
        total = int(lengths.sum())
        bar, callback = progress_reporter(progress, total, sum(len(r) for r in row_of))
        pad_id = self.tokenizer.pad_token_id if self.tokenizer.pad_token_id is not None else 0
        layer_idx = list(kept_layers)
        target = torch.from_numpy(vectors)  # shares memory (also with a memory map)
        done = 0
        try:
            with torch.inference_mode():
                for batch in self._batches(lengths):
                    self._run_batch(prep, batch, layer_idx, pooling, row_of, target, pad_id)
                    step = int(lengths[batch].sum())
                    done += step
                    if bar is not None:
                        bar.update(step)
                    if callback is not None:
                        callback(done / max(total, 1))
        finally:
            if bar is not None:
                bar.close()

    def model_inputs(self, sentences: Sentences) -> Iterator[tuple[np.ndarray, np.ndarray]]:
        """The padded ``(ids, mask)`` int64 arrays, ``(batch, width)`` each, of every batch
        :meth:`encode` runs for ``sentences``, in the order it runs them.

        For a benchmark of the bare forward pass or a custom loop over the model::

            for ids, mask in enc.model_inputs(sentences):
                enc.model(input_ids=torch.from_numpy(ids), attention_mask=torch.from_numpy(mask))
        """
        prep = self._prepare(normalize_input(sentences))
        lengths = np.array([prep.window_length(w) for w in prep.windows], dtype=np.int64)
        pad_id = self.tokenizer.pad_token_id if self.tokenizer.pad_token_id is not None else 0
        for batch in self._batches(lengths):
            ids, mask, _, _ = self._batch_inputs(prep, batch, pad_id)
            yield ids, mask

    def _batch_inputs(self, prep: Prepared, batch: np.ndarray, pad_id: int):
        """The padded ``(ids, mask)`` int64 arrays of a batch of windows, with the windows and
        each one's subword range ``(a, b)`` in its sentence."""
        head, tail, prefix = self._head, self._tail, self._prefix
        windows = [prep.windows[i] for i in batch.tolist()]
        bounds = [
            (int(prep.offsets[w.sentence][w.word_start]), int(prep.offsets[w.sentence][w.word_end]))
            for w in windows
        ]
        width = max(b - a for a, b in bounds) + prefix + len(tail)
        ids = np.full((len(windows), width), pad_id, dtype=np.int64)
        mask = np.zeros((len(windows), width), dtype=np.int64)
        for r, (w, (a, b)) in enumerate(zip(windows, bounds)):
            end = prefix + b - a
            ids[r, :prefix] = head
            ids[r, prefix:end] = prep.ids[w.sentence][a:b]
            ids[r, end : end + len(tail)] = tail
            mask[r, : end + len(tail)] = 1
        return ids, mask, windows, bounds

    def _run_batch(self, prep, batch, layer_idx, pooling, row_of, vectors, pad_id) -> None:
        """Pad the batch's windows into one input, run the model, pool and write kept words."""
        ids, mask, windows, bounds = self._batch_inputs(prep, batch, pad_id)
        width = ids.shape[1]
        starts: list[np.ndarray] = []
        ends: list[np.ndarray] = []
        target_parts: list[np.ndarray] = []
        for r, (w, (a, _)) in enumerate(zip(windows, bounds)):
            if len(w.owned) == w.word_end - w.word_start:
                own = np.arange(w.word_start, w.word_end)
            else:
                own = np.asarray(w.owned, dtype=np.int64)
            rows = row_of[w.sentence][own]
            kept = rows >= 0
            if not kept.all():
                own, rows = own[kept], rows[kept]
            off = prep.offsets[w.sentence]
            shift = r * width + self._prefix - a  # sentence offset -> flattened batch position
            starts.append(off[own] + shift)
            ends.append(off[own + 1] + shift)
            target_parts.append(rows)
        targets = np.concatenate(target_parts)
        if not len(targets):
            return
        out = self.runner(
            torch.from_numpy(ids).to(self.device), torch.from_numpy(mask).to(self.device)
        )
        plan = pooling_plan_flat(np.concatenate(starts), np.concatenate(ends), pooling)
        hidden = [out.hidden_states[i] for i in layer_idx]
        apply_pooling(plan, hidden, vectors, targets)


@contextmanager
def _gc_paused():
    """Pause Python's cyclic garbage collector while encoding.

    Encoding allocates many small lists; with a large corpus loaded (SemCor is millions of
    objects) each full collection they trigger walks all of it: up to 0.3 s per 2,000
    sentences (docs/benchmarks.md). Nothing here makes reference cycles, so pausing loses
    nothing.
    """
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()
