"""Seeded test data for the differential query test: one dataset covering every column type,
with NULLs, int64 extremes, strings that need care (padding, tabs, quotes, wildcards, non-ASCII,
the empty string) and partition values that need percent-encoding (and the empty string)."""
import datetime
import pathlib
import random

import pyarrow as pa
import pyarrow.parquet as pq

I64_MAX = 2**63 - 1
I64_MIN = -(2**63)

# Partition values (non-null, as partition columns are).
REGIONS = ["north", "São Paulo", "a/b", "x y", "100%", "O'Brien", "", "__HIVE_DEFAULT_PARTITION__"]
YEARS = [2019, 2020, -1]
STRINGS = ["", " ", "  pad  ", "tab\tin", "ünïcödé", "quote'd", "%_like", "UPPER", "lower", "MiXeD",
           "a", "ab", "abc", "b", "😀x", "new\nline", "north", "x y"]
SPECIAL_DATES = ["1970-01-01", "2020-02-29", "1900-01-01", "2099-12-31", "2000-01-01", "1969-12-31"]
BIG = [I64_MAX, I64_MIN, I64_MAX - 1, I64_MIN + 1, 2**62, -(2**62), 0, 1, -1, 7]

# Columns, their schema type and role. `region` and `yr` are partitions.
COLUMNS = {
    "region": "string", "yr": "int", "id": "int", "qty": "int", "big": "int",
    "price": "double", "cat": "string", "day": "date", "flag": "boolean",
}
PARTITIONS = ["region", "yr"]


def schema_body(domain, dataset):
    columns = []
    for name, kind in COLUMNS.items():
        col = {"name": name, "data_type": kind, "allow_null": name not in PARTITIONS + ["id"]}
        if name in PARTITIONS:
            col["partition_index"] = PARTITIONS.index(name)
        if kind == "date":
            col["format"] = "%Y-%m-%d"
        columns.append(col)
    return {"metadata": {"domain": domain, "dataset": dataset, "sensitivity": "PUBLIC",
                         "update_behaviour": "APPEND",
                         "owners": [{"name": "Diff", "email": "diff@example.com"}]},
            "columns": columns}


def _maybe(rng, value, null_share=0.15):
    return None if rng.random() < null_share else value


def rows(rng, count, first_id):
    out = []
    for i in range(count):
        day = rng.choice(SPECIAL_DATES) if rng.random() < 0.3 else (
            datetime.date(1950, 1, 1) + datetime.timedelta(days=rng.randrange(365 * 100))).isoformat()
        out.append({
            "region": rng.choice(REGIONS),
            "yr": rng.choice(YEARS),
            "id": first_id + i,
            "qty": _maybe(rng, rng.choice([0, 1, -1, rng.randrange(-1000, 1000)])),
            "big": _maybe(rng, rng.choice(BIG) if rng.random() < 0.5 else rng.randrange(-10**6, 10**6), 0.2),
            # Multiples of 1/8 below 2**20: sums are exact whatever the order of addition.
            "price": _maybe(rng, rng.randrange(-2**23, 2**23) / 8 if rng.random() < 0.7
                            else rng.choice([0.0, 0.125, -0.5, 1.5, 1048575.875])),
            "cat": _maybe(rng, rng.choice(STRINGS)),
            "day": _maybe(rng, datetime.date.fromisoformat(day)),
            "flag": _maybe(rng, rng.random() < 0.5),
        })
    return out


def parquet_bytes(batch_rows):
    types = {"string": pa.string(), "int": pa.int64(), "double": pa.float64(), "date": pa.date32(),
             "boolean": pa.bool_()}
    table = pa.table({name: pa.array([r[name] for r in batch_rows], type=types[kind])
                      for name, kind in COLUMNS.items()})
    sink = pa.BufferOutputStream()
    pq.write_table(table, sink)
    return sink.getvalue().to_pybytes()


def duckdb_view(con, version_dir):
    """The stored tree as a DuckDB view named `dataset`, columns typed as the schema says."""
    hive_types = "{'region': 'VARCHAR', 'yr': 'BIGINT'}"
    # The data files, not the Delta log's checkpoints (Parquet too) under `_delta_log/`.
    files = sorted(str(p).replace("'", "''") for p in pathlib.Path(version_dir).rglob("*.parquet")
                   if "_delta_log" not in p.parts)
    listed = ", ".join(f"'{f}'" for f in files)
    con.execute(
        f"CREATE OR REPLACE VIEW dataset AS SELECT {', '.join(COLUMNS)} FROM read_parquet("
        f"[{listed}], hive_partitioning = true, hive_types = {hive_types})")


def make_rng(seed):
    return random.Random(seed)
