"""Where an ``Encoder.encode`` call's time goes: the call's own stages, run here from the
library's public pieces and timed one by one (``bench/speed/extract.py --profile``).

:func:`encode_in_stages` does what :meth:`workbench.Encoder.encode` does (without ``out=`` and
the progress bar), step for step: the input checked and its output rows laid out
(``input``), tokenized (``tokenize``), cut into windows and batches (``layout``), then each
batch built (``prep``), moved to the device (``h2d``), run (``forward``), pooled (``pooling``),
copied back (``d2h``) and written (``write``), and the result made (``finish``); its vectors
are the encoder's, bit for bit (``tests/encoding/test_pipeline.py``). Two kinds of profile:

* ``StageTimes()``: the stages in turn. The plain loop runs whatever the encoder's pipeline
  setting, waiting for the device after each stage, so that each stage is timed alone: where
  the time goes, not how fast the overlapped run is.
* ``StageTimes(overlapped=True)``: the call as the encoder runs it (overlapped where its
  pipeline setting says so), and ``threads`` gets what each of its threads did and waited for.

:func:`model_inputs` gives the padded batches the encoder runs, for timing the bare forward
pass on them.

Example::

    times = StageTimes()
    emb = encode_in_stages(enc, sentences, times)
    times.shares()["forward"]          # the forward pass's share of the call
"""

from __future__ import annotations

import time
import warnings
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field

import numpy as np
import torch

from workbench.encoding.alignment import Sentences, normalize_input
from workbench.encoding.batching import Batch
from workbench.encoding.embeddings import LayerwiseEmbeddings
from workbench.encoding.encoder import Encoder, gc_paused
from workbench.encoding.pipeline.overlap import run_overlapped
from workbench.encoding.pooling import Pooling, check_pooling, pool_words
from workbench.encoding.rows import RowLayout, allocate, keep_masks
from workbench.errors import EncodingError, InputError
from workbench.limits import non_finite

#: ``input`` (checking it, the output rows and array), ``tokenize`` and ``layout`` (the input's
#: tokens, windows and batches), each batch's ``prep`` .. ``write``, and ``finish`` (the result).
STAGES: tuple[str, ...] = (
    "input", "tokenize", "layout", "prep", "h2d", "forward", "pooling", "d2h", "write", "finish",
)  # fmt: skip
BATCH_STAGES = frozenset(STAGES[3:9])  # the stages of each batch, prep .. write


@dataclass
class StageTimes:
    """Where an encoding call's time goes, for :func:`encode_in_stages`.

    By default the call runs the plain loop, waiting for the device after each stage, and adds
    each stage's seconds (:data:`STAGES`) to ``seconds``. With ``overlapped=True`` the call runs
    as the encoder runs it and ``threads`` gets what each of its threads did and waited for.

    Attributes:
        seconds: stage -> seconds, summed over the batches (``overlapped``: only the stages
            timed outside the batches: input, tokenize and layout (on the producer thread
            when overlapped), finish).
        batches, tokens: batches run and subwords they held (specials, padding excluded; not
            ``overlapped``).
        overlapped: profile the call's own run instead of its stages in turn.
        threads: ``overlapped``: ``"thread: activity"`` -> seconds: the calling thread's
            ``main: wait for a batch`` (in the plain loop: building it), ``main: launch``
            (inputs to the device, the forward pass, pooling and the copy back queued),
            ``main: wait for the writer``, ``main: finish``, or in the plain loop ``main: run
            and write``; the producer's and the writer's
            (:class:`~workbench.encoding.pipeline.threads.Prefetcher`,
            :class:`~workbench.encoding.pipeline.threads.RowWriter`).
    """

    seconds: dict[str, float] = field(default_factory=lambda: dict.fromkeys(STAGES, 0.0))
    batches: int = 0
    tokens: int = 0
    overlapped: bool = False
    threads: dict[str, float] = field(default_factory=dict)

    def shares(self) -> dict[str, float]:
        """Each stage's fraction of the total."""
        total = sum(self.seconds.values()) or 1.0
        return {k: v / total for k, v in self.seconds.items()}


class Laps:
    """A call's profile clock: ``lap(stage)`` adds the seconds since the last lap to
    ``profile``'s ``stage``, ``lap()`` only restarts the clock.

    Profiling the stages in turn (``in_turn``), each lap first waits for the device, so that a
    stage's time is its own. In an overlapped profile the plain loop's batch stages are the
    calling thread's: ``prep`` is ``main: wait for a batch``, the others ``main: run and
    write`` (in ``threads``).
    """

    def __init__(self, profile: StageTimes, device: str) -> None:
        self.profile = profile
        self.in_turn = not profile.overlapped
        self.threads = profile.threads if profile.overlapped else None
        self.sync = self.in_turn and device.startswith("cuda")
        self.device = device
        self.last = time.perf_counter()

    def __call__(self, stage: str | None = None) -> None:
        if self.sync:
            torch.cuda.synchronize(self.device)
        now = time.perf_counter()
        if stage is not None:
            if self.threads is not None and stage in BATCH_STAGES:
                key = "main: wait for a batch" if stage == "prep" else "main: run and write"
                self.threads[key] = self.threads.get(key, 0.0) + now - self.last
            else:
                self.profile.seconds[stage] += now - self.last
        self.last = now

    def count(self, batch: Batch) -> None:
        """Count a batch run in turn and its subwords."""
        if self.in_turn:
            self.profile.batches += 1
            self.profile.tokens += batch.n_tokens


def encode_in_stages(
    enc: Encoder,
    sentences: Sentences,
    profile: StageTimes,
    layers: Sequence[int] | None = None,
    keep: Sequence[Sequence[int]] | None = None,
    store_dtype: str = "float32",
    pooling: Pooling | None = None,
) -> LayerwiseEmbeddings:
    """``enc.encode(sentences, ..., progress=False)`` with each stage's seconds added to
    ``profile`` (see the module's notes); the arguments are :meth:`Encoder.encode`'s.

    Returns:
        what ``enc.encode`` returns: vectors ``(n_kept_words, n_kept_layers, dim)``.
    """
    with gc_paused():
        lap = Laps(profile, enc.device)
        words = normalize_input(sentences)
        pooling = check_pooling(pooling or enc.pooling)
        kept_layers = enc.check_layers(layers)
        masks = keep_masks(words, keep)
        if store_dtype not in ("float32", "float16"):
            raise InputError(f"store_dtype must be float32 or float16, not '{store_dtype}'.")
        layout = RowLayout.build(words, masks)
        vectors = allocate((layout.n, len(kept_layers), enc.dim), np.dtype(store_dtype), None)
        lap("input")
        notes, spans = _run(enc, words, layout, pooling, kept_layers, vectors, lap)
        lap()
        bad = non_finite(vectors)
        if bad:
            raise EncodingError(f"model '{enc.name}' yields {bad:,} non-finite numbers")
        result = LayerwiseEmbeddings(
            vectors=vectors,
            layers=kept_layers,
            words=layout.words,
            sentence_index=layout.sentence,
            word_index=layout.position,
            spans=layout.spans(spans),
            n_sentences=len(words),
            n_hidden=enc.n_hidden,
            model_name=enc.name,
            fingerprint=enc.fingerprint,
            pooling=pooling,
            notes=notes,
            compute_dtype=enc.dtype_name,
        )
        for note in notes:
            warnings.warn(note, stacklevel=2)
        lap("finish")
    return result


def _run(
    enc: Encoder,
    words: list[list[str]],
    layout: RowLayout,
    pooling: Pooling,
    layers: tuple[int, ...],
    vectors: np.ndarray,
    lap: Laps,
) -> tuple[list[str], np.ndarray]:
    """Every batch, its rows written into ``vectors``: overlapped as the encoder would run it
    when the profile is ``overlapped``, else the plain loop in turn. Returns the input's notes
    and every running word's subword span ``(n_words, 2)``."""
    dest = torch.from_numpy(vectors)
    enc.model.eval()
    with torch.inference_mode():
        if enc.overlapped and not lap.in_turn:
            stream = enc.batch_stream(words, layout.rows, pooling, lap)
            run_overlapped(stream, enc.runner, layers, dest, enc.device, enc.pipeline,
                           lambda n: None, lap.threads)  # fmt: skip
            return stream.notes(), stream.word_spans()
        prep = enc.preparer()(words)
        lap("tokenize")
        builder = enc.batch_builder(prep, layout.rows, pooling)
        plan = builder.batches()
        lap("layout")
        for windows in plan:
            batch = builder.build(windows)
            lap.count(batch)
            lap("prep")
            if batch.plan.n_words:
                on_device = batch.to_device(enc.device)
                lap("h2d")
                out = enc.runner(on_device.ids, on_device.mask)
                lap("forward")
                hidden = [out.hidden_states[k] for k in layers]
                pooled = pool_words(on_device.index, hidden, dest.dtype)
                del out, hidden
                lap("pooling")
                host = pooled.to("cpu")
                lap("d2h")
                dest.index_copy_(0, torch.from_numpy(batch.rows), host)
                lap("write")
        return prep.notes, prep.word_spans()


def model_inputs(enc: Encoder, sentences: Sentences) -> Iterator[tuple[np.ndarray, np.ndarray]]:
    """The padded ``(ids, mask)`` int64 arrays, ``(batch, width)`` each, of every batch
    ``enc.encode(sentences)`` runs, in the order it runs them (its
    :meth:`~workbench.Encoder.batch_stream`).

    Example::

        for ids, mask in model_inputs(enc, sentences):
            enc.model(input_ids=torch.from_numpy(ids), attention_mask=torch.from_numpy(mask))
    """
    for builder, windows in enc.batch_stream(normalize_input(sentences), None, enc.pooling):
        ids, mask, _, _ = builder.inputs(windows)
        yield ids, mask
