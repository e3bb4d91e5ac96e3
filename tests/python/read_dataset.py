"""Reads a stored dataset version with pyarrow, as any outside tool would, and prints a summary.

usage: read_dataset.py <data/{layer}/{domain}/{dataset}/{version} folder>
"""
import json
import sys

import pyarrow.dataset as ds

table = ds.dataset(sys.argv[1], format="parquet", partitioning="hive").to_table()
rows = table.to_pylist()
print(json.dumps({
    "types": {f.name: str(f.type) for f in table.schema},
    "rows": table.num_rows,
    "records": sorted(rows, key=lambda r: r["id"]),
}, default=str))
