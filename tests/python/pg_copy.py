"""Binary `COPY (SELECT ...) TO STDOUT` through psycopg 3 (tests/api/sql_catalogues.rs runs this).

Usage: pg_copy.py HOST PORT USER PASSWORD
Prints one JSON list: travel.trips' regions and prices, read in PostgreSQL's binary copy format.
"""

import json
import sys

import psycopg


def main():
    host, port, user, password = sys.argv[1:5]
    with psycopg.connect(host=host, port=int(port), user=user, password=password,
                         dbname="default", sslmode="disable", autocommit=True) as conn:
        with conn.cursor() as cur:
            query = ("COPY (SELECT region, price FROM travel.trips ORDER BY region, price) "
                     "TO STDOUT (FORMAT BINARY)")
            with cur.copy(query) as copy:
                copy.set_types(["text", "float8"])
                rows = [list(r) for r in copy.rows()]
    print(json.dumps(rows))


if __name__ == "__main__":
    main()
