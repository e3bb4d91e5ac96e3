"""DuckDB's `postgres` extension attaching rapid-rs's PostgreSQL listener (tests/api/sql_clients.rs
runs this with .venv-ext's Python).

Usage: pg_duckdb.py HOST PORT USER PASSWORD
Prints one JSON object: with the extension's two settings for PostgreSQL-compatible servers
(plain queries, `information_schema`), the tables DuckDB lists in the attached database, a
grouped count, a sum and the column types read through it; and with its defaults (no setting:
binary `COPY ... TO STDOUT` by `ctid` page ranges, PostgreSQL's own catalogue tables on attach),
`region: [count(*), sum(price)]`.
"""

import json
import sys

from duckdb_ext import connect


def main():
    host, port, user, password = sys.argv[1:5]
    con = connect("duckdb_extension_postgres_scanner")
    con.execute("SET pg_use_text_protocol = true")
    con.execute("SET pg_use_information_schema_introspection = true")
    con.execute(f"ATTACH 'host={host} port={port} user={user} password={password} dbname=default "
                "sslmode=disable' AS rapid (TYPE postgres, READ_ONLY)")
    tables = con.execute("SELECT schema_name || '.' || table_name FROM duckdb_tables() "
                         "WHERE database_name = 'rapid' ORDER BY 1").fetchall()
    counts = con.execute("SELECT region, count(*) FROM rapid.travel.trips "
                         "GROUP BY region ORDER BY region").fetchall()
    # Numbers arrive as numbers: DuckDB sums a double column and reads its type as DOUBLE.
    (total,) = con.execute("SELECT sum(price) FROM rapid.travel.trips").fetchone()
    types = con.execute("SELECT column_name || ':' || data_type FROM duckdb_columns() "
                        "WHERE database_name = 'rapid' AND table_name = 'trips' "
                        "ORDER BY column_name").fetchall()
    defaults = connect("duckdb_extension_postgres_scanner")
    defaults.execute(f"ATTACH 'dbname=default host={host} port={port} user={user} "
                     f"password={password}' AS r (TYPE postgres)")
    grouped = defaults.execute("SELECT region, count(*), sum(price) FROM r.travel.trips "
                               "GROUP BY region").fetchall()
    print(json.dumps({"tables": [t for (t,) in tables], "counts": {r: n for r, n in counts},
                      "sum": total, "types": [t for (t,) in types],
                      "defaults": {r: [n, s] for r, n, s in grouped}}))


if __name__ == "__main__":
    main()
