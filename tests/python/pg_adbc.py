"""The ADBC PostgreSQL driver (Arrow Database Connectivity, what Arrow-native tools such as
pandas 2, Polars and DuckDB's `adbc_scanner` load) against rapid-rs's PostgreSQL listener
(tests/api/sql_clients_arrow.rs runs this). The driver reads every answer with binary
`COPY (...) TO STDOUT` and decodes it by the types the statement's description names.

Usage: pg_adbc.py HOST PORT USER PASSWORD
Prints one JSON object: for the typed query, its Arrow schema (`name:type`) and its rows (dates
and timestamps as ISO text); the grouped answer over travel.trips; and the SQLSTATE of a query
of a table the subject may not read.
"""

import datetime
import json
import sys
from urllib.parse import quote

import adbc_driver_postgresql.dbapi

TYPED = """
SELECT region,
       year,
       price,
       year > 2017 AS recent,
       CAST(CAST(year AS VARCHAR) || '-03-01' AS DATE) AS day,
       CAST(CAST(year AS VARCHAR) || '-03-01 12:30:00' AS TIMESTAMP) AS at,
       CASE WHEN price IS NULL THEN NULL ELSE year END AS year_if_priced
FROM travel.trips
ORDER BY region, year
"""


def plain(value):
    if isinstance(value, (datetime.date, datetime.datetime)):
        return value.isoformat()
    return value


def main():
    host, port, user, password = sys.argv[1:5]
    uri = (f"postgresql://{quote(user, safe='')}:{quote(password, safe='')}@{host}:{port}"
           "/default?sslmode=disable")
    with adbc_driver_postgresql.dbapi.connect(uri) as conn:
        with conn.cursor() as cur:
            cur.execute(TYPED)
            table = cur.fetch_arrow_table()
            schema = [f"{f.name}:{f.type}" for f in table.schema]
            rows = [[plain(v) for v in row.values()] for row in table.to_pylist()]
            cur.execute("SELECT region, count(*) AS n, sum(price) AS total FROM travel.trips "
                        "GROUP BY region ORDER BY region")
            grouped = cur.fetch_arrow_table().to_pylist()
        with conn.cursor() as cur:
            try:
                cur.execute("SELECT * FROM secret.payroll")
                cur.fetch_arrow_table()
                protected = "read"
            except adbc_driver_postgresql.dbapi.Error as e:
                protected = e.sqlstate
    print(json.dumps({"schema": schema, "rows": rows, "grouped": grouped,
                      "protected": protected}))


if __name__ == "__main__":
    main()
