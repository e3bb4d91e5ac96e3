"""SQLAlchemy's inspector (what Superset browses schemas and tables with) against rapid-rs's
PostgreSQL listener, through the psycopg driver with its defaults (tests/api/sql_catalogues.rs
runs this).

Usage: pg_inspect.py HOST PORT USER PASSWORD
Prints one JSON object: the schemas, each schema's tables and views, whether travel.trips
exists, what the inspector reflects of each table (what Superset's dataset creation and "sync
columns" call: columns with their types and nullability, primary key, foreign keys, indexes,
unique and check constraints, comment), and `sum(price)` of travel.trips read through the engine.
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
    tables, views, reflected = {}, {}, {}
    for schema in schemas:
        tables[schema] = inspector.get_table_names(schema=schema)
        views[schema] = inspector.get_view_names(schema=schema)
        for table in tables[schema]:
            reflected[f"{schema}.{table}"] = reflect(inspector, schema, table)
    has_table = inspector.has_table("trips", schema="travel")
    with engine.connect() as conn:
        total = conn.execute(sqlalchemy.text("SELECT sum(price) FROM travel.trips")).scalar()
    print(json.dumps({"schemas": schemas, "tables": tables, "views": views,
                      "reflected": reflected, "has_table": has_table, "sum": total}))


def reflect(inspector, schema, table):
    """Every reflection of one table, as plain JSON (types by their SQL name)."""
    columns = [{"name": c["name"], "type": str(c["type"]), "nullable": c["nullable"],
                "default": c["default"], "comment": c.get("comment")}
               for c in inspector.get_columns(table, schema=schema)]
    return {
        "columns": columns,
        "pk": inspector.get_pk_constraint(table, schema=schema),
        "foreign_keys": inspector.get_foreign_keys(table, schema=schema),
        "indexes": inspector.get_indexes(table, schema=schema),
        "unique": inspector.get_unique_constraints(table, schema=schema),
        "checks": inspector.get_check_constraints(table, schema=schema),
        "comment": inspector.get_table_comment(table, schema=schema),
    }


if __name__ == "__main__":
    main()
