"""Answers compared as typed, NULL-aware multisets (in order where the query fixes one), floats
with a small relative tolerance. Our answers arrive as JSON, CSV, Arrow or Parquet; DuckDB's as
Python values."""
import csv
import datetime
import decimal
import io
import math

import pyarrow as pa
import pyarrow.parquet as pq

I64 = (-(2**63), 2**63 - 1)


def typed(v):
    """A value as (type, value): null, bool, num, text (dates and timestamps as ISO text)."""
    if v is None or v == {}:
        return ("null", None)
    if isinstance(v, bool):
        return ("bool", v)
    if isinstance(v, decimal.Decimal):
        return ("num", int(v) if v == v.to_integral_value() else float(v))
    if isinstance(v, (int, float)):
        return ("num", v)
    if isinstance(v, datetime.datetime):
        return ("text", v.isoformat())
    if isinstance(v, datetime.date):
        return ("text", v.isoformat())
    return ("text", str(v))


def same(a, b):
    if a[0] != b[0]:
        return False
    if a[0] == "num":
        x, y = a[1], b[1]
        if isinstance(x, int) and isinstance(y, int):
            return x == y
        return math.isclose(float(x), float(y), rel_tol=1e-9, abs_tol=1e-9)
    return a[1] == b[1]


def same_row(r, s):
    return len(r) == len(s) and all(same(a, b) for a, b in zip(r, s))


def sort_key(row):
    return tuple((t, "" if v is None else (f"{float(v):.6e}" if t == "num" else str(v))) for t, v in row)


def ours_rows(fmt, content):
    """Our answer as typed rows."""
    if fmt == "json":
        import json
        answer = json.loads(content)
        return [[typed(v) for v in answer[str(i)].values()] for i in range(len(answer))]
    if fmt == "arrow":
        table = pa.ipc.open_stream(content).read_all()
        return [[typed(v) for v in row.values()] for row in table.to_pylist()]
    if fmt == "parquet":
        table = pq.read_table(io.BytesIO(content))
        return [[typed(v) for v in row.values()] for row in table.to_pylist()]
    lines = list(csv.reader(io.StringIO(content.decode())))
    return [[("csv", c) for c in row[1:]] for row in lines[1:]]


def csv_matches(cell, expected):
    """A CSV cell against a typed DuckDB value (CSV has no types: compare the text)."""
    t, v = expected
    text = cell[1]
    if t == "null":
        return text == ""
    if t == "bool":
        return text == ("true" if v else "false")
    if t == "num":
        try:
            if isinstance(v, int) and text.lstrip("-").isdigit():
                return int(text) == v
            return same(("num", float(text)), ("num", float(v)))
        except ValueError:
            return False
    return text == v


def rows_equal(ours, theirs):
    if ours and ours[0] and ours[0][0][0] == "csv":
        return len(ours) == len(theirs) and all(
            len(r) == len(s) and all(csv_matches(c, e) for c, e in zip(r, s)) for r, s in zip(ours, theirs))
    return len(ours) == len(theirs) and all(same_row(r, s) for r, s in zip(ours, theirs))


def multiset_equal(ours, theirs):
    if len(ours) != len(theirs):
        return False
    if rows_equal(sorted(ours, key=sort_key), sorted(theirs, key=sort_key)):
        return True
    # Tolerance can reorder near-equal floats: match greedily.
    left = list(theirs)
    for row in ours:
        for i, cand in enumerate(left):
            if rows_equal([row], [cand]):
                del left[i]
                break
        else:
            return False
    return True


def sub_multiset(ours, theirs):
    left = list(theirs)
    for row in ours:
        for i, cand in enumerate(left):
            if rows_equal([row], [cand]):
                del left[i]
                break
        else:
            return False
    return True


def compare(query, ours, full):
    """None when our rows match DuckDB's, else why not. `full` is DuckDB's answer without LIMIT."""
    keys = [i for i, _ in query.order_by]
    limit = query.limit
    expected = full if limit is None else full[:limit]
    if not keys:
        if limit is None or limit >= len(full):
            return None if multiset_equal(ours, expected) else "rows differ"
        return None if len(ours) == limit and sub_multiset(ours, full) else "rows differ (limit without order)"
    if len(ours) != len(expected):
        return f"{len(ours)} rows, DuckDB {len(expected)}"
    # The order is fixed only up to ties: compare the sort keys in order, and the rows of each run
    # of equal keys as multisets (the last run may be cut by LIMIT: a sub-multiset of DuckDB's).
    for r, s in zip(ours, expected):
        if not rows_equal([[r[k] for k in keys]], [[s[k] for k in keys]]):
            return "order differs"
    start = 0
    while start < len(ours):
        end = start
        while end < len(ours) and rows_equal([[ours[end][k] for k in keys]], [[ours[start][k] for k in keys]]):
            end += 1
        run_key = [ours[start][k] for k in keys]
        theirs = [s for s in full if rows_equal([run_key], [[s[k] for k in keys]])]
        mine = ours[start:end]
        ok = multiset_equal(mine, theirs) if end < len(ours) or len(mine) == len(theirs) else sub_multiset(mine, theirs)
        if not ok:
            return "rows differ within equal sort keys"
        start = end
    return None


def outside_i64(rows):
    return any(t == "num" and isinstance(v, int) and not I64[0] <= v <= I64[1] for row in rows for t, v in row)
