"""The ADBC PostgreSQL driver (what polars' and pandas' ADBC paths use) against rapid-rs's
PostgreSQL listener, with the driver's defaults: it reads the type catalogue on connect and every
result through `COPY (...) TO STDOUT (FORMAT binary)`.

Usage: pg_adbc.py HOST PORT USER PASSWORD
Prints one JSON object: the grouped rows with their Arrow types, and the SQLSTATE of a read of
the PROTECTED table (or "ok").
"""

import json
import sys
from urllib.parse import quote

import adbc_driver_postgresql.dbapi as adbc


def main():
    host, port, user, password = sys.argv[1:5]
    uri = (f"postgresql://{quote(user, safe='')}:{quote(password, safe='')}@{host}:{port}"
           "/default?sslmode=disable")
    with adbc.connect(uri) as conn, conn.cursor() as cur:
        cur.execute("SELECT region, count(*) AS n, sum(price) AS total, max(year) AS latest "
                    "FROM travel.trips GROUP BY region ORDER BY region")
        table = cur.fetch_arrow_table()
        rows = table.to_pylist()
        types = {f.name: str(f.type) for f in table.schema}
        try:
            cur.execute("SELECT sum(salary) AS s FROM secret.payroll")
            protected = f"ok {cur.fetch_arrow_table().to_pylist()}"
        except adbc.Error as e:
            protected = getattr(e, "sqlstate", None) or str(e)
    print(json.dumps({"rows": rows, "types": types, "protected": protected}))


if __name__ == "__main__":
    main()
