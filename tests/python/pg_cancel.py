"""A PostgreSQL cancel request stops a running statement (tests/api/sql.rs runs this).

Usage: pg_cancel.py HOST PORT USER PASSWORD
Starts a slow statement, sends the protocol's cancel request from another thread after half a
second, and prints the SQLSTATE, the seconds it took, and the answer of the next statement in
the same session, as JSON.
"""

import json
import sys
import threading
import time

import psycopg


def main():
    host, port, user, password = sys.argv[1:5]
    conn = psycopg.connect(host=host, port=int(port), user=user, password=password,
                           dbname="default", sslmode="disable", autocommit=True)
    threading.Timer(0.5, conn.cancel_safe).start()
    started = time.monotonic()
    state = "ok"
    try:
        with conn.cursor() as cur:
            cur.execute("SELECT count(*) FROM generate_series(1, 2000000000) AS t(x) "
                        "WHERE x % 7 = 3")
            cur.fetchall()
    except psycopg.Error as e:
        state = e.sqlstate
    took = time.monotonic() - started
    with conn.cursor() as cur:
        cur.execute("SELECT 5")
        after = cur.fetchone()[0]
    print(json.dumps({"sqlstate": state, "seconds": took, "after": after}))


if __name__ == "__main__":
    main()
