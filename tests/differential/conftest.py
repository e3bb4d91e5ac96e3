"""Starts the real rapid-rs binary (debug build) on a free port, stores the generated dataset
through the API (two Parquet uploads), and opens DuckDB over the very files the service wrote.
The same rows are stored a second time as many small appends, compacted by a COMPACT job (the
server's automatic compaction is off, so each dataset stays as the test made it)."""
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
COMPACTED = "compacted"
COMPACTED_PATH = f"/api/datasets/default/{DOMAIN}/{COMPACTED}"
APPENDS = 8


def sql_cases():
    return int(os.environ.get("DIFF_SQL_CASES", "200"))


def seed():
    return int(os.environ.get("DIFF_SEED", "21"))


def cases():
    return int(os.environ.get("DIFF_CASES", "300"))


def start_server(keep_commits):
    """The debug binary on free ports, keeping `keep_commits` commits per version; yields (base,
    token, data folder, process)."""
    binary = os.environ.get("RAPID_BIN", os.path.join(os.path.dirname(__file__), "../../target/debug/rapid-rs"))
    folder = tempfile.mkdtemp(prefix="rapid-diff-")
    env = dict(os.environ, RAPID_ADMIN_CLIENT_ID=ADMIN_ID, RAPID_ADMIN_CLIENT_SECRET=ADMIN_SECRET,
               RUST_LOG="warn", RAPID_COMPACT_AUTO="false", RAPID_PG_LISTEN="127.0.0.1:0",
               RAPID_HISTORY_KEEP_COMMITS=str(keep_commits), RAPID_HISTORY_KEEP_SECONDS="0")
    proc = subprocess.Popen([binary, "serve", "--bind", "127.0.0.1:0", "--data-dir", folder],
                            stdout=subprocess.PIPE, env=env, text=True)
    # The PostgreSQL listener's line comes first, then the HTTP one.
    line = proc.stdout.readline()
    assert line.startswith("postgresql listening on "), f"server did not start: {line!r}"
    pg = line.split("postgresql listening on ", 1)[1].strip()
    line = proc.stdout.readline()
    assert line.startswith("listening on "), f"server did not start: {line!r}"
    base = line.split("listening on ", 1)[1].strip()
    token = requests.post(f"{base}/api/oauth2/token", auth=(ADMIN_ID, ADMIN_SECRET),
                          data={"grant_type": "client_credentials"}, timeout=30).json()["access_token"]
    return base, token, folder, proc, pg


def stop_server(proc):
    proc.send_signal(signal.SIGTERM)
    proc.wait(timeout=30)


@pytest.fixture(scope="session")
def server():
    # DuckDB globs the version's folder, which would also see files kept for earlier commits
    # (history retention): keep only the current commit's.
    base, token, folder, proc, pg = start_server(1)
    os.environ["RAPID_DIFF_WIRE"] = pg
    yield base, token, folder
    stop_server(proc)


@pytest.fixture(scope="session")
def history_server():
    """A second server keeping every commit (the time-travel mode reads earlier ones)."""
    base, token, folder, proc, _ = start_server(100)
    yield base, token, folder
    stop_server(proc)


def wait_job(base, token, job, what):
    auth = {"Authorization": f"Bearer {token}"}
    deadline = time.time() + 120
    while time.time() < deadline:
        status = requests.get(f"{base}/api/jobs/{job}", headers=auth, timeout=30).json()
        if status["status"] != "IN PROGRESS":
            assert status["status"] == "SUCCESS", status
            return status
        time.sleep(0.05)
    raise AssertionError(f"{what} job {job} still running")


def upload(base, token, name, payload, path=PATH):
    auth = {"Authorization": f"Bearer {token}"}
    res = requests.post(f"{base}{path}", headers=auth, files={"file": (name, payload)}, timeout=120)
    assert res.status_code == 202, res.text
    wait_job(base, token, res.json()["details"]["job_id"], "upload")


def seeded_rows():
    """The dataset's rows, as its two uploads."""
    rng = data.make_rng(seed())
    return data.rows(rng, 260, 0), data.rows(rng, 140, 1000)


def create(base, token, dataset):
    res = requests.post(f"{base}/api/schema", json=data.schema_body(DOMAIN, dataset),
                        headers={"Authorization": f"Bearer {token}"}, timeout=30)
    assert res.status_code == 201, res.text


def version_dir(folder, dataset):
    return os.path.join(folder, "data", "default", DOMAIN, dataset, "1")


def parquet_files(root):
    return sorted(os.path.relpath(os.path.join(d, f), root)
                  for d, _, files in os.walk(root) for f in files if f.endswith(".parquet"))


def wire():
    """The server's PostgreSQL listener as (host, port); the `server` fixture sets it."""
    host, port = os.environ["RAPID_DIFF_WIRE"].rsplit(":", 1)
    return host, int(port)


@pytest.fixture(scope="session")
def dataset(server):
    """(service base, token, DuckDB connection with the `dataset` view)."""
    base, token, folder = server
    create(base, token, DATASET)
    first, second = seeded_rows()
    upload(base, token, "part1.parquet", data.parquet_bytes(first))
    upload(base, token, "part2.parquet", data.parquet_bytes(second))
    con = duckdb.connect()
    data.duckdb_view(con, version_dir(folder, DATASET))
    return base, token, con


@pytest.fixture(scope="session")
def compacted(server, dataset):
    """The dataset's rows again, as APPENDS small appends, merged by a COMPACT job: (service
    base, token, DuckDB connection with the `dataset` view over the merged files). Checked here:
    the job merged every partition into one file, and those files hold exactly the dataset's
    rows (so DuckDB's answers over the dataset's files are the answers for this one too)."""
    base, token, folder = server
    create(base, token, COMPACTED)
    rows = [r for part in seeded_rows() for r in part]
    step = -(-len(rows) // APPENDS)
    for i in range(APPENDS):
        upload(base, token, f"append{i}.parquet", data.parquet_bytes(rows[i * step:(i + 1) * step]),
               COMPACTED_PATH)
    root = version_dir(folder, COMPACTED)
    before = parquet_files(root)
    partitions = {os.path.dirname(f) for f in before}
    assert len(before) > len(partitions), "the appends left several files in some partition"
    res = requests.post(f"{base}{COMPACTED_PATH}/compact?version=1", timeout=30,
                        headers={"Authorization": f"Bearer {token}"})
    assert res.status_code == 202, res.text
    job = wait_job(base, token, res.json()["details"]["job_id"], "COMPACT")
    assert job["type"] == "COMPACT" and job["rows_processed"] == len(rows), job
    after = parquet_files(root)
    assert {os.path.dirname(f) for f in after} == partitions, (before, after)
    assert len(after) == len(partitions), f"not one file per partition: {after}"
    assert all(os.path.basename(f).startswith("compacted-") for f in after), after
    con = duckdb.connect()
    data.duckdb_view(con, root)
    everything = "SELECT * FROM dataset ORDER BY id"
    _, _, original = dataset
    assert con.execute(everything).fetchall() == original.execute(everything).fetchall(), \
        "the merged files hold other rows than the uploads"
    return base, token, con
