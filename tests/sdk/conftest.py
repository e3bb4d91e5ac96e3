"""Starts the real rapid-rs binary on a free port with a temporary data folder and admin
credentials, and points the rAPId SDK at it through its own environment variables."""
import os
import signal
import subprocess
import tempfile

import pytest

ADMIN_ID = "sdk-admin"
ADMIN_SECRET = "sdk-admin-secret-0123456789abcdef0123"


@pytest.fixture(scope="session")
def server():
    # A running service instead (scripts/test-scale-out.sh: two nodes behind nginx), whose admin
    # client is ADMIN_ID / ADMIN_SECRET.
    external = os.environ.get("RAPID_SDK_URL")
    if external:
        os.environ.update(RAPID_URL=external, RAPID_CLIENT_ID=ADMIN_ID, RAPID_CLIENT_SECRET=ADMIN_SECRET)
        yield external
        return
    binary = os.environ.get("RAPID_BIN", os.path.join(os.path.dirname(__file__), "../../target/debug/rapid-rs"))
    data = tempfile.mkdtemp(prefix="rapid-sdk-")
    env = dict(os.environ, RAPID_ADMIN_CLIENT_ID=ADMIN_ID, RAPID_ADMIN_CLIENT_SECRET=ADMIN_SECRET,
               ALLOWED_EMAIL_DOMAINS="example.com", RUST_LOG="warn")
    proc = subprocess.Popen([binary, "serve", "--bind", "127.0.0.1:0", "--data-dir", data],
                            stdout=subprocess.PIPE, env=env, text=True)
    line = proc.stdout.readline()
    assert line.startswith("listening on "), f"server did not start: {line!r}"
    url = line.split("listening on ", 1)[1].strip() + "/api"
    os.environ.update(RAPID_URL=url, RAPID_CLIENT_ID=ADMIN_ID, RAPID_CLIENT_SECRET=ADMIN_SECRET)
    yield url
    proc.send_signal(signal.SIGTERM)
    proc.wait(timeout=30)
