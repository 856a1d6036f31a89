"""Where an ``Encoder.encode`` call's time goes: its stages timed through the encoder's own
profile seam (``Encoder.encode(..., clock=...)``, :mod:`workbench.encoding.stage_clock`), for
``bench/speed/extract.py --profile``.

:func:`encode_in_stages` is ``enc.encode(..., progress=False)`` with a :class:`Laps` clock: the
encoder reports the end of each stage (checking the input and laying out its rows, ``input``;
``tokenize``; ``layout``: windows and batches; then each batch's ``prep``, ``h2d``,
``forward``, ``pooling``, ``d2h`` and ``write``; ``finish``), and the clock adds the seconds
since the last report to that stage. Two kinds of profile:

* ``StageTimes()``: the stages in turn. The encoder runs its plain loop whatever its pipeline
  setting, and the clock waits for the device at each report, so that each stage is timed
  alone: where the time goes, not how fast the overlapped run is.
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
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field

import numpy as np
import torch

from workbench.encoding.alignment import Sentences, normalize_input
from workbench.encoding.batching import Batch
from workbench.encoding.embeddings import LayerwiseEmbeddings
from workbench.encoding.encoder import Encoder
from workbench.encoding.pooling import Pooling
from workbench.encoding.stage_clock import STAGES

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
    clock = Laps(profile, enc.device)
    return enc.encode(sentences, layers, keep, False, None, store_dtype, pooling, clock=clock)


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
