"""``Encoder``: load a model once, encode words into layerwise contextual vectors.

Pipeline of :meth:`Encoder.encode`:

1. validate and split the input (:func:`workbench.encoding.alignment.normalize_input`);
2. tokenize each distinct word once with the fast tokenizer and lay the subwords out per
   word and sentence (:mod:`workbench.encoding.prepare`); a word the tokenizer maps to nothing
   is given the unknown token (noted);
3. cut sentences longer than the model's maximum into overlapping windows of whole words;
   each word takes its vector from the window where it has the most context;
4. sort windows by length and form batches under a token budget (padding only to each
   batch's own longest sequence; a batch closes early where lengths drop by more than 3%:
   :mod:`workbench.encoding.batching`); steps 2-4 run on the whole input at once on a CPU,
   chunk by chunk on cuda, the next chunk tokenized while the device runs this one
   (:mod:`workbench.encoding.stream`);
5. run the batches through the pipeline of :mod:`workbench.encoding.pipeline`: pad each batch
   and plan its pooling (on a producer thread ahead of the model, on cuda), run the model
   (eagerly, or compiled: :mod:`workbench.encoding.runner`) under ``torch.inference_mode``
   with all hidden states, pool subwords into the kept words and layers on the device, cast
   there to the store dtype (:mod:`workbench.encoding.pooling`), and write the rows into the
   output (:mod:`workbench.encoding.rows`) in input order (on cuda: copied on a side stream
   and written by a writer thread while the next batch computes).

Example:
    >>> enc = Encoder()                                  # packaged all-MiniLM-L6-v2
    >>> emb = enc.encode([["The", "bank", "raised", "rates"]])
    >>> emb.vectors.shape
    (4, 7, 384)
"""

from __future__ import annotations

import gc
import os
import time
import warnings
import weakref
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from functools import partial
from typing import Literal

import numpy as np
import torch

from workbench.encoding import models
from workbench.encoding.alignment import Sentences, normalize_input
from workbench.encoding.batch_process import BatchProcess
from workbench.encoding.batching import ChunkBuilders, Shapes, SpecialTokens
from workbench.encoding.budget import CPU_BATCH_TOKENS, BudgetChoice, measure_batch_tokens
from workbench.encoding.device import DtypeName, choose_device, choose_dtype
from workbench.encoding.embeddings import LayerwiseEmbeddings
from workbench.encoding.pipeline import PipelineConfig, StageTimes, run_batches, run_batches_timed
from workbench.encoding.pooling import LayerSpec, Pooling, check_pooling
from workbench.encoding.prepare import Preparer
from workbench.encoding.rows import Progress, RowLayout, allocate, keep_masks, progress_reporter
from workbench.encoding.runner import CompileMode, ModelRunner
from workbench.encoding.stream import BatchStream
from workbench.encoding.workers import Clock
from workbench.errors import InputError
from workbench.fileio import atomic_path

Attention = Literal["auto", "sdpa", "eager"]
ATTENTIONS: tuple[str, ...] = ("auto", "sdpa", "eager")


class Encoder:
    """A loaded encoder that turns words into vectors for every layer.

    Args:
        model: ``None`` for the packaged default (all-MiniLM-L6-v2), a local model directory,
            or a HuggingFace hub id (looked up in the local cache first, then online).
        device: ``cuda``, ``cuda:1``, ``mps``, ``cpu``; default: cuda, else mps, else cpu.
        dtype: compute dtype (:func:`workbench.encoding.device.choose_dtype`); ``auto`` =
            bfloat16 on cuda and on a CPU with bfloat16 instructions, float32 elsewhere.
            Results are always float32 (or float16 if stored so).
        pooling: default subword -> word pooling (``first``, ``mean``, ``last``).
        max_batch_tokens: padded tokens per batch (batch size x longest sequence); default:
            8,192 on a CPU, measured on a GPU (:mod:`workbench.encoding.budget`).
        max_length: model input length (default: what the tokenizer and position embeddings
            allow); longer sentences are encoded in windows.
        stride: subwords between consecutive window starts (default: half a window).
        compile: run the forward pass through ``torch.compile``: ``True`` (dynamic shapes)
            or a mode, ``reduce-overhead`` for CUDA graphs (see
            :mod:`workbench.encoding.runner`); faster after a one-off compilation, so worth
            it for long runs only (docs/benchmarks.md). ``cudagraphs`` (cuda only): the
            eager kernels replayed from one CUDA graph per batch shape, no compiler.
        attention: the attention kernel: ``auto`` (the model's default: ``sdpa``, PyTorch's
            fused attention, where transformers supports it), ``sdpa`` or ``eager``.
        pipeline: how the stages of a batch overlap (:class:`PipelineConfig`; the default
            overlaps them on cuda and runs them in turn on a CPU).

    Attributes:
        model, tokenizer: the loaded HuggingFace objects.
        name, fingerprint: the model's label and a short hash identifying its weights.
        n_layers, dim, max_length, device, dtype, max_batch_tokens.
        budget: how ``max_batch_tokens`` was chosen (:class:`BudgetChoice`).
        specials: the special tokens around each window.
        shapes: ``exact`` or ``bucketed`` batch shapes (bucketed for CUDA graphs).
        batch_process: the worker process preparing batches (``pipeline.producer ==
            "process"`` with batches prepared ahead), else None; it ends with the encoder.
    """

    def __init__(
        self,
        model: str | os.PathLike | None = None,
        device: str | None = None,
        dtype: DtypeName = "auto",
        pooling: Pooling = "mean",
        max_batch_tokens: int | None = None,
        max_length: int | None = None,
        stride: int | None = None,
        compile: bool | CompileMode = False,
        attention: Attention = "auto",
        pipeline: PipelineConfig | None = None,
    ) -> None:
        self.source = models.resolve_model(model)
        self.device = choose_device(device)
        self.dtype = choose_dtype(dtype, self.device)
        self.pooling = check_pooling(pooling)
        if max_batch_tokens is not None and max_batch_tokens < 1:
            raise InputError("max_batch_tokens must be positive.")
        if attention not in ATTENTIONS:
            choices = ", ".join(ATTENTIONS)
            raise InputError(f"Unknown attention '{attention}'; choose one of {choices}.")
        self.pipeline = pipeline or PipelineConfig()
        self.tokenizer = models.load_tokenizer(self.source)
        self.batch_process: BatchProcess | None = None
        if self.pipeline.producer == "process" and self.pipeline.prefetch_on(self.device) > 0:
            self.batch_process = BatchProcess()
            weakref.finalize(self, self.batch_process.close)
            self.batch_process.start(self.tokenizer)  # its imports load while the model does
        self.model = models.load_model(self.source, self.dtype)
        # nn.Module.to moves in place; transformers' own `to` is typed for another call form
        torch.nn.Module.to(self.model, self.device)
        config = self.model.config
        self.name = self.source.name
        self.fingerprint = models.weights_fingerprint(self.source, config)
        self.n_layers = int(config.num_hidden_layers)
        self.dim = int(config.hidden_size)
        self.max_length = self._input_limit(max_length)
        self.specials = self._special_template()
        budget = self.max_length - self.specials.count
        if budget < 1:
            raise InputError(f"max_length {self.max_length} leaves no room for words.")
        self.window_tokens = budget
        self.stride = stride
        if attention != "auto":
            self._set_attention(attention)
        self.runner = ModelRunner(self.model, self.device, compile)
        shapes = self.pipeline.shapes
        self.shapes: Shapes = (
            ("bucketed" if self.runner.cuda_graphs else "exact") if shapes == "auto" else shapes
        )
        self.budget = self._choose_budget(max_batch_tokens)
        self.max_batch_tokens = self.budget.tokens
        self.min_fill = self.pipeline.min_fill_on(self.device)

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

    def _set_attention(self, attention: str) -> None:
        """Switch the model's attention kernel (transformers' ``attn_implementation``)."""
        try:
            self.model.set_attn_implementation(attention)
        except (ValueError, ImportError, AttributeError) as exc:
            reason = str(exc).strip().splitlines()[0][:200] if str(exc).strip() else ""
            raise InputError(
                f"attention '{attention}' is not available for {self.name}: {reason}"
            ) from exc

    def _choose_budget(self, requested: int | None) -> BudgetChoice:
        """The given budget, else 8,192 tokens on a CPU or mps, else one measured on cuda (with
        CUDA graphs, through them: a replayed batch pays no launches, so a smaller one keeps
        the device busy; the graphs of the trial batches are dropped after)."""
        if requested is not None:
            return BudgetChoice(int(requested), (), "given")
        if not self.device.startswith("cuda"):
            return BudgetChoice(CPU_BATCH_TOKENS, (), "fixed")
        model = self.model

        def forward(ids: torch.Tensor, mask: torch.Tensor | None) -> object:
            return model(input_ids=ids, attention_mask=mask, output_hidden_states=True)

        vocab = int(getattr(model.config, "vocab_size", 0) or len(self.tokenizer))
        graphs = self.runner.graphs
        choice = measure_batch_tokens(
            forward if graphs is None else self.runner, self.device, vocab
        )
        if graphs is not None:
            graphs.clear()
        return choice

    def _special_template(self) -> SpecialTokens:
        """The special tokens the tokenizer puts before and after a sentence ([CLS] .. [SEP]).

        Read off a probe encoding, so it holds for any tokenizer (and any transformers
        version) without knowing the model: ids whose word id is ``None`` before the first
        word are the head, those after the last word the tail.
        """
        probe = self.tokenizer([["a"]], is_split_into_words=True, add_special_tokens=True)
        ids, wids = probe["input_ids"][0], probe.word_ids(0)
        first = next(i for i, w in enumerate(wids) if w is not None)
        last = max(i for i, w in enumerate(wids) if w is not None)
        pad = self.tokenizer.pad_token_id
        return SpecialTokens(
            tuple(ids[:first]), tuple(ids[last + 1 :]), int(pad) if pad is not None else 0
        )

    @property
    def dtype_name(self) -> str:
        """The compute dtype's name: ``float32``, ``bfloat16`` or ``float16``."""
        return str(self.dtype).replace("torch.", "")

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
            "dtype": self.dtype_name,
            "pooling": self.pooling,
            "max_batch_tokens": self.max_batch_tokens,
        }

    # ------------------------------------------------------------------ tokenization
    def batch_stream(
        self,
        words: list[list[str]],
        rows: np.ndarray | None,
        pooling: Pooling,
        lap: Callable[..., None] | None = None,
    ) -> BatchStream:
        """The batches :meth:`encode` runs for validated word lists, chunk by chunk as the
        pipeline configuration asks (:mod:`workbench.encoding.stream`).

        Args:
            words: from :func:`workbench.encoding.alignment.normalize_input`.
            rows: ``(n_words,)`` output row of each running word (``-1``: not kept), or None
                for batches that only give model inputs
                (:meth:`~workbench.encoding.batching.BatchBuilder.inputs`).
            pooling: subword pooling.
            lap: records each chunk's tokenizing and planning (a profile).
        """

        builders = ChunkBuilders(
            self.specials,
            rows,
            pooling,
            self.shapes,
            self.max_batch_tokens,
            self.max_length,
            self.min_fill,
        )
        preparer = Preparer(self.tokenizer, self.window_tokens, self.stride)
        first = self.pipeline.stream_on(self.device, self.max_batch_tokens)
        return BatchStream(words, preparer, builders, first, lap)

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
        profile: StageTimes | None = None,
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
                larger than RAM; the returned ``vectors`` is then a read-only memory map. The
                file is written under a temporary name and appears at ``out`` only once
                complete (a failed or interrupted run leaves no file there).
            store_dtype: ``float32`` (default) or ``float16`` for the stored vectors.
            pooling: subword pooling for this call (default: the encoder's).
            profile: a :class:`~workbench.encoding.pipeline.StageTimes` to add each stage's
                seconds to, the whole call's (tokenizing, the output layout, each batch's
                stages, the finishing); the stages then run one after another (no overlap),
                so that each is timed alone (for benchmarks). With ``StageTimes(overlapped=
                True)`` the call runs as usual and the profile gets what each of its threads
                did and waited for instead.

        Raises:
            InputError: bad input (named), before any work starts.
            EncodingError: the device ran out of memory, or a stage failed.

        Returns:
            :class:`LayerwiseEmbeddings` with ``vectors`` ``(n_kept_words, n_kept_layers, dim)``,
            rows in input order (sentence by sentence, word by word).
        """
        with _gc_paused():
            return self._encode(
                sentences, layers, keep, progress, out, store_dtype, pooling, profile
            )

    def _encode(self, sentences, layers, keep, progress, out, store_dtype, pooling, profile):
        lap = _lap(profile)
        words = normalize_input(sentences)
        pooling = check_pooling(pooling or self.pooling)
        kept_layers = self.check_layers(layers)
        masks = keep_masks(words, keep)
        if store_dtype not in ("float32", "float16"):
            raise InputError(f"store_dtype must be float32 or float16, not '{store_dtype}'.")
        layout = RowLayout.build(words, masks)
        shape = (layout.n, len(kept_layers), self.dim)
        batches = self.batch_stream(words, layout.rows, pooling, lap)
        if out is None:
            vectors = allocate(shape, np.dtype(store_dtype), None)
            if self.pipeline.prefault:
                torch.from_numpy(vectors).zero_()  # the pages mapped now, by torch's threads
            lap("input")
            self._run(batches, kept_layers, vectors, progress, profile)
            lap()
        else:
            with atomic_path(out, suffix=".npy") as tmp:  # at `out` only once complete
                stream = allocate(shape, np.dtype(store_dtype), tmp)
                lap("input")
                self._run(batches, kept_layers, stream, progress, profile)
                lap()
                if isinstance(stream, np.memmap):
                    stream.flush()
                del stream
            vectors = np.load(out, mmap_mode="r")
        notes = batches.notes()
        result = LayerwiseEmbeddings(
            vectors=vectors,
            layers=kept_layers,
            words=layout.words,
            sentence_index=layout.sentence,
            word_index=layout.position,
            spans=layout.spans(batches.word_spans()),
            n_sentences=len(words),
            n_hidden=self.n_hidden,
            model_name=self.name,
            fingerprint=self.fingerprint,
            pooling=pooling,
            notes=notes,
            compute_dtype=self.dtype_name,
        )
        for note in notes:
            warnings.warn(note, stacklevel=3)  # the caller of encode
        lap("finish")
        return result

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

    def _run(self, batches, kept_layers, vectors, progress, profile) -> None:
        """Run every batch and write the pooled rows of owned, kept words into ``vectors``."""
        total = int(batches.sentence_words[-1])
        bar, callback = progress_reporter(progress, total)
        target = torch.from_numpy(vectors)  # shares memory (also with a memory map)
        done = 0

        def on_batch(words: int) -> None:
            nonlocal done
            done += words
            if bar is not None:
                bar.update(words)
            if callback is not None:
                callback(done / max(total, 1))

        args = (batches, self.runner, list(kept_layers), target, self.device)
        self.model.eval()  # dropout off, even when a wrapper sharing the model switched it on
        try:
            with torch.inference_mode():
                if profile is not None and not profile.overlapped:
                    run_batches_timed(*args, profile)
                    on_batch(total)
                else:
                    clock = Clock(profile.threads if profile is not None else None)
                    worker = self.batch_process
                    source = partial(worker.batches, batches, self.device) if worker else None
                    run_batches(*args, self.pipeline, on_batch, clock, source)
                    if profile is not None and worker is not None:
                        for activity, seconds in worker.seconds.items():
                            profile.threads[activity] = profile.threads.get(activity, 0.0) + seconds
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
        for builder, batch in self.batch_stream(normalize_input(sentences), None, self.pooling):
            ids, mask, _, _ = builder.inputs(batch)
            yield ids, mask


def _lap(profile: StageTimes | None) -> Callable[..., None]:
    """``lap(stage)`` adds the seconds since the last lap to ``profile``'s ``stage``; ``lap()``
    only restarts the clock (the batch stages time themselves); nothing without a profile."""
    last = time.perf_counter()

    def lap(stage: str | None = None) -> None:
        nonlocal last
        now = time.perf_counter()
        if profile is not None and stage is not None:
            profile.seconds[stage] += now - last
        last = now

    return lap


@contextmanager
def _gc_paused():
    """Pause Python's cyclic garbage collector while encoding.

    Encoding allocates many small lists; with a large corpus loaded (SemCor is millions of
    objects) each full collection they trigger walks all of it (docs/benchmarks.md has the
    cost). Nothing here makes reference cycles, so pausing loses nothing.
    """
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()
