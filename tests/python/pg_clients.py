"""psycopg 3 and pandas against rapid-rs's PostgreSQL listener (tests/api/sql.rs runs this).

Usage: pg_clients.py HOST PORT USER PASSWORD
Prints one JSON object: the tables information_schema lists, pandas' answer to a query, the
SQLSTATE of a write and of a protected table, and pandas' answer over SQLAlchemy
(`postgresql+psycopg://`). Then, in the same session, prints "ready" and, for
every line on stdin (the test changes the subject meanwhile), the SQLSTATE (or "ok") of one query:
permission changes and deletions apply to open sessions at once.
"""

import json
import sys
import warnings
from urllib.parse import quote

import pandas as pd
import psycopg
import sqlalchemy


def sqlstate(conn, sql):
    try:
        with conn.cursor() as cur:
            cur.execute(sql)
            cur.fetchall()
        return "ok"
    except psycopg.Error as e:
        conn.rollback()
        return e.sqlstate


def main():
    host, port, user, password = sys.argv[1:5]
    conn = psycopg.connect(host=host, port=int(port), user=user, password=password,
                           dbname="default", sslmode="disable", autocommit=True)
    with conn.cursor() as cur:
        cur.execute("SELECT table_schema || '.' || table_name FROM information_schema.tables "
                    "WHERE table_catalog = 'default' "
                    "AND table_schema NOT IN ('information_schema', 'pg_catalog') ORDER BY 1")
        tables = [r[0] for r in cur.fetchall()]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # pandas prefers SQLAlchemy; a DBAPI connection works
        df = pd.read_sql("SELECT region, count(*) AS n FROM travel.trips "
                         "GROUP BY region ORDER BY region", conn)
    # SQLAlchemy's defaults: its hstore probe (psycopg's TypeInfo, to_regtype) on connect, and a
    # nested transaction (SAVEPOINT) around the read.
    engine = sqlalchemy.create_engine(
        f"postgresql+psycopg://{quote(user, safe='')}:{quote(password, safe='')}"
        f"@{host}:{port}/default?sslmode=disable")
    with engine.connect() as alchemy, alchemy.begin_nested():
        by_engine = pd.read_sql(sqlalchemy.text("SELECT region, count(*) AS n FROM travel.trips "
                                                "GROUP BY region ORDER BY region"), alchemy)
    engine.dispose()
    out = {
        "tables": tables,
        "counts": {r.region: int(r.n) for r in df.itertuples()},
        "sqlalchemy": {r.region: int(r.n) for r in by_engine.itertuples()},
        "write": sqlstate(conn, "DELETE FROM travel.trips"),
        "protected": sqlstate(conn, "SELECT * FROM secret.payroll"),
    }
    print(json.dumps(out), flush=True)
    print("ready", flush=True)
    for _ in sys.stdin:
        print(sqlstate(conn, "SELECT count(*) FROM travel.trips"), flush=True)
    conn.close()


if __name__ == "__main__":
    main()
