"""Output row layout of the encoder (workbench.encoding.rows)."""

from __future__ import annotations

import numpy as np
import pytest

from workbench.encoding.rows import RowLayout, allocate, keep_masks, progress_part
from workbench.errors import InputError

WORDS = [["a", "b", "c"], ["d"], ["e", "f"]]


def test_all_words_kept_in_input_order():
    assert keep_masks(WORDS, None) is None
    layout = RowLayout.build(WORDS, None)
    assert layout.n == 6
    assert layout.words == ["a", "b", "c", "d", "e", "f"]
    assert layout.sentence.tolist() == [0, 0, 0, 1, 2, 2]
    assert layout.position.tolist() == [0, 1, 2, 0, 0, 1]
    assert [r.tolist() for r in layout.row_of] == [[0, 1, 2], [3], [4, 5]]
    assert layout.rows.tolist() == [0, 1, 2, 3, 4, 5]
    assert layout.sentence_words.tolist() == [0, 3, 4, 6]
    every = RowLayout.build(WORDS, keep_masks(WORDS, [[0, 1, 2], [0], [0, 1]]))
    for name in ("rows", "sentence_words", "sentence", "position"):
        np.testing.assert_array_equal(getattr(every, name), getattr(layout, name))
    assert every.words == layout.words


def test_kept_subset_and_spans_from_word_spans():
    layout = RowLayout.build(WORDS, keep_masks(WORDS, [[2, 0], [], [1]]))
    assert layout.n == 3
    assert layout.words == ["a", "c", "f"]
    assert layout.sentence.tolist() == [0, 0, 2] and layout.position.tolist() == [0, 2, 1]
    assert [r.tolist() for r in layout.row_of] == [[0, -1, 1], [-1], [-1, 2]]
    assert layout.rows.tolist() == [0, -1, 1, -1, -1, 2]
    word_spans = np.array([[0, 2], [2, 3], [3, 6], [0, 1], [0, 1], [1, 4]])
    assert layout.spans(word_spans).tolist() == [[0, 2], [3, 6], [1, 4]]


def test_keep_errors_name_the_problem():
    with pytest.raises(InputError, match="keep has 1 entries for 3 sentences"):
        keep_masks(WORDS, [[0]])
    with pytest.raises(InputError, match="position 3 is outside sentence 0"):
        keep_masks(WORDS, [[3], [], []])


def test_allocate_in_memory_or_memory_mapped(tmp_path):
    assert allocate((2, 3, 4), np.dtype("float16"), None).dtype == np.float16
    mm = allocate((2, 3, 4), np.dtype("float32"), tmp_path / "sub" / "v.npy")
    mm[:] = 1.5
    mm.flush()
    assert np.load(tmp_path / "sub" / "v.npy").sum() == 2 * 3 * 4 * 1.5


def test_progress_part_maps_a_step_onto_its_share_of_the_whole():
    seen: list[float] = []
    first, second = progress_part(seen.append, 0.0, 0.25), progress_part(seen.append, 0.25, 1.0)
    for step in (first, second):
        for f in (0.0, 0.5, 1.0):
            step(f)  # type: ignore[operator]
    assert seen == [0.0, 0.125, 0.25, 0.25, 0.625, 1.0]
    assert progress_part(True, 0.0, 0.5) is True and progress_part(None, 0.5, 1.0) is None
