"""SQLAlchemy's inspector (what Superset browses schemas and tables with) against rapid-rs's
PostgreSQL listener, through the psycopg driver with its defaults (tests/api/sql_catalogues.rs
runs this).

Usage: pg_inspect.py HOST PORT USER PASSWORD
Prints one JSON object: the schemas, each schema's tables, views and foreign keys, whether
travel.trips exists, and `sum(price)` of travel.trips read through the engine. (Columns, primary
keys and indexes are not answered yet: their queries unnest `int2[]` catalogue columns and
decorrelate subqueries under CASE, which the emulation and DataFusion cannot.)
"""

import json
import sys
from urllib.parse import quote

import sqlalchemy


def main():
    host, port, user, password = sys.argv[1:5]
    engine = sqlalchemy.create_engine(
        f"postgresql+psycopg://{quote(user, safe='')}:{quote(password, safe='')}@{host}:{port}"
        "/default?sslmode=disable")
    inspector = sqlalchemy.inspect(engine)
    schemas = inspector.get_schema_names()
    tables, views, foreign_keys = {}, {}, {}
    for schema in schemas:
        tables[schema] = inspector.get_table_names(schema=schema)
        views[schema] = inspector.get_view_names(schema=schema)
        for table in tables[schema]:
            foreign_keys[f"{schema}.{table}"] = inspector.get_foreign_keys(table, schema=schema)
    has_table = inspector.has_table("trips", schema="travel")
    with engine.connect() as conn:
        total = conn.execute(sqlalchemy.text("SELECT sum(price) FROM travel.trips")).scalar()
    print(json.dumps({"schemas": schemas, "tables": tables, "views": views,
                      "foreign_keys": foreign_keys, "has_table": has_table, "sum": total}))


if __name__ == "__main__":
    main()
