from __future__ import annotations

import numpy as np
import pytest

from workbench.encoding.alignment import (
    assign_owners,
    normalize_input,
    plan_windows,
    run_starts,
    split_words,
    word_token_lists,
)
from workbench.errors import InputError


def test_split_words_rule():
    assert split_words("Don't panic: it's state-of-the-art!") == [
        "Don't",
        "panic",
        ":",
        "it's",
        "state-of-the-art",
        "!",
    ]
    assert split_words("Ça va? 🙂 Привет мир") == ["Ça", "va", "?", "🙂", "Привет", "мир"]


@pytest.mark.parametrize(
    ("bad", "needle"),
    [
        ([], "empty"),
        ("a string", "single string"),
        (["ok", "   "], "Sentence 1"),
        ([["a", ""]], "Word 1 of sentence 0"),
        ([["a", 3]], "Word 1 of sentence 0 is int 3"),
        ([["a"], []], "Sentence 1 is an empty word list"),
        ([None], "Sentence 0 is NoneType"),
        (["..."], None),  # punctuation only is fine: three words
    ],
)
def test_normalize_input_errors_name_the_item(bad, needle):
    if needle is None:
        assert normalize_input(bad) == [[".", ".", "."]]
        return
    with pytest.raises(InputError, match=needle):
        normalize_input(bad)


def test_any_ordered_iterable_of_strings_or_word_lists_is_taken():

    expected = [["a", "b"], ["c"]]
    for given in [
        ["a b", "c"],
        ("a b", "c"),
        (s for s in ["a b", "c"]),
        np.array(["a b", "c"]),
        np.array(["a b", "c"], dtype=object),
        [np.array(["a", "b"]), ("c",)],
        iter([["a", "b"], ["c"]]),
        map(str.upper, ["a b", "c"]),
    ]:
        got = normalize_input(given)
        assert [[w.lower() for w in s] for s in got] == expected
        assert all(type(w) is str for s in got for w in s)
    assert normalize_input(np.array([["a", "b"], ["c", "d"]])) == [["a", "b"], ["c", "d"]]


def test_word_lists_are_copied_and_string_subclasses_made_plain():
    class Word(str):
        pass

    given = [["a", Word("b")], ["c"]]
    got = normalize_input(given)
    assert got == [["a", "b"], ["c"]] and [type(w) for w in got[0]] == [str, str]
    assert got[0] is not given[0] and got[1] is not given[1]
    given[1].append("d")  # the caller changing its lists later changes nothing here
    assert got[1] == ["c"]


@pytest.mark.parametrize(
    ("bad", "needle"),
    [
        ({"a": "b"}, "got dict"),
        ({"a b", "c"}, "got set"),
        (3, "got int 3"),
        (2.5, "got float"),
        (None, "got NoneType"),
        (b"a b", "got bytes"),
        ("numbers", "got numpy array of float64"),
        ("scalar", "got numpy scalar"),
        ((s for s in []), "empty"),
        ([{"a": 1}], "Sentence 0 is dict"),
        ([b"a b"], "Sentence 0 is bytes"),
        ([7], "Sentence 0 is int 7"),
        ([["a", None]], "Word 1 of sentence 0 is NoneType"),
    ],
)
def test_what_is_refused_is_named_by_its_type(bad, needle):

    if isinstance(bad, str):
        bad = {"numbers": np.array([1.0, 2.0]), "scalar": np.array("a b")}[bad]
    with pytest.raises(InputError, match=needle):
        normalize_input(bad)


def test_word_token_lists_groups_and_marks_empty_words():
    groups = word_token_lists([5, 6, 7, 8], [0, 0, 2, 2], 3)
    assert groups == [[5, 6], [], [7, 8]]


def test_plan_windows_cover_and_overlap():
    lengths = [1, 2, 1, 3, 1, 1, 2, 1, 1, 1, 2, 1] * 10
    windows = plan_windows(lengths, max_tokens=10, stride=5)
    assert windows[0][0] == 0 and windows[-1][1] == len(lengths)
    for (s1, e1), (s2, _) in zip(windows, windows[1:]):
        assert s1 < s2 < e1  # each window starts inside the previous one: overlap, progress
    for s, e in windows:
        assert sum(lengths[s:e]) <= 10
    assert plan_windows([3, 4], 10) == [(0, 2)]


def test_plan_windows_word_longer_than_window_gets_its_own():
    windows = plan_windows([2, 50, 2], max_tokens=10)
    assert (1, 2) in windows and windows[-1][1] == 3


def test_owners_pick_the_window_with_most_context():
    lengths = [1] * 30
    windows = plan_windows(lengths, max_tokens=10, stride=5)
    owners = assign_owners(windows, lengths)
    flat = sorted(w for own in owners for w in own)
    assert flat == list(range(30))  # each word exactly once
    for (s, e), own in zip(windows, owners):
        for w in own:
            ctx = min(w - s, e - w - 1)
            for s2, e2 in windows:
                if s2 <= w < e2:
                    assert ctx >= min(w - s2, e2 - w - 1)


def test_run_starts_from_lengths_lists_and_arrays():
    assert run_starts([2, 0, 3]).tolist() == [0, 2, 2, 5]
    assert run_starts(np.array([1, 4])).tolist() == [0, 1, 5]
    assert run_starts(map(len, [["a", "b"], ["c"]])).tolist() == [0, 2, 3]
    assert run_starts([]).tolist() == [0] and run_starts([]).dtype == np.int64
