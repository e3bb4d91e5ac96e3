"""The two processes of a crash test: crashfs mounted over the data folder, and rapid-rs on it.

A power cut is: the server killed at once (SIGKILL), then crashfs ended (SIGKILL: every unsynced
change lost; SIGUSR1: the same but the last unsynced write torn), the dead mount detached, and
crashfs mounted again on what survived in its backing folder.
"""

import os
import signal
import subprocess
import threading
import time

ADMIN_ID = "crashadmin"
ADMIN_SECRET = "crash-admin-secret-0123456789abcdef"


def _first_line(proc, prefix, timeout, what):
    """Waits for a line starting with `prefix` on proc's stdout; returns the rest of it."""
    found = {}

    def read():
        for line in proc.stdout:
            if line.startswith(prefix):
                found["line"] = line[len(prefix):].strip()
                return

    t = threading.Thread(target=read, daemon=True)
    t.start()
    t.join(timeout)
    if "line" not in found:
        proc.kill()
        raise RuntimeError(f"{what} did not start within {timeout}s (exit code {proc.poll()})")
    return found["line"]


class CrashFs:
    def __init__(self, binary, backing, mountpoint, log_path, seed):
        self.binary, self.backing, self.mountpoint = binary, backing, mountpoint
        self.log_path, self.seed = log_path, seed
        self.proc = None
        self.mounts = 0
        os.makedirs(backing, exist_ok=True)
        os.makedirs(mountpoint, exist_ok=True)

    def mount(self):
        self.mounts += 1
        log = open(self.log_path, "a")
        self.proc = subprocess.Popen(
            [self.binary, self.backing, self.mountpoint, "--seed", str(self.seed + self.mounts)],
            stdout=subprocess.PIPE, stderr=log, stdin=subprocess.DEVNULL, text=True)
        log.close()
        _first_line(self.proc, "crashfs: mounted", 30, "crashfs")
        if not os.path.ismount(self.mountpoint):
            raise RuntimeError(f"{self.mountpoint} is not a mount point after crashfs started")

    def power_cut(self, tear):
        """Ends crashfs as a power cut would, detaches the dead mount."""
        self.proc.send_signal(signal.SIGUSR1 if tear else signal.SIGKILL)
        self.proc.wait(30)
        self.proc = None
        self.detach()

    def detach(self):
        subprocess.run(["umount", "-l", self.mountpoint], check=False,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)

    def stop(self):
        if self.proc is not None:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
            self.proc = None
        if os.path.ismount(self.mountpoint):
            self.detach()


class Server:
    def __init__(self, binary, data_dir, log_path, extra_env=None):
        self.binary, self.data_dir, self.log_path = binary, data_dir, log_path
        self.extra_env = extra_env or {}
        self.proc = None
        self.base = None

    def start(self):
        env = dict(os.environ)
        env.update({"RAPID_ADMIN_CLIENT_ID": ADMIN_ID, "RAPID_ADMIN_CLIENT_SECRET": ADMIN_SECRET,
                    "RUST_LOG": "warn"})
        env.update(self.extra_env)
        log = open(self.log_path, "a")
        log.write(f"--- start at {time.strftime('%H:%M:%S')}\n")
        log.flush()
        self.proc = subprocess.Popen(
            [self.binary, "serve", "--bind", "127.0.0.1:0", "--workers", "2",
             "--data-dir", self.data_dir],
            stdout=subprocess.PIPE, stderr=log, stdin=subprocess.DEVNULL, text=True, env=env)
        log.close()
        addr = _first_line(self.proc, "listening on ", 120, "rapid-rs")
        self.base = addr.rstrip("/") + "/api"

    def kill(self):
        """SIGKILL: the process stops between two instructions, as in a power cut."""
        self.proc.kill()
        self.proc.wait(30)
        self.proc = None

    def stop(self):
        if self.proc is None:
            return
        self.proc.terminate()
        try:
            self.proc.wait(60)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
            raise RuntimeError("rapid-rs did not stop within 60s of SIGTERM")
        finally:
            self.proc = None


def fuse_unavailable(crashfs_binary, scratch):
    """None when crashfs can mount here, else the reason it cannot."""
    if not os.path.exists("/dev/fuse"):
        return "/dev/fuse does not exist"
    fs = CrashFs(crashfs_binary, os.path.join(scratch, "probe-backing"),
                 os.path.join(scratch, "probe-mnt"), os.path.join(scratch, "probe.log"), 1)
    try:
        fs.mount()
        with open(os.path.join(fs.mountpoint, "probe"), "w") as f:
            f.write("ok")
    except (RuntimeError, OSError) as e:
        with open(fs.log_path) as log:
            return f"{e}: {log.read().strip()}"
    finally:
        fs.stop()
    return None
