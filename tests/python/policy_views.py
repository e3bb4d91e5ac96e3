"""DuckDB's answers for the policy conformance suite (tests/api/policy_conformance.rs).

Reads {"files": [parquet paths], "queries": {key: sql}} from stdin; `staff` is a view over the
stored Parquet files. Prints {key: [[value as text or null, ...], ...]}: dates in ISO form,
numbers in decimal, so the Rust side compares texts.
"""

import datetime
import json
import sys

import duckdb


def text(v):
    if v is None:
        return None
    if isinstance(v, (datetime.date, datetime.datetime)):
        return v.isoformat()
    if isinstance(v, bool):
        return "true" if v else "false"
    return str(v)


def main():
    asked = json.load(sys.stdin)
    con = duckdb.connect()
    files = ", ".join("'" + f.replace("'", "''") + "'" for f in asked["files"])
    con.execute(f"CREATE VIEW staff AS SELECT * FROM read_parquet([{files}])")
    out = {}
    for key, sql in asked["queries"].items():
        try:
            rows = con.execute(sql).fetchall()
        except Exception as e:  # name the statement that failed
            sys.exit(f"{key}: {sql}: {e}")
        out[key] = [[text(v) for v in row] for row in rows]
    print(json.dumps(out))


main()
