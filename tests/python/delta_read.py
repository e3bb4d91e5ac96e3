"""Reads a stored version's folder as a Delta Lake table, the way other engines do (issue 36),
and prints the rows as JSON, each list ordered by `id`, dates as ISO text:

    delta_read.py deltalake TABLE V...   {"V": {"rows": [...], "version": V}, ..., "latest": N}
                                         (the `deltalake` package, delta-rs; time travel to V)
    delta_read.py duckdb TABLE           {"rows": [...]} (DuckDB's delta extension, delta_scan:
                                         the current version; run with .venv-ext's Python)
    delta_read.py duckdb TABLE V...      {"V": {"rows": [...]}, ...} (delta_scan's version := V)
"""
import datetime
import json
import os
import sys


def normal(rows):
    out = [
        {k: (v.isoformat() if isinstance(v, datetime.date) else v) for k, v in row.items()}
        for row in rows
    ]
    out.sort(key=lambda row: row["id"])
    return out


def with_deltalake(path, versions):
    from deltalake import DeltaTable

    answers = {}
    for v in versions:
        table = DeltaTable(path, version=int(v))
        answers[v] = {"rows": normal(table.to_pyarrow_table().to_pylist()), "version": table.version()}
    answers["latest"] = DeltaTable(path).version()
    return answers


def with_duckdb(path, versions):
    import duckdb_ext

    con = duckdb_ext.connect("duckdb_extension_delta")
    quoted = path.replace("'", "''")

    def rows(version):
        at = "" if version is None else ", version := %d" % int(version)
        cur = con.execute("SELECT * FROM delta_scan('%s'%s)" % (quoted, at))
        names = [d[0] for d in cur.description]
        return normal(dict(zip(names, row)) for row in cur.fetchall())

    if not versions:
        return {"rows": rows(None)}
    return {v: {"rows": rows(v)} for v in versions}


if __name__ == "__main__":
    mode, table = sys.argv[1], sys.argv[2]
    versions = sys.argv[3:]
    answer = with_deltalake(table, versions) if mode == "deltalake" else with_duckdb(table, versions)
    print(json.dumps(answer))
    sys.stdout.flush()
    # delta-rs's runtime threads can abort the interpreter's teardown ("terminate called
    # without an active exception"): the answer is out, leave without it.
    os._exit(0)
