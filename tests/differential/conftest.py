"""Starts the real rapid-rs binary (debug build) on a free port, stores the generated dataset
through the API (two Parquet uploads), and opens DuckDB over the very files the service wrote."""
import os
import signal
import subprocess
import sys
import tempfile
import time

import duckdb
import pytest
import requests

sys.path.insert(0, os.path.dirname(__file__))
import data  # noqa: E402

ADMIN_ID = "diff-admin"
ADMIN_SECRET = "diff-admin-secret-0123456789abcdef0123"
DOMAIN, DATASET = "diff", "facts"
PATH = f"/api/datasets/default/{DOMAIN}/{DATASET}"


def seed():
    return int(os.environ.get("DIFF_SEED", "21"))


def cases():
    return int(os.environ.get("DIFF_CASES", "300"))


@pytest.fixture(scope="session")
def server():
    binary = os.environ.get("RAPID_BIN", os.path.join(os.path.dirname(__file__), "../../target/debug/rapid-rs"))
    folder = tempfile.mkdtemp(prefix="rapid-diff-")
    env = dict(os.environ, RAPID_ADMIN_CLIENT_ID=ADMIN_ID, RAPID_ADMIN_CLIENT_SECRET=ADMIN_SECRET,
               RUST_LOG="warn")
    proc = subprocess.Popen([binary, "serve", "--bind", "127.0.0.1:0", "--data-dir", folder],
                            stdout=subprocess.PIPE, env=env, text=True)
    line = proc.stdout.readline()
    assert line.startswith("listening on "), f"server did not start: {line!r}"
    base = line.split("listening on ", 1)[1].strip()
    token = requests.post(f"{base}/api/oauth2/token", auth=(ADMIN_ID, ADMIN_SECRET),
                          data={"grant_type": "client_credentials"}, timeout=30).json()["access_token"]
    yield base, token, folder
    proc.send_signal(signal.SIGTERM)
    proc.wait(timeout=30)


def upload(base, token, name, payload):
    auth = {"Authorization": f"Bearer {token}"}
    res = requests.post(f"{base}{PATH}", headers=auth, files={"file": (name, payload)}, timeout=120)
    assert res.status_code == 202, res.text
    job = res.json()["details"]["job_id"]
    deadline = time.time() + 120
    while time.time() < deadline:
        status = requests.get(f"{base}/api/jobs/{job}", headers=auth, timeout=30).json()
        if status["status"] != "IN PROGRESS":
            assert status["status"] == "SUCCESS", status
            return
        time.sleep(0.05)
    raise AssertionError(f"upload job {job} still running")


@pytest.fixture(scope="session")
def dataset(server):
    """(service base, token, DuckDB connection with the `dataset` view)."""
    base, token, folder = server
    res = requests.post(f"{base}/api/schema", json=data.schema_body(DOMAIN, DATASET),
                        headers={"Authorization": f"Bearer {token}"}, timeout=30)
    assert res.status_code == 201, res.text
    rng = data.make_rng(seed())
    upload(base, token, "part1.parquet", data.parquet_bytes(data.rows(rng, 260, 0)))
    upload(base, token, "part2.parquet", data.parquet_bytes(data.rows(rng, 140, 1000)))
    con = duckdb.connect()
    data.duckdb_view(con, os.path.join(folder, "data", "default", DOMAIN, DATASET, "1"))
    return base, token, con
