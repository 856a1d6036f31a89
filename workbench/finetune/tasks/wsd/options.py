"""The WSD bi-encoder task's own options (``workbench finetune wsd``'s flags are made from
these fields; the loop's common options are
:class:`~workbench.finetune.training.config.TrainConfig`).

Example::

    cfg = TrainConfig(epochs=1, task=WsdOptions(head_pooling="mean", top_layers=2))
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from workbench.bounds import NON_NEGATIVE, NON_NEGATIVE_INT, POSITIVE, PROBABILITY, Bound
from workbench.errors import InputError
from workbench.finetune.training.config import HeadPooling, TaskOptions, option
from workbench.lexicon.glosses import GLOSS_TEXTS, GlossText

#: The glosses a WSD run encodes into the gloss cache after training: all of WordNet's, or
#: those of the test data's candidates.
WsdIndexScope = Literal["wordnet", "data"]


@dataclass(frozen=True)
class WsdOptions(TaskOptions):
    """The bi-encoder's options: how glosses are read and pooled, what trains, what is cached
    after training, how training instances are weighed."""

    head_pooling: HeadPooling = option(
        "cls",
        "the gloss vector is the gloss encoder's [CLS] or the mean of its last layer",
        choices=("cls", "mean"),
    )
    gloss_text: GlossText = option(
        "definition",
        "what the gloss encoder reads: the definition, after the synset's "
        "lemmas, and with its usage examples or its hypernyms; esr: lemmas, definition, first "
        "example, first hypernym's definition and a verb's frames (with --gloss-max-length 64)",
        choices=GLOSS_TEXTS,
    )
    gloss_max_length: int = option(
        48,
        "subword tokens per gloss, incl. special tokens (longer glosses are cut)",
        Bound(low=4, integer=True),
        positions=True,
    )
    gloss_mix: float = option(
        0.0,
        "the share of a training step's candidate glosses read as --gloss-mix-text instead "
        "(each drawn anew at each step, so the gloss tower learns both texts; answers and the "
        "dev and test scores read --gloss-text; 0: off)",
        PROBABILITY,
    )
    gloss_mix_text: GlossText = option(
        "definition",
        "with --gloss-mix: the other text a gloss may be read as",
        choices=GLOSS_TEXTS,
    )
    negatives: int = option(
        0,
        "compare a training instance's gold senses with at most N of its other candidates, "
        "drawn anew at each step, instead of all of them: a step encodes fewer glosses (the "
        "bulk of its tokens), so it runs faster; dev and test scores, answers and a step with "
        "the gloss tower frozen compare all candidates (0: all)",
        NON_NEGATIVE_INT,
    )
    freeze_glosses: bool = option(
        False,
        "keep the gloss encoder at the base weights and train the context encoder only; "
        "each gloss is encoded once per run, so a step costs the context pass alone (several "
        "times faster; docs/results.md compares the two)",
    )
    gloss_batch_tokens: int = option(
        0,
        "padded tokens per gloss-encoder pass; 0 (auto): 1024 on a CPU, 16384 on a GPU (a "
        "step's gloss union in one or two passes instead of a dozen)",
        NON_NEGATIVE_INT,
    )
    wsd_index: WsdIndexScope = option(
        "data",
        "after training, encode every WordNet gloss into the gloss cache (wordnet), or "
        "only the test data's candidates (data: quick runs); answers encode the glosses they "
        "need either way",
        choices=("wordnet", "data"),
    )
    top_layers: int = option(
        0,
        "train only the top N layers of both encoders; the embeddings and the layers below "
        "stay frozen, their outputs computed once per text and cached on disk (float16, keyed "
        "by the frozen weights and the tokens), so a step runs N layers (0: all)",
        NON_NEGATIVE_INT,
    )
    lemma_reweight: float = option(
        0.0,
        "Z-reweighting (Su et al. 2022) with this GAMMA (their code uses 1 or 2; 0: off): "
        "the (lemma, POS) pairs ranked by training instances in groups of 300, each group's "
        "mean polysemy smoothed by a log fit; an instance weighs its group's share of the "
        "largest to the power GAMMA (0.1 to 1: frequent, polysemous lemmas most; "
        "tasks/wsd/task.py z_weights)",
        NON_NEGATIVE,
    )
    distil_from: str = option(
        "",
        "a trained WSD bi-encoder's directory (e.g. a 12-layer model's) whose candidate scores "
        "are soft targets too: each training instance is scored by it before training, as it "
        "answers, and the loss mixes the gold cross-entropy with the divergence from its "
        "scores (knowledge distillation; tasks/wsd/distil.py)",
    )
    distil_weight: float = option(
        0.5,
        "with --distil-from: the teacher's share W of the loss, (1 - W) * gold + W * teacher",
        Bound(low=0, high=1),
    )
    distil_temperature: float = option(
        1.0,
        "with --distil-from: the temperature T both score distributions are softened by "
        "(the teacher term is scaled by T squared)",
        POSITIVE,
    )

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.gloss_mix and self.freeze_glosses:
            raise InputError(
                "Bad training option: gloss_mix reads glosses as another text while the gloss "
                "tower trains, but freeze_glosses keeps it fixed (each gloss encoded once): "
                "use one or the other."
            )
        if self.gloss_mix and self.gloss_mix_text == self.gloss_text:
            raise InputError(
                f"Bad training option: gloss_mix_text is gloss_text ({self.gloss_text!r}): "
                "give another text to mix in."
            )
