"""``Encoder``: load a model once, encode words into layerwise contextual vectors.

:meth:`Encoder.encode`, top to bottom:

1. validate and split the input (:func:`workbench.encoding.alignment.normalize_input`), lay out
   the output rows of the kept words (:class:`~workbench.encoding.rows.RowLayout`);
2. tokenize each distinct word once with the fast tokenizer and lay the subwords out per word
   and sentence (:class:`~workbench.encoding.prepare.Preparer`); a word the tokenizer maps to
   nothing is given the unknown token (noted);
3. cut sentences longer than the model's maximum into overlapping windows of whole words;
   each word takes its vector from the window where it has the most context;
4. sort windows by length and group them into batches under a token budget (padding only to
   each batch's own longest window; a batch closes early where lengths drop by more than 3%:
   :func:`~workbench.encoding.batching.plan_batches`);
5. for each batch: pad it and plan its pooling
   (:meth:`~workbench.encoding.batching.BatchBuilder.build`), run the model with all hidden
   states and pool subwords into the kept words and layers, cast to the store dtype (the
   backend's ``pooled``: ONNX Runtime's
   :class:`~workbench.encoding.exported.runtime.OnnxModel` on a CPU, pooling in numpy; torch's
   :class:`~workbench.encoding.runner.ModelRunner` elsewhere, on the device under
   ``torch.inference_mode``), and write the rows into the output in input order.

That is the plain loop, in :meth:`Encoder._plain_loop`, which runs in the calling thread. One
option, ``pipeline`` (:class:`~workbench.encoding.pipeline.overlap.PipelineConfig`), instead
runs the same stages overlapped (:func:`~workbench.encoding.pipeline.overlap.run_overlapped`:
a producer thread tokenizing chunk by chunk and building the next batches, a writer thread
writing the rows), by default on cuda only; on cuda the batch budget is measured when the
encoder loads (:mod:`workbench.encoding.pipeline.budget`).

Example:
    >>> enc = Encoder()                                  # packaged all-MiniLM-L6-v2
    >>> emb = enc.encode([["The", "bank", "raised", "rates"]])
    >>> emb.vectors.shape
    (4, 7, 384)
"""

from __future__ import annotations

import gc
import os
import sys
import warnings
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Literal, cast

import numpy as np

from workbench.encoding import models
from workbench.encoding.alignment import Sentences, normalize_input
from workbench.encoding.batching import (
    CPU_BATCH_TOKENS,
    BatchBuilder,
    SpecialTokens,
    batch_error,
)
from workbench.encoding.device import (
    DTYPE_ENV,
    DtypeChoice,
    DtypeName,
    choose_device,
    explain_dtype,
    torch_dtype,
)
from workbench.encoding.dtype_probe import ProbeShape
from workbench.encoding.embeddings import LayerwiseEmbeddings
from workbench.encoding.exported.backend import Backend, BackendChoice, choose_backend
from workbench.encoding.exported.make import ExportRefused, make_export
from workbench.encoding.exported.quantize import make_int8_export
from workbench.encoding.exported.runtime import OnnxModel
from workbench.encoding.exported.store import ExportRecord, ModelFacts
from workbench.encoding.pipeline.budget import BudgetChoice, measure_batch_tokens
from workbench.encoding.pipeline.overlap import PipelineConfig, run_overlapped
from workbench.encoding.pipeline.stream import BatchStream
from workbench.encoding.pooling import LayerSpec, Pooling, check_pooling
from workbench.encoding.prepare import Prepared, Preparer
from workbench.encoding.rows import Progress, RowLayout, allocate, keep_masks, progress_reporter
from workbench.encoding.runner import ModelRunner
from workbench.encoding.stage_clock import StageClock, no_clock
from workbench.encoding.tokenizer import WordTokenizer
from workbench.errors import EncodingError, InputError
from workbench.fileio import atomic_path
from workbench.limits import non_finite

if TYPE_CHECKING:
    import torch
    from transformers import PreTrainedModel, PreTrainedTokenizerBase

Attention = Literal["auto", "sdpa", "eager"]
ATTENTIONS: tuple[str, ...] = ("auto", "sdpa", "eager")


class Encoder:
    """A loaded encoder that turns words into vectors for every layer.

    Args:
        model: ``None`` for the packaged default (all-MiniLM-L6-v2), a local model directory,
            or a HuggingFace hub id (looked up in the local cache first, then online).
        device: ``cuda``, ``cuda:1``, ``mps``, ``cpu``; default: cuda, else mps, else cpu.
        dtype: compute dtype: ``auto`` = float32 through ONNX Runtime on a CPU; on torch
            (:func:`workbench.encoding.device.explain_dtype`) bfloat16 on cuda, on a CPU the
            dtype a short probe measured the faster there for the model's size. ``int8``: the
            model's int8 export on ONNX Runtime (:mod:`workbench.encoding.exported.quantize`:
            faster, its vectors within a cosine of 0.9 of float32's on the probe).
            Results are always float32 (or float16 if stored so).
        pooling: default subword -> word pooling (``first``, ``mean``, ``last``).
        max_batch_tokens: padded tokens per batch (batch size x longest sequence); default:
            8,192 on a CPU, measured on cuda (:mod:`workbench.encoding.pipeline.budget`).
        max_length: model input length (default: what the tokenizer and position embeddings
            allow); longer sentences are encoded in windows.
        stride: subwords between consecutive window starts (default: half a window).
        compile: run the forward pass through ``torch.compile`` (:mod:`workbench.encoding.runner`);
            faster after a one-off compilation, so worth it for long runs only.
        attention: the attention kernel: ``auto`` (the model's default: ``sdpa``, PyTorch's
            fused attention, where transformers supports it), ``sdpa`` or ``eager``.
        pipeline: the plain loop or the overlapped run (:class:`PipelineConfig`; the default
            overlaps on cuda and runs the plain loop elsewhere).
        backend: what runs the model: ``auto`` (ONNX Runtime on a CPU in float32, from the
            model's export, made now if there is none; torch elsewhere), ``onnx`` or ``torch``
            (:mod:`workbench.encoding.exported.backend`; ``$WORKBENCH_BACKEND`` sets ``auto``'s
            choice for a process).

    Attributes:
        backend: which backend answers and why
            (:class:`~workbench.encoding.exported.backend.BackendChoice`).
        tokenizer: the model's fast tokenizer (transformers' on torch, a
            :class:`~workbench.encoding.tokenizer.WordTokenizer` on ONNX Runtime).
        model: the torch module (loaded on demand on ONNX Runtime: training needs it, answers
            never do).
        name, fingerprint: the model's label and a short hash identifying its weights.
        n_layers, dim, max_length, device, dtype, max_batch_tokens.
        dtype_choice: the compute dtype's name and why it was chosen
            (:class:`~workbench.encoding.device.DtypeChoice`).
        budget: how ``max_batch_tokens`` was chosen (:class:`BudgetChoice`).
        specials: the special tokens around each window.
        overlapped: whether :meth:`encode` runs its batches overlapped (``pipeline``).
        min_fill: the share of the budget a batch holds before a drop in length closes it.
    """

    tokenizer: PreTrainedTokenizerBase | WordTokenizer
    dtype: torch.dtype | str  # torch's dtype on the torch backend, its name on ONNX Runtime's

    def __init__(
        self,
        model: str | os.PathLike | None = None,
        device: str | None = None,
        dtype: DtypeName = "auto",
        pooling: Pooling = "mean",
        max_batch_tokens: int | None = None,
        max_length: int | None = None,
        stride: int | None = None,
        compile: bool = False,
        attention: Attention = "auto",
        pipeline: PipelineConfig | None = None,
        backend: Backend = "auto",
    ) -> None:
        self.source = models.resolve_model(model)
        self.device = choose_device(device)
        self.pooling = check_pooling(pooling)
        if max_batch_tokens is not None and max_batch_tokens < 1:
            raise InputError("max_batch_tokens must be positive.")
        if attention not in ATTENTIONS:
            choices = ", ".join(ATTENTIONS)
            raise InputError(f"Unknown attention '{attention}'; choose one of {choices}.")
        self.pipeline = pipeline or PipelineConfig()
        self.overlapped = self.pipeline.overlap_on(self.device)
        self.name = self.source.name
        self.stride = stride
        self._model: PreTrainedModel | None = None
        self.onnx: OnnxModel | None = None
        self.runner: ModelRunner | None = None
        forced = dtype if dtype != "auto" else os.environ.get(DTYPE_ENV, "").strip() or "auto"
        choice = choose_backend(
            backend, self.device, forced, self.source, compile, attention, self.overlapped
        )
        for note in choice.notes:
            warnings.warn(note, stacklevel=2)
        if choice.name == "onnx" and choice.make:
            choice = self._make_export(choice)
        self.backend = choice
        if choice.name == "onnx" and choice.folder is not None and choice.record is not None:
            self._open_export(choice.folder, choice.record, max_length)
        else:  # torch; the float32 model a refused export was made from, when it is the one
            self._load_torch(dtype, max_length, compile, attention, self._model)
        budget = self.max_length - self.specials.count
        if budget < 1:
            raise InputError(f"max_length {self.max_length} leaves no room for words.")
        self.window_tokens = budget
        self.budget = self._choose_budget(max_batch_tokens)
        self.max_batch_tokens = self.budget.tokens
        self.min_fill = self.pipeline.min_fill_on(self.device)

    def _load_torch(
        self,
        dtype: DtypeName,
        max_length: int | None,
        compile: bool,
        attention: str,
        float32: PreTrainedModel | None = None,
    ) -> None:
        """Load the model through transformers, for the torch backend; ``float32``: the model
        already loaded in float32 on this device (to make an export that was refused), kept
        where float32 is the dtype chosen instead of being loaded again."""
        shape = ProbeShape.of(models.load_config(self.source)) if dtype == "auto" else None
        self.dtype_choice = explain_dtype(dtype, self.device, shape)
        self.dtype = torch_dtype(self.dtype_choice.name)
        if float32 is None or self.dtype_choice.name != "float32":
            loaded = models.load_pretrained(self.source, self.dtype, self.device)
            self.tokenizer, self._model = loaded.tokenizer, loaded.model
            self.fingerprint = loaded.fingerprint
        assert self._model is not None
        config = self._model.config
        self.n_layers = int(config.num_hidden_layers)
        self.dim = int(config.hidden_size)
        self.max_length = self._input_limit(max_length)
        self.specials = self._special_template()
        if attention != "auto":
            self._set_attention(attention)
        self.runner = ModelRunner(self._model, self.device, compile)

    def _open_export(self, folder: Path, record: ExportRecord, max_length: int | None) -> None:
        """Open the model's export, for the ONNX Runtime backend (no torch, no transformers)."""
        self.onnx = OnnxModel(folder, record)
        self.tokenizer = self.onnx.tokenizer
        self.dtype_choice = DtypeChoice(
            record.dtype, f"ONNX Runtime runs the {record.dtype} export"
        )
        self.dtype = record.dtype
        self.fingerprint = record.fingerprint
        self.n_layers, self.dim = record.n_layers, record.dim
        self.max_length = self._checked_length(record.max_length, max_length)
        self.specials = SpecialTokens(record.head, record.tail, record.pad)

    def _make_export(self, choice: BackendChoice) -> BackendChoice:
        """Make the model's export now (its first use here): load it on torch in float32, export
        and check it; the torch backend's choice, with the reason, if the export is refused.
        An int8 export is made from the float32 one (:meth:`_make_int8_export`)."""
        if choice.dtype == "int8":
            return self._make_int8_export(choice)
        self._load_torch("float32", None, False, "auto")  # a model that cannot load says so
        if sys.stderr is not None and sys.stderr.isatty():  # a person waits: say why, once
            print(
                f"workbench: exporting model '{self.name}' to ONNX once for this machine "
                "(later runs start from the export)...",
                file=sys.stderr,
                flush=True,
            )
        model = self._model
        assert model is not None and choice.folder is not None and choice.fingerprint is not None
        facts = ModelFacts(
            fingerprint=choice.fingerprint,
            n_layers=self.n_layers,
            dim=self.dim,
            max_length=self.max_length,
            head=self.specials.head,
            tail=self.specials.tail,
            pad=self.specials.pad,
            unk=self.tokenizer.unk_token_id,
            model_max_length=int(min(self.tokenizer.model_max_length, 1_000_000_000)),
            architecture=type(model).__name__,
            parameters=sum(p.numel() for p in model.parameters()),
        )
        try:
            record = make_export(model, self.tokenizer, facts, choice.folder)
        except ExportRefused as exc:
            warnings.warn(f"model '{self.name}' stays on torch: its ONNX export was refused: "
                          f"{exc}", stacklevel=3)  # fmt: skip
            return BackendChoice("torch", f"torch: this model's ONNX export was refused: {exc}")
        self._model, self.runner = None, None  # the export answers from now on
        return BackendChoice(
            "onnx",
            f"ONNX Runtime on the CPU, from the export made now in {choice.folder}",
            choice.fingerprint,
            choice.folder,
            record,
        )

    def _make_int8_export(self, choice: BackendChoice) -> BackendChoice:
        """Make the model's int8 export from its float32 export (made first where there is
        none), checked on the probe (:mod:`workbench.encoding.exported.quantize`).

        Raises:
            InputError: the float32 or the int8 export was refused (int8 has no torch to fall
                back on).
        """
        exact = choose_backend("onnx", self.device, "float32", self.source)
        if exact.make:
            exact = self._make_export(exact)
        if exact.name != "onnx" or exact.folder is None or exact.record is None:
            raise InputError(f"dtype int8 cannot answer for '{self.name}': {exact.reason}.")
        assert choice.folder is not None
        try:
            record = make_int8_export(exact.folder, exact.record, choice.folder)
        except ExportRefused as exc:
            raise InputError(f"dtype int8 cannot answer for '{self.name}': its int8 export was "
                             f"refused: {exc}.") from exc  # fmt: skip
        return replace(
            choice,
            reason=f"ONNX Runtime on the CPU, from the int8 export made now in {choice.folder}",
            record=record,
        )

    @property
    def model(self) -> PreTrainedModel:
        """The torch model (transformers' ``AutoModel``): the loaded one on the torch backend;
        on the ONNX Runtime backend loaded now, once (training and tools that need the torch
        module itself; answers never do)."""
        if self._model is None:
            import torch

            self._model = models.load_pretrained(self.source, torch.float32, self.device).model
        return self._model

    def last_hidden(self, ids: np.ndarray, mask: np.ndarray) -> np.ndarray:
        """The last hidden state of a batch of whole sequences (a gloss encoder's use).

        Args:
            ids, mask: ``(batch, seq)`` int64 input ids (special tokens included) and mask.

        Returns:
            ``(batch, seq, dim)`` float32.
        """
        if self.onnx is not None:
            return self.onnx.hidden_states(ids, mask)[-1]
        import torch

        model = self.model
        with torch.inference_mode():
            out = model(
                input_ids=torch.from_numpy(ids).to(self.device),
                attention_mask=torch.from_numpy(mask).to(self.device),
            )
            return out.last_hidden_state.float().cpu().numpy()

    @property
    def backend_name(self) -> str:
        """``torch`` or ``onnx``: what runs the forward pass."""
        return self.backend.name

    # ------------------------------------------------------------------ set-up helpers
    def _input_limit(self, requested: int | None) -> int:
        """Longest input the model takes: tokenizer limit, position embeddings, padding offset."""
        model = self.model
        positions = getattr(model.config, "max_position_embeddings", None) or 512
        emb = getattr(model, "embeddings", None)
        offset = getattr(emb, "padding_idx", None)  # position ids start after padding_idx
        if isinstance(offset, int) and offset > 0 and positions > 2:
            positions -= offset + 1
        limit = min(positions, int(min(self.tokenizer.model_max_length, 1_000_000)))
        return self._checked_length(int(limit), requested)

    @staticmethod
    def _checked_length(limit: int, requested: int | None) -> int:
        """``requested`` (None: ``limit``), refused above the model's ``limit``."""
        if requested is not None:
            if requested > limit:
                raise InputError(f"max_length {requested} exceeds this model's limit of {limit}.")
            return int(requested)
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
        """The given budget, else :data:`CPU_BATCH_TOKENS` on a CPU or mps, else one measured on
        cuda with the eager model (:func:`measure_batch_tokens`)."""
        if requested is not None:
            return BudgetChoice(int(requested), (), "given")
        if not self.device.startswith("cuda"):
            return BudgetChoice(CPU_BATCH_TOKENS, (), "fixed")
        model = self.model

        def forward(ids: torch.Tensor, mask: torch.Tensor | None) -> object:
            return model(input_ids=ids, attention_mask=mask, output_hidden_states=True)

        vocab = int(getattr(model.config, "vocab_size", 0) or len(self.tokenizer))
        return measure_batch_tokens(forward, self.device, vocab)

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
        if self.onnx is not None:
            record = self.onnx.record
            architecture, n_params = record.architecture, record.parameters
        else:
            architecture = type(self.model).__name__
            n_params = sum(p.numel() for p in self.model.parameters())
        return {
            "model": self.name,
            "location": self.source.location,
            "architecture": architecture,
            "fingerprint": self.fingerprint,
            "layers": self.n_layers,
            "hidden_states": self.n_hidden,
            "dim": self.dim,
            "parameters": n_params,
            "max_length": self.max_length,
            "device": self.device,
            "dtype": self.dtype_name,
            "backend": self.backend.name,
            "pooling": self.pooling,
            "max_batch_tokens": self.max_batch_tokens,
        }

    # ------------------------------------------------------------------ tokenization, batches
    def preparer(self) -> Preparer:
        """A :class:`~workbench.encoding.prepare.Preparer` for one input: tokenizes it (each
        distinct word once) and plans its windows."""
        # a WordTokenizer answers the calls Preparer makes of a transformers tokenizer
        tokenizer = cast("PreTrainedTokenizerBase", self.tokenizer)
        return Preparer(tokenizer, self.window_tokens, self.stride)

    def batch_builder(
        self, prep: Prepared, rows: np.ndarray | None, pooling: Pooling
    ) -> BatchBuilder:
        """The :class:`~workbench.encoding.batching.BatchBuilder` of a tokenized input (or
        chunk): its batches under this encoder's budget.

        Args:
            prep: the tokenized input.
            rows: ``(n_words,)`` output row of each of its running words (``-1``: not kept), or
                None for batches that only give model inputs
                (:meth:`~workbench.encoding.batching.BatchBuilder.inputs`).
            pooling: subword pooling.
        """
        return BatchBuilder(
            prep, self.specials, rows, pooling, self.max_batch_tokens, min_fill=self.min_fill
        )

    def batch_stream(
        self,
        words: list[list[str]],
        rows: np.ndarray | None,
        pooling: Pooling,
        lap: Callable[..., None] | None = None,
    ) -> BatchStream:
        """The batches :meth:`encode` runs for validated word lists, with the builder of each:
        the whole input at once in the plain loop, chunk by chunk where the overlapped run
        streams it (:mod:`workbench.encoding.pipeline.stream`).

        Args:
            words: from :func:`workbench.encoding.alignment.normalize_input`.
            rows: ``(n_words,)`` output row of each running word (``-1``: not kept), or None.
            pooling: subword pooling.
            lap: records each chunk's tokenizing and planning (a profile).
        """

        def make_builder(prep: Prepared, first: int, last: int) -> BatchBuilder:
            return self.batch_builder(prep, None if rows is None else rows[first:last], pooling)

        first = self.pipeline.stream_on(self.device, self.max_batch_tokens)
        return BatchStream(words, self.preparer(), make_builder, first, lap)

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
        clock: StageClock | None = None,
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
            clock: told as each stage of the call ends, for a profile
                (:mod:`workbench.encoding.stage_clock`; ``bench/lib/stages.py`` times them).

        Raises:
            InputError: bad input (named), before any work starts.
            EncodingError: the device ran out of memory, a stage failed, or the model gave a
                non-finite number (nothing is written).

        Returns:
            :class:`LayerwiseEmbeddings` with ``vectors`` ``(n_kept_words, n_kept_layers, dim)``,
            rows in input order (sentence by sentence, word by word).
        """
        with gc_paused():
            return self._encode(sentences, layers, keep, progress, out, store_dtype, pooling, clock)

    def _encode(self, sentences, layers, keep, progress, out, store_dtype, pooling, clock):
        lap = no_clock if clock is None else clock
        lap()
        words = normalize_input(sentences)
        pooling = check_pooling(pooling or self.pooling)
        kept_layers = self.check_layers(layers)
        masks = keep_masks(words, keep)
        if store_dtype not in ("float32", "float16"):
            raise InputError(f"store_dtype must be float32 or float16, not '{store_dtype}'.")
        layout = RowLayout.build(words, masks)
        shape = (layout.n, len(kept_layers), self.dim)
        if out is None:
            vectors = allocate(shape, np.dtype(store_dtype), None)
            lap("input")
            notes, spans = self._run(words, layout, pooling, kept_layers, vectors, progress, clock)
            self._check_finite(vectors)
        else:
            with atomic_path(out, suffix=".npy") as tmp:  # at `out` only once complete
                stream = allocate(shape, np.dtype(store_dtype), tmp)
                lap("input")
                notes, spans = self._run(
                    words, layout, pooling, kept_layers, stream, progress, clock
                )
                self._check_finite(stream)  # before the file appears at `out`
                if isinstance(stream, np.memmap):
                    stream.flush()
                del stream
            vectors = np.load(out, mmap_mode="r")
        result = LayerwiseEmbeddings(
            vectors=vectors,
            layers=kept_layers,
            words=layout.words,
            sentence_index=layout.sentence,
            word_index=layout.position,
            spans=layout.spans(spans),
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

    def _check_finite(self, vectors: np.ndarray) -> None:
        """Refuse what the model gave when a number of it is NaN or infinite: a model whose
        weights are damaged yields such vectors, which nothing should store or compare."""
        bad = non_finite(vectors)
        if bad:
            where = "" if str(self.source.location) == self.name else f" ({self.source.location})"
            raise EncodingError(
                f"model '{self.name}'{where} yields non-finite vectors ({bad:,} "
                f"NaN or infinite numbers): its weights are damaged, or it overflows in "
                f"{self.dtype_name}; nothing is written"
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

    def _run(
        self,
        words: list[list[str]],
        layout: RowLayout,
        pooling: Pooling,
        layers: tuple[int, ...],
        vectors: np.ndarray,
        progress: Progress,
        clock: StageClock | None = None,
    ) -> tuple[list[str], np.ndarray]:
        """Run every batch and write the pooled rows of owned, kept words into ``vectors``:
        the plain loop, or overlapped where the pipeline option says so (torch only; never
        for a clock that wants the stages in turn). Returns what tokenizing noted and every
        running word's subword span ``(n_words, 2)``."""
        total = len(layout.rows)
        bar, callback = progress_reporter(progress, total)
        done = 0

        def on_batch(n_words: int) -> None:
            nonlocal done
            done += n_words
            if bar is not None:
                bar.update(n_words)
            if callback is not None:
                callback(done / max(total, 1))

        plain = (words, layout.rows, pooling, layers, vectors, on_batch, clock)
        try:
            if self.onnx is not None:
                return self._plain_loop(*plain)
            import torch

            self.model.eval()  # dropout off, even when a wrapper sharing the model switched it on
            if self.overlapped and (clock is None or not clock.in_turn):
                dest = torch.from_numpy(vectors)  # shares memory (also with a memory map)
                assert self.runner is not None
                threads = None if clock is None else clock.threads
                with torch.inference_mode():
                    stream = self.batch_stream(words, layout.rows, pooling, clock)
                    run_overlapped(stream, self.runner, layers, dest, self.device, self.pipeline,
                                   on_batch, threads)  # fmt: skip
                return stream.notes(), stream.word_spans()
            return self._plain_loop(*plain)
        finally:
            if bar is not None:
                bar.close()

    def _plain_loop(self, words, rows, pooling, layers, dest, on_batch, clock=None):
        """Tokenize the whole input, plan its batches, and run them one after another in this
        thread: each built, run and pooled by the backend (``pooled``: the torch
        :class:`~workbench.encoding.runner.ModelRunner` or ONNX Runtime's
        :class:`~workbench.encoding.exported.runtime.OnnxModel`), its rows written into
        ``dest`` ``(n_rows, len(layers), dim)``; ``clock`` told of each stage. Returns the
        input's notes and word spans."""
        runner = self.onnx if self.onnx is not None else self.runner
        assert runner is not None
        lap = no_clock if clock is None else clock
        prep = self.preparer()(words)  # subwords per word, windows of long sentences
        lap("tokenize")
        builder = self.batch_builder(prep, rows, pooling)
        plan = builder.batches()  # window indices per batch, longest first
        lap("layout")
        for windows in plan:
            stage, batch = "prep", None
            try:
                batch = builder.build(windows)  # padded ids and mask, pooling plan, output rows
                if clock is not None:
                    clock.count(batch)
                lap("prep")
                if batch.plan.n_words:
                    stage = "forward"
                    host = runner.pooled(batch, layers, dest.dtype, lap)
                    stage = "write"
                    dest[batch.rows] = host
                    lap("write")
            except Exception as exc:
                raise batch_error(exc, stage, batch) from exc
            on_batch(batch.n_owned)
        return prep.notes, prep.word_spans()


@contextmanager
def gc_paused() -> Iterator[None]:
    """Pause Python's cyclic garbage collector in the block (:meth:`Encoder.encode` runs in
    one), restoring it after.

    Encoding allocates many small lists; with a large corpus loaded (SemCor is millions of
    objects) each full collection they trigger walks all of it (docs/benchmarks.md has the
    cost). Nothing here makes reference cycles, so pausing loses nothing.

    Example::

        with gc_paused():
            emb = enc.encode(sentences)
    """
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()
