"""A selection on a map sent by the browser (Embedding Atlas' SQL predicate), run safely.

Embedding Atlas says which points a visitor selected as a SQL boolean expression over the
table's columns (``"x" BETWEEN 1 AND 2 AND "y" > 0``). :func:`select_rows` takes only that:
the text is parsed by DuckDB's own parser into a syntax tree, which must be one ``SELECT`` of
the row numbers of the table ``t`` whose ``WHERE`` is the expression, with no set operation,
subquery, common table expression, grouping or second statement, and naming only the table's
columns; the query run is the one rebuilt from that checked tree (parsed, not spliced), in a
DuckDB connection without file or network access, stopped at the ``query_seconds`` limit
(:mod:`workbench.limits`). Anything else is an :class:`~workbench.errors.InputError`.

Needs the ``atlas`` extra (``duckdb``).

Example::

    select_rows(frame, '"x" > 0.5 AND "pos" = \\'NOUN\\'')      # [3, 17, ...]
    select_rows(frame, "1=1; DROP VIEW t")                      # InputError
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from workbench.errors import InputError
from workbench.limits import limit

if TYPE_CHECKING:
    import pandas as pd

#: Expression classes a selection may not hold (a query inside the expression, a window).
REFUSED_CLASSES = frozenset({"SUBQUERY", "WINDOW", "STAR", "PARAMETER", "LAMBDA"})
#: Longest predicate taken, in characters.
MAX_PREDICATE = 100_000


def _nodes(tree: Any) -> Iterator[dict[str, Any]]:
    if isinstance(tree, dict):
        yield tree
        for value in tree.values():
            yield from _nodes(value)
    elif isinstance(tree, list):
        for value in tree:
            yield from _nodes(value)


def _refuse(why: str) -> InputError:
    return InputError(f"the map's selection is not one condition on the table's columns ({why})")


def checked_query(con: Any, predicate: str, columns: set[str]) -> str:
    """The SQL of ``SELECT row FROM t WHERE (predicate)`` rebuilt from its checked syntax tree.

    Raises:
        InputError: anything but one boolean expression over ``columns``.
    """
    if len(predicate) > MAX_PREDICATE:
        raise _refuse(f"{len(predicate):,} characters, over {MAX_PREDICATE:,}")
    sql = f"SELECT row FROM t WHERE ({predicate})"
    try:
        statements = con.extract_statements(sql)
    except Exception as exc:  # noqa: BLE001 - duckdb's parser errors have several types
        raise _refuse(str(exc).splitlines()[0]) from exc
    if len(statements) != 1:
        raise _refuse(f"{len(statements)} statements")
    raw = con.execute("SELECT json_serialize_sql(?::VARCHAR)", [sql]).fetchone()[0]
    tree = json.loads(raw)
    if tree.get("error"):
        raise _refuse(str(tree.get("error_message", "not a query")))
    node = tree["statements"][0]["node"]
    if node.get("type") != "SELECT_NODE":
        raise _refuse(str(node.get("type")).lower().replace("_", " "))
    table = node.get("from_table") or {}
    extra = [key for key in ("modifiers", "group_expressions", "group_sets") if node.get(key)] + [
        key for key in ("having", "qualify", "sample") if node.get(key) is not None
    ]
    if (
        extra
        or (node.get("cte_map") or {}).get("map")
        or table.get("type") != "BASE_TABLE"
        or table.get("table_name") != "t"
        or [c.get("column_names") for c in node.get("select_list", [])] != [["row"]]
    ):
        raise _refuse("more than a condition: " + (", ".join(extra) or "another query shape"))
    where = node.get("where_clause")
    for part in _nodes(where):
        kind = part.get("class")
        if kind in REFUSED_CLASSES:
            raise _refuse(f"a {str(kind).lower()}")
        if kind == "COLUMN_REF":
            names = part.get("column_names") or []
            if len(names) != 1 or names[0] not in columns:
                raise _refuse(f"no column {'.'.join(map(str, names))!r}")
    rebuilt = con.execute("SELECT json_deserialize_sql(?::JSON)", [raw]).fetchone()[0]
    return str(rebuilt)


def select_rows(frame: pd.DataFrame, predicate: str, seconds: float | None = None) -> list[int]:
    """The positions (0-based) of ``frame``'s rows that ``predicate`` selects.

    Args:
        frame: the map's table.
        predicate: a SQL boolean expression over ``frame``'s columns, from the browser.
        seconds: the time limit (default: the ``query_seconds`` limit).

    Raises:
        InputError: not one condition on the columns, or past the time limit.
    """
    import duckdb

    seconds = limit("query_seconds") if seconds is None else seconds
    # no file or network access, and the setting locked so that no query turns it back on
    con = duckdb.connect(config={"enable_external_access": False, "lock_configuration": True})
    timer = threading.Timer(seconds, con.interrupt)
    try:
        table = frame.reset_index(drop=True).reset_index(names="row")
        con.register("t", table)
        sql = checked_query(con, predicate, {str(c) for c in table.columns})
        timer.start()
        try:
            picked = con.execute(sql).fetchall()
        except duckdb.InterruptException as exc:
            raise InputError(
                f"the map's selection took longer than {seconds:g} s and was stopped "
                "(WORKBENCH_LIMIT_QUERY_SECONDS sets the limit)"
            ) from exc
        except duckdb.Error as exc:
            first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
            raise InputError(f"the map's selection cannot be run ({first})") from exc
    finally:
        timer.cancel()
        con.close()
    return [int(r[0]) for r in picked]
