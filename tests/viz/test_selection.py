"""The map's selection predicate (Embedding Atlas): one condition on the table's columns,
parsed by DuckDB and rebuilt from its checked tree, run without file access, with a time limit;
anything else one InputError, never an IndexError, a ValueError or a second statement."""

from __future__ import annotations

import time

import pytest

from workbench.errors import InputError

duckdb = pytest.importorskip("duckdb")
pd = pytest.importorskip("pandas")

from workbench.viz.selection import select_rows  # noqa: E402 - after the skip


@pytest.fixture
def frame():
    return pd.DataFrame({"x": [0.1, 0.6, 0.9], "y": [1, 2, 3], "pos": ["NOUN", "VERB", "NOUN"],
                         "text": ["a bank", "to bank", "the shore"]})  # fmt: skip


@pytest.mark.parametrize(
    ("predicate", "rows"),
    [('"x" > 0.5 AND "pos" = \'NOUN\'', [2]), ("x BETWEEN 0 AND 1", [0, 1, 2]),
     ("regexp_matches(text, 'bank') OR y = 3", [0, 1, 2]), ("row IN (0, 2)", [0, 2]),
     ("(x > 0.5)", [1, 2]), ("1 = 0", [])],
)  # fmt: skip
def test_a_condition_on_the_columns_selects_rows(frame, predicate, rows):
    assert select_rows(frame, predicate) == rows


@pytest.mark.parametrize(
    "predicate",
    ["1=0 UNION ALL SELECT 1 FROM t", "1=0) UNION ALL SELECT (1", "1=0) UNION ALL SELECT x FROM (t",
     "1=1; DROP VIEW t", "1=1); DROP VIEW t; SELECT (1", "x IN (SELECT 1)",
     "EXISTS (SELECT * FROM t)", "nosuch > 1", "t.x > 1", "x > 1 --", "1=1) GROUP BY (row",
     "sum(x) OVER () > 0", "1=1) ORDER BY (1", "1=1) LIMIT (1", "read_csv('/etc/passwd') IS NULL",
     "", ")", "x > 1 /*", "1=1) INTERSECT SELECT (1", "x > (SELECT max(x) FROM t)"],
)  # fmt: skip
def test_anything_else_is_one_input_error(frame, predicate):
    with pytest.raises(InputError, match="map's selection"):
        select_rows(frame, predicate)
    assert select_rows(frame, "y = 2") == [1]  # the table is untouched


def test_a_slow_selection_stops_at_its_time_limit():
    big = pd.DataFrame({"x": range(200_000)})
    slow = "levenshtein(repeat('ab', 400), repeat('ba', 400 + x % 3)) > 0"
    started = time.monotonic()
    with pytest.raises(InputError, match="longer than 0.5 s"):
        select_rows(big, slow, seconds=0.5)
    assert time.monotonic() - started < 10
