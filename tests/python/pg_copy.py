"""Binary `COPY (SELECT ...) TO STDOUT` through psycopg 3 (tests/api/sql_catalogues.rs runs this).

Usage: pg_copy.py HOST PORT USER PASSWORD
Prints one JSON object: `rows`, travel.trips' regions and prices read in PostgreSQL's binary copy
format, and `raw`, the same copy's messages as they arrive (hex of the first message's 11-byte
signature, each message's length, the last message in hex: the -1 trailer).
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
            with cur.copy(query) as copy:
                messages = [bytes(m) for m in copy]
    raw = {"signature": messages[0][:11].hex(), "lengths": [len(m) for m in messages],
           "last": messages[-1].hex()}
    print(json.dumps({"rows": rows, "raw": raw}))


if __name__ == "__main__":
    main()
