"""BIO helpers: seqeval's entity rules on hand-made cases, subword alignment, decoding, masking."""

from __future__ import annotations

import pytest
import torch

from workbench.encoding.models import default_model_path
from workbench.finetune.data.bio import (
    IGNORE_INDEX,
    align_labels,
    entities,
    entity_scores,
    orphan_inside,
    repair_bio,
)
from workbench.finetune.tasks.masking import MaskingSpec, mask_tokens
from workbench.finetune.tasks.token import chunk_words

HAND_MADE = [
    # (gold, pred) pairs covering: exact match, wrong type, wrong boundary, I- without B-,
    # adjacent B-B, type switch inside I-, empty sentences of O only
    (["B-PER", "I-PER", "O", "B-LOC"], ["B-PER", "I-PER", "O", "B-LOC"]),
    (["B-PER", "I-PER", "O", "B-LOC"], ["B-PER", "O", "O", "B-ORG"]),
    (["I-PER", "I-PER", "O", "B-LOC", "I-LOC"], ["B-PER", "I-PER", "O", "I-LOC", "I-LOC"]),
    (["B-X", "B-X", "I-X", "O"], ["B-X", "I-X", "I-X", "O"]),
    (["B-A", "I-B", "I-B", "O", "O"], ["B-A", "B-B", "I-B", "O", "I-A"]),
    (["O", "O", "O"], ["O", "B-A", "O"]),
    (["B-A", "I-A", "I-A"], ["I-A", "I-A", "B-A"]),
]


def test_entities_on_hand_made_cases():
    # I- without B- starts an entity; a type switch inside I- starts a new one
    assert entities(["O", "I-PER", "I-PER"]) == [("PER", 1, 2)]
    assert entities(["B-A", "I-B", "I-B"]) == [("A", 0, 0), ("B", 1, 2)]
    assert entities(["B-X", "B-X", "I-X", "O"]) == [("X", 0, 0), ("X", 1, 2)]
    assert entities(["I-A", "I-A", "B-A"]) == [("A", 0, 1), ("A", 2, 2)]
    assert entities(["B-A", "I-B", "I-B", "O", "O"]) == [("A", 0, 0), ("B", 1, 2)]
    assert entities(["O", "O"]) == []
    # hand count, first two sentences: 4 gold, 4 predicted; sentence 2 has a cut PER span
    # and a wrong type, so only sentence 1's two entities are right
    two = entity_scores([g for g, _ in HAND_MADE[:2]], [p for _, p in HAND_MADE[:2]])
    assert (two.n_gold, two.n_pred, two.n_correct) == (4, 4, 2)
    assert two.f1 == pytest.approx(0.5)
    # an I- without B- in the prediction still matches a gold B- I- span of the same extent
    three = entity_scores([["B-PER", "I-PER", "O"]], [["I-PER", "I-PER", "O"]])
    assert three.f1 == pytest.approx(1.0)


def test_entities_and_scores_match_seqeval():
    sequence_labeling = pytest.importorskip("seqeval.metrics.sequence_labeling")
    from seqeval.metrics import f1_score, precision_score, recall_score

    for gold, pred in HAND_MADE:
        for seq in (gold, pred):
            assert entities(seq) == sequence_labeling.get_entities(seq), seq
    gold = [g for g, _ in HAND_MADE]
    pred = [p for _, p in HAND_MADE]
    ours = entity_scores(gold, pred)
    assert ours.f1 == pytest.approx(f1_score(gold, pred))
    assert ours.precision == pytest.approx(precision_score(gold, pred))
    assert ours.recall == pytest.approx(recall_score(gold, pred))


def test_entity_scores_edge_cases():
    empty = entity_scores([["O", "O"]], [["O", "O"]])
    assert (empty.precision, empty.recall, empty.f1) == (0.0, 0.0, 0.0)
    with pytest.raises(ValueError, match="sentence 0"):
        entity_scores([["O", "O"]], [["O"]])


def test_orphan_inside_and_repair():
    tags = ["O", "I-PER", "B-LOC", "I-ORG", "I-ORG", "B-X", "I-X"]
    assert orphan_inside(tags) == [1, 3]
    fixed = repair_bio(tags)
    assert fixed == ["O", "B-PER", "B-LOC", "B-ORG", "I-ORG", "B-X", "I-X"]
    assert orphan_inside(fixed) == []
    assert entities(fixed) == entities(tags)  # the repair is the reading seqeval gives anyway


@pytest.fixture(scope="module")
def tokenizer():
    from transformers import AutoTokenizer

    return AutoTokenizer.from_pretrained(default_model_path())


def test_alignment_on_split_words(tokenizer):
    words = ["Tokenization", "is", "unbelievably", "straightforward", "."]
    enc = tokenizer([words], is_split_into_words=True)
    wids = enc.word_ids(0)
    pieces = [sum(1 for w in wids if w == i) for i in range(len(words))]
    assert pieces[0] > 1 and pieces[2] > 1  # the test needs words of several subwords
    labels = [3, 0, 1, 2, 0]
    first = align_labels(wids, labels, "first")
    every = align_labels(wids, labels, "all")
    starts = [wids.index(w) for w in range(len(words))]  # each word's first subword
    for i, wid in enumerate(wids):
        if wid is None:
            assert first[i] == every[i] == IGNORE_INDEX
        else:
            assert every[i] == labels[wid]
            assert first[i] == (labels[wid] if i == starts[wid] else IGNORE_INDEX)
    assert sum(v != IGNORE_INDEX for v in first) == len(words)


def test_chunk_words_fits_budget():
    assert chunk_words([2, 2, 3, 1], 4) == [(0, 2), (2, 4)]
    assert chunk_words([9, 1], 4) == [(0, 1), (1, 2)]  # an over-long word stands alone
    lengths = [1, 3, 2, 2, 1, 4, 1]
    chunks = chunk_words(lengths, 5)
    assert chunks[0][0] == 0 and chunks[-1][1] == len(lengths)
    assert all(sum(lengths[a:b]) <= 5 for a, b in chunks)


def _spec(whole_word: bool) -> MaskingSpec:
    return MaskingSpec(
        mask_token_id=103,
        vocab_size=1000,
        special_ids=(0, 101, 102, 103),
        probability=0.15,
        whole_word=whole_word,
    )


def test_masking_proportions_on_a_large_sample():
    gen = torch.Generator().manual_seed(0)
    ids = torch.randint(1000, 2000, (400, 128)) % 900 + 104  # no special ids
    word_ids = torch.arange(128).repeat(400, 1)
    word_ids[:, 0] = -1  # a special token that must never be chosen
    word_ids[:, -1] = -1
    out, labels = mask_tokens(ids, word_ids, _spec(False), gen)
    chosen = labels != IGNORE_INDEX
    n = int(chosen.sum())
    assert n / (400 * 126) == pytest.approx(0.15, abs=0.005)
    assert not chosen[:, 0].any() and not chosen[:, -1].any()
    assert torch.equal(labels[chosen], ids[chosen])
    masked = (out == 103) & chosen
    unchanged = (out == ids) & chosen
    replaced = chosen & ~masked & ~unchanged
    assert masked.sum() / n == pytest.approx(0.8, abs=0.01)
    assert replaced.sum() / n == pytest.approx(0.1, abs=0.01)
    assert unchanged.sum() / n == pytest.approx(0.1, abs=0.01)
    assert not torch.isin(out[replaced], torch.tensor([0, 101, 102, 103])).any()
    assert torch.equal(out[~chosen], ids[~chosen])


def test_whole_word_masking_takes_all_subwords_of_a_word():
    gen = torch.Generator().manual_seed(1)
    word_ids = torch.arange(300).repeat_interleave(3).repeat(50, 1)  # 3 subwords per word
    ids = torch.full(word_ids.shape, 500)
    _, labels = mask_tokens(ids, word_ids, _spec(True), gen)
    chosen = (labels != IGNORE_INDEX).view(50, 300, 3)
    assert torch.equal(chosen.all(-1), chosen.any(-1))  # a word is chosen whole or not at all
    assert chosen.float().mean().item() == pytest.approx(0.15, abs=0.01)
    again, _ = mask_tokens(ids, word_ids, _spec(True), torch.Generator().manual_seed(1))
    first, _ = mask_tokens(ids, word_ids, _spec(True), torch.Generator().manual_seed(1))
    assert torch.equal(again, first)  # same seed, same masks
