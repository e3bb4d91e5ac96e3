"""Superset's traffic with a PostgreSQL database, as apache-superset 6.1 sends it
(superset/db_engine_specs/postgres.py and base.py, models/core.py, connectors/sqla/utils.py,
models/helpers.py), through SQLAlchemy with psycopg2 (Superset's default driver) and psycopg
(tests/api/sql_dashboards.rs runs this with SQLAlchemy 2 and, from .venv-ext, with the 1.4
Superset pins):
- adding the database: the connection test (the dialect's ping on a raw connection), the
  catalogs (`pg_database`), the default catalog's schemas and their tables, views (as the
  inspector and `has_view` list them) and foreign tables, the default schema;
- creating a dataset of `sales.orders` (and of `secret.payroll`, where listed): `has_table`,
  the columns (types, nullability), primary key, foreign keys, indexes and comment, the table
  reflected as a whole, and the preview (`select_star` with its LIMIT, run after the schema's prequery
  `set search_path = "sales"`); a virtual dataset's columns (its SQL with LIMIT 1);
- charts: a time series by month (DATE_TRUNC) of `SUM(amount)` by region over a time range
  (`TO_DATE`), the same over a virtual dataset (`AS virtual_table`, `TO_TIMESTAMP`) with a
  series limit (`JOIN (...) AS series_limit`), one by the 15-minute time grain (an interval
  times a number), the big number (`SUM(amount)`), each with
  `ORDER BY ... DESC LIMIT`; SQL Lab: an unqualified table after the prequery, the query's
  backend pid (for cancelling), and the cost estimate's EXPLAIN (off by default in Superset);
- the PROTECTED table `secret.payroll`: whether the inspector finds it, and its preview.

Usage: pg_superset.py HOST PORT USER PASSWORD [DRIVER...]
(default: psycopg2 and psycopg; psycopg2 alone with SQLAlchemy 1.4, which has no psycopg dialect)
Prints one JSON object: {"sqlalchemy": version, DRIVER: {step: answer}}; a step that failed
answers {"error": its first line}. Dates and times are ISO text; numbers stay numbers.
"""

import datetime
import json
import sys
from contextlib import closing
from urllib.parse import quote

import sqlalchemy
from sqlalchemy import MetaData, Table, text
from sqlalchemy.pool import NullPool

# Superset's time filters: `convert_dttm` of a DATE and of a TIMESTAMP column.
SINCE_DATE = "TO_DATE('2024-01-01', 'YYYY-MM-DD')"
UNTIL_DATE = "TO_DATE('2025-01-01', 'YYYY-MM-DD')"
SINCE_TS = "TO_TIMESTAMP('2024-01-01 00:00:00.000000', 'YYYY-MM-DD HH24:MI:SS.US')"
UNTIL_TS = "TO_TIMESTAMP('2025-01-01 00:00:00.000000', 'YYYY-MM-DD HH24:MI:SS.US')"

DATASETS = ["sales.orders", "secret.payroll"]

VIRTUAL = "SELECT CAST(order_date AS TIMESTAMP) AS ordered_at, region, amount FROM sales.orders"
MINUTES = ("SELECT CAST(order_date AS TIMESTAMP) + INTERVAL '37 minutes' AS ordered_at, amount "
           "FROM sales.orders")

# What the chart pages generate (models/helpers.py, get_sqla_query), as SQLAlchemy renders it.
CHARTS = {
    "chart": f"""SELECT DATE_TRUNC('month', order_date) AS order_date, region AS region, SUM(amount) AS "SUM(amount)"
FROM sales.orders
WHERE order_date >= {SINCE_DATE} AND order_date < {UNTIL_DATE}
GROUP BY DATE_TRUNC('month', order_date), region
ORDER BY "SUM(amount)" DESC
LIMIT 10000""",
    "virtual_chart": f"""SELECT DATE_TRUNC('month', ordered_at) AS ordered_at, region AS region, SUM(amount) AS "SUM(amount)"
FROM ({VIRTUAL}) AS virtual_table JOIN (SELECT region AS region__, COUNT(amount) AS mme_inner__
FROM ({VIRTUAL}) AS virtual_table
WHERE ordered_at >= {SINCE_TS} AND ordered_at < {UNTIL_TS} GROUP BY region ORDER BY mme_inner__ DESC
 LIMIT 2) AS series_limit ON region = region__
WHERE ordered_at >= {SINCE_TS} AND ordered_at < {UNTIL_TS}
GROUP BY DATE_TRUNC('month', ordered_at), region
ORDER BY "SUM(amount)" DESC
 LIMIT 10000""",
    # The 15-minute time grain (PostgresEngineSpec's PT15M), over a virtual dataset whose times
    # are 37 minutes past midnight: an interval times a number.
    "quarter_hours": f"""SELECT DATE_TRUNC('hour', ordered_at) + INTERVAL '15 minutes' * FLOOR(EXTRACT(MINUTE FROM ordered_at) / 15) AS ordered_at, SUM(amount) AS "SUM(amount)"
FROM ({MINUTES}) AS virtual_table
WHERE ordered_at >= {SINCE_TS} AND ordered_at < {UNTIL_TS}
GROUP BY DATE_TRUNC('hour', ordered_at) + INTERVAL '15 minutes' * FLOOR(EXTRACT(MINUTE FROM ordered_at) / 15)
ORDER BY "SUM(amount)" DESC
LIMIT 10000""",
    "big_number": """SELECT SUM(amount) AS "SUM(amount)"
FROM sales.orders
LIMIT 50000""",
}


def main():
    host, port, user, password = sys.argv[1:5]
    # SQLAlchemy 1.4 has no dialect for psycopg (v3).
    both = int(sqlalchemy.__version__.split(".")[0]) >= 2
    drivers = sys.argv[5:] or (["psycopg2", "psycopg"] if both else ["psycopg2"])
    answers = {"sqlalchemy": sqlalchemy.__version__}
    for driver in drivers:
        url = (f"postgresql+{driver}://{quote(user, safe='')}:{quote(password, safe='')}"
               f"@{host}:{port}/default")
        # Superset's engines: no pool (Database._get_sqla_engine, nullpool=True).
        engine = sqlalchemy.create_engine(url, poolclass=NullPool,
                                          connect_args={"sslmode": "disable"})
        answers[driver] = superset(engine)
        engine.dispose()
    print(json.dumps(answers, default=plain))


def superset(engine):
    """Each step of Superset's, by name (its sources: this module's docstring)."""
    steps = {}
    steps["ping"] = step(lambda: ping(engine))
    steps["catalogs"] = step(lambda: rows(engine, None, "\nSELECT datname FROM pg_database\nWHERE datistemplate = false;\n            "))
    steps["default_schema"] = step(lambda: sqlalchemy.inspect(engine).default_schema_name)
    steps["schemas"] = step(lambda: sorted(sqlalchemy.inspect(engine).get_schema_names()))
    schemas = steps["schemas"] if isinstance(steps["schemas"], list) else []
    steps["tables"] = {s: step(lambda s=s: tables(engine, s)) for s in schemas}
    steps["views"] = {s: step(lambda s=s: views(engine, s)) for s in schemas}
    # The datasets created: of `sales.orders`, and of `secret.payroll` where it is listed.
    steps["datasets"] = {
        f"{s}.{t}": dataset(engine, s, t)
        for s, listed in steps["tables"].items() if isinstance(listed, list) for t in listed
        if f"{s}.{t}" in DATASETS
    }
    steps["preview"] = step(lambda: rows(engine, "sales", "SELECT\n  *\nFROM sales.orders\nLIMIT 100"))
    steps["virtual_columns"] = step(lambda: description(engine, "sales", f"{VIRTUAL}\nLIMIT 1"))
    for name, sql in CHARTS.items():
        steps[name] = step(lambda sql=sql: rows(engine, "sales", sql))
    steps["sql_lab"] = step(lambda: rows(engine, "sales", "SELECT region, count(*) AS n FROM orders GROUP BY region ORDER BY region\nLIMIT 1001"))
    steps["backend_pid"] = step(lambda: isinstance(rows(engine, None, "SELECT pg_backend_pid()")[0][0], int))
    steps["explain"] = step(lambda: len(rows(engine, "sales", "EXPLAIN " + CHARTS["chart"])) > 0)
    steps["has_protected"] = step(lambda: sqlalchemy.inspect(engine).has_table("payroll", "secret"))
    steps["protected"] = step(lambda: rows(engine, "secret", "SELECT\n  *\nFROM secret.payroll\nLIMIT 100"))
    return steps


def step(run):
    try:
        return run()
    except Exception as e:  # noqa: BLE001 (each step's answer is reported, not raised)
        # Through SQLAlchemy the driver's error is `orig`; on a raw connection it is itself.
        driver = getattr(e, "orig", None) or e
        code = getattr(driver, "pgcode", None) or getattr(driver, "sqlstate", None)
        return {"error": f"{type(driver).__name__}: {(str(driver) or '?').splitlines()[0]}",
                "sqlstate": code}


def ping(engine):
    """TestConnectionDatabaseCommand: `engine.dialect.do_ping` on a raw connection."""
    with closing(engine.raw_connection()) as conn:
        return engine.dialect.do_ping(conn)


def raw(engine, schema):
    """Database.get_raw_connection: a raw connection after the schema's prequery."""
    conn = engine.raw_connection()
    if schema:
        cursor = conn.cursor()
        cursor.execute(f'set search_path = "{schema}"')
    return conn


def rows(engine, schema, sql):
    with closing(raw(engine, schema)) as conn:
        cursor = conn.cursor()
        cursor.execute(sql)
        return [list(r) for r in cursor.fetchall()]


def description(engine, schema, sql):
    """get_columns_description: the names of the cursor's description, each with the Python
    type of its first value."""
    with closing(raw(engine, schema)) as conn:
        cursor = conn.cursor()
        cursor.execute(sql)
        first = cursor.fetchall()[0]
        return [[d[0], type(v).__name__] for d, v in zip(cursor.description, first)]


def tables(engine, schema):
    """PostgresEngineSpec.get_table_names: tables and foreign tables."""
    inspector = sqlalchemy.inspect(engine)
    return sorted(set(inspector.get_table_names(schema))
                  | set(inspector.get_foreign_table_names(schema)))


def views(engine, schema):
    """get_view_names through the inspector, and through the dialect as `has_view` asks."""
    inspector = sqlalchemy.inspect(engine)
    with engine.connect() as connection:
        by_dialect = engine.dialect.get_view_names(connection=connection, schema=schema)
    return sorted(set(inspector.get_view_names(schema)) | set(by_dialect))


def dataset(engine, schema, table):
    """What creating a dataset of one table reads (get_physical_table_metadata, the dataset
    editor's "sync columns", the table's metadata in SQL Lab)."""
    def columns():
        return [[c["name"], str(c["type"]), c["nullable"]]
                for c in sqlalchemy.inspect(engine).get_columns(table, schema)]

    def reflected():
        found = Table(table, MetaData(), schema=schema, autoload_with=engine)
        return [[c.name, str(c.type), c.nullable] for c in found.columns]

    inspector = lambda: sqlalchemy.inspect(engine)  # noqa: E731 (one inspector a step, as Superset's)
    return {
        "has_table": step(lambda: inspector().has_table(table, schema)),
        "columns": step(columns),
        "pk": step(lambda: inspector().get_pk_constraint(table, schema)["constrained_columns"]),
        "foreign_keys": step(lambda: inspector().get_foreign_keys(table, schema)),
        "indexes": step(lambda: inspector().get_indexes(table, schema)),
        "comment": step(lambda: inspector().get_table_comment(table, schema)["text"]),
        "reflected": step(reflected),
    }


def plain(value):
    if isinstance(value, (datetime.date, datetime.datetime)):
        return value.isoformat()
    return str(value)


if __name__ == "__main__":
    main()
