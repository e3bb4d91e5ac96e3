"""DuckDB's extensions from PyPI (tests/python/requirements-ext.txt), loaded from their packages'
files: the packages only carry the built extension, which DuckDB would otherwise download."""
import glob
import os

import duckdb


def connect(*packages):
    """A DuckDB connection with the extensions of `packages` (module names) loaded."""
    con = duckdb.connect()
    for name in packages:
        module = __import__(name)
        pattern = os.path.join(os.path.dirname(module.__file__), "extensions", "*", "*.duckdb_extension")
        con.load_extension(glob.glob(pattern)[0])
    return con
