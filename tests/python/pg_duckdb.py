"""DuckDB's `postgres` extension attaching rapid-rs's PostgreSQL listener (tests/api/sql_clients.rs
runs this with .venv-ext's Python).

Usage: pg_duckdb.py HOST PORT USER PASSWORD
Prints one JSON object: the tables DuckDB lists in the attached database, and a grouped count
read through it.

The extension's defaults read tables with binary `COPY ... TO STDOUT` and list them from
PostgreSQL's own catalogue tables; its two settings for PostgreSQL-compatible servers read through
plain queries and `information_schema` instead, which is what the listener offers.
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
    print(json.dumps({"tables": [t for (t,) in tables], "counts": {r: n for r, n in counts},
                      "sum": total, "types": [t for (t,) in types]}))


if __name__ == "__main__":
    main()
