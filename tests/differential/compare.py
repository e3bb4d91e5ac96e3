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


def cmp_values(a, b, direction):
    """-1, 0 or 1 for two typed values under ORDER BY `direction`, NULLs last either way."""
    if a[0] == "null" or b[0] == "null":
        return (a[0] == "null") - (b[0] == "null")
    if a[0] != b[0] or same(a, b):
        return 0
    sign = 1 if direction == "ASC" else -1
    return sign * (1 if a[1] > b[1] else -1)


def order_cmp(a, b, keys):
    for i, direction in keys:
        c = cmp_values(a[i], b[i], direction)
        if c:
            return c
        if a[i] != b[i]:
            # Equal only within the float tolerance: which sorts first is rounding noise, and
            # so is every later key.
            return 0
    return 0


def remaining(full, ours):
    """DuckDB's rows that are not among ours (multiset difference)."""
    left = list(full)
    for row in ours:
        for i, cand in enumerate(left):
            if rows_equal([row], [cand]):
                del left[i]
                break
    return left


def compare(query, ours, full):
    """None when our rows match DuckDB's, else why not. `full` is DuckDB's answer without LIMIT.
    Rows are compared as multisets (ours a sub-multiset when LIMIT cuts); the order is checked
    on our rows themselves (each row sorts no later than the next, float keys equal within the
    tolerance count as ties), and a LIMIT must keep rows that sort first. CSV has no types, so
    its order is not checked (the other formats check it)."""
    expected = len(full) if query.limit is None else min(query.limit, len(full))
    if len(ours) != expected:
        return f"{len(ours)} rows, DuckDB {expected}"
    if expected == len(full):
        if not multiset_equal(ours, full):
            return "rows differ"
    elif not sub_multiset(ours, full):
        return "rows differ (not among DuckDB's)"
    keys = query.order_by
    if not keys or (ours and ours[0] and ours[0][0][0] == "csv"):
        return None
    for a, b in zip(ours, ours[1:]):
        if order_cmp(a, b, keys) > 0:
            return "order differs"
    if ours and expected < len(full):
        if any(order_cmp(r, ours[-1], keys) < 0 for r in remaining(full, ours)):
            return "LIMIT kept rows that do not sort first"
    return None


def outside_i64(rows):
    return any(t == "num" and isinstance(v, int) and not I64[0] <= v <= I64[1] for row in rows for t, v in row)
