"""Masked-LM input corruption (BERT's recipe): choose 15% of the tokens; of those, 80% become
[MASK], 10% a random token, 10% stay unchanged; the loss is computed on the chosen ones only.

With ``whole_word=True`` the choice is made per *word* (each word is chosen with probability
``probability``) and every subword of a chosen word is chosen; the 80/10/10 split is then drawn
per chosen token, as in HuggingFace's ``DataCollatorForWholeWordMask``. Special tokens and
padding are never chosen. Random replacement tokens are drawn uniformly from the vocabulary
minus the special tokens.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from workbench.finetune.data.bio import IGNORE_INDEX


@dataclass(frozen=True)
class MaskingSpec:
    """What the masking needs to know about the tokenizer.

    Attributes:
        mask_token_id: id of ``[MASK]``.
        vocab_size: number of token ids.
        special_ids: ids never used as random replacements.
        probability: fraction of tokens (or words) chosen.
        whole_word: choose whole words.
    """

    mask_token_id: int
    vocab_size: int
    special_ids: tuple[int, ...]
    probability: float = 0.15
    whole_word: bool = False


def _choose(word_ids: torch.Tensor, spec: MaskingSpec, gen: torch.Generator) -> torch.Tensor:
    """Boolean (batch, seq): which tokens are chosen. ``word_ids`` is -1 at special/pad."""
    maskable = word_ids >= 0
    if not spec.whole_word:
        draw = torch.rand(word_ids.shape, generator=gen) < spec.probability
        return draw & maskable
    # one draw per (row, word): index a per-row table of word draws by the word id
    n_words = int(word_ids.max().item()) + 1 if maskable.any() else 1
    word_draw = torch.rand((word_ids.shape[0], n_words), generator=gen) < spec.probability
    picked = torch.gather(word_draw, 1, word_ids.clamp(min=0))
    return picked & maskable


def mask_tokens(
    input_ids: torch.Tensor, word_ids: torch.Tensor, spec: MaskingSpec, gen: torch.Generator
) -> tuple[torch.Tensor, torch.Tensor]:
    """Corrupt a batch for masked-LM training.

    Args:
        input_ids: (batch, seq) int64 token ids.
        word_ids: (batch, seq) int64 word index of each token within its row, -1 for special
            tokens and padding (those are never chosen).
        spec: the masking options.
        gen: a seeded CPU ``torch.Generator`` (the same seed gives the same masks).

    Returns:
        ``(corrupted_ids, labels)``, both (batch, seq) int64: ``labels`` holds the original id at
        the chosen positions and -100 elsewhere.
    """
    chosen = _choose(word_ids, spec, gen)
    labels = torch.where(chosen, input_ids, torch.full_like(input_ids, IGNORE_INDEX))
    roll = torch.rand(input_ids.shape, generator=gen)
    to_mask = chosen & (roll < 0.8)
    to_random = chosen & (roll >= 0.8) & (roll < 0.9)
    out = input_ids.clone()
    out[to_mask] = spec.mask_token_id
    allowed = torch.ones(spec.vocab_size, dtype=torch.bool)
    allowed[list(spec.special_ids)] = False
    pool = allowed.nonzero().squeeze(1)
    picks = torch.randint(len(pool), (int(to_random.sum()),), generator=gen)
    out[to_random] = pool[picks]
    return out, labels
