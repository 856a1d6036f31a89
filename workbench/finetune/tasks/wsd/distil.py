"""Soft targets from a teacher bi-encoder: knowledge distillation for the WSD task.

A WSD run given ``distil_from`` (a trained bi-encoder's directory, e.g. the 12-layer model)
trains its student on the teacher's candidate scores as well as on the gold senses. Before
training, :func:`teacher_scores` reads every training instance as the teacher answers it (the
answer path: :class:`~workbench.wsd.biencoder.BiEncoder` on its backend, the teacher's own
tokenizer, gloss text and test-time smoothing; contexts and glosses cached on disk as any answer
caches them) and keeps, per instance, the score of each candidate sense in WordNet's order, the
order the student scores them in.
:func:`~workbench.finetune.tasks.wsd.model.distillation_loss` is the term the student adds for
them (:class:`~workbench.finetune.tasks.wsd.model.BiEncoderModel`): the Kullback-Leibler
divergence from the teacher's distribution over the candidates to the student's, both at
temperature ``T``, times ``T**2`` (Hinton et al. 2015, "Distilling the Knowledge in a Neural
Network"), mixed with the gold cross-entropy as ``(1 - w) * gold + w * teacher``.

Example::

    scores = teacher_scores("runs/mpnet-top2-48k", train_data)   # {instance id: (n_cand,)}
    grid = teacher_grid([scores[i] for i in batch_ids], width)  # (n, max_candidates), 0-padded
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np

from workbench.encoding.rows import Progress
from workbench.errors import InputError
from workbench.finetune.data.readers import DataFile
from workbench.finetune.tasks.wsd.evaluation import corpus_of
from workbench.lexicon.wordnet import WordNet, load_wordnet
from workbench.wsd.biencoder import CONTEXT_LAYERS, BiEncoder, is_biencoder_dir
from workbench.wsd.levers import folder_levers
from workbench.wsd.predict import encode_instances


def check_teacher(teacher: str | Path) -> Path:
    """``teacher`` as a path, after checking it is a trained WSD bi-encoder's directory.

    Raises:
        InputError: it is not (naming it).
    """
    where = Path(teacher).expanduser()
    if not where.is_dir() or not is_biencoder_dir(where):
        raise InputError(
            f"distil_from: '{teacher}' is not a trained WSD bi-encoder's directory (one that "
            "`workbench finetune wsd` wrote, with head.json and gloss_encoder/)."
        )
    return where


def teacher_scores(
    teacher: str | Path,
    data: DataFile,
    wordnet: WordNet | None = None,
    progress: Progress = None,
    device: str | None = None,
) -> dict[str, np.ndarray]:
    """Each instance of ``data`` scored by the teacher bi-encoder in ``teacher``: ``{instance
    id: (n_candidates,) float32}``, one score per WordNet candidate of the instance's lemma and
    POS in WordNet's order (:meth:`~workbench.lexicon.wordnet.WordNet.candidates`): the dot
    product of the teacher's context vector of the word and the candidate's row in the index it
    answers with (its gloss vector, smoothed as its folder says), the logits it was trained to
    give (its answers rank the same rows against the unit context vector). The instance words
    are encoded as answers encode them, every hidden state kept and cached (``(n_layers + 1,
    dim)`` float32 per instance, in memory and on disk).

    Raises:
        InputError: ``teacher`` is not a trained WSD bi-encoder's directory.

    Example::

        scores = teacher_scores("runs/mpnet", DataFile(sentences, "semcor", ""))
        scores["d000.s000.t000"].shape   # (7,): the candidates of its (lemma, POS)
    """
    where = check_teacher(teacher)
    wordnet = wordnet or load_wordnet()
    bi = BiEncoder(where, device=device)
    corpus = corpus_of(data)
    found = encode_instances(bi.encoder, corpus, progress=progress)
    lemmas = sorted({(lemma.lower(), pos) for lemma, pos in zip(found.lemmas, found.pos)})
    index = bi.index(lemmas, wordnet, smoothing=folder_levers(where).smoothing or 0.0)
    vectors = found.vectors(CONTEXT_LAYERS)
    out: dict[str, np.ndarray] = {}
    for i, (iid, lemma, pos) in enumerate(zip(found.ids, found.lemmas, found.pos, strict=True)):
        order = wordnet.candidates(lemma.lower(), pos)
        if len(order) < 2:
            continue
        start, stop = index.candidate_rows(lemma.lower(), pos)
        row_of = {k: start + j for j, k in enumerate(index.keys_[start:stop])}
        rows = np.array([row_of[k] for k in order], dtype=np.int64)
        out[iid] = (index.vectors_[rows] @ vectors[i]).astype(np.float32)
    return out


def teacher_grid(rows: Sequence[Sequence[float]], width: int) -> np.ndarray:
    """The teacher's scores of a batch's instances as ``(n_instances, width)`` float32, padded
    with 0 past each instance's candidates (the student masks the same places)."""
    grid = np.zeros((len(rows), width), dtype=np.float32)
    for i, scores in enumerate(rows):
        grid[i, : len(scores)] = scores
    return grid


def check_teacher_scores(
    scores: Mapping[str, np.ndarray], ids: Sequence[str], n_candidates: Sequence[int], teacher: str
) -> None:
    """Refuse teacher scores that miss an instance or disagree with its candidate count.

    Raises:
        InputError: naming the first such instance.
    """
    for iid, n in zip(ids, n_candidates, strict=True):
        got = scores.get(iid)
        if got is None or len(got) != n or not np.isfinite(got).all():
            what = "none" if got is None else f"{len(got)}, some not finite or not one each"
            raise InputError(
                f"distil_from: the teacher '{teacher}' must give instance {iid} one finite "
                f"score for each of its {n} candidate senses; it gave {what}."
            )
