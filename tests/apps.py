"""Real applications on a scratch file system, for capturing their block I/O (issue 22, reference workloads).

`scratch_fs` makes an ext4 file system on a loop device of its own (backing file in /dev/shm), mounts it on a
temporary directory and, whatever happens, unmounts it, detaches the loop device and deletes the backing file. It
never touches an existing device. On it run:
- `postgres`: a private PostgreSQL cluster (initdb as the `postgres` user, no TCP, socket in a private directory),
  always stopped afterwards; `pgbench` drives it (TPC-B-like transactions).
- `small_file_storm`: an fs_mark-like metadata storm: small files created, written, fsync'ed, renamed and deleted.
Used by tests/test_apps_capture.py and bench/capture_apps.py (which makes the files in src/ssdpts/workloads/).
"""

from __future__ import annotations

import itertools
import math
import os
import random
import shutil
import subprocess
import tempfile
import threading
import time
import uuid
from collections.abc import Callable
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass
from pathlib import Path

from pgserver import AS_POSTGRES, PgServer, pg_server, pg_tool, server_missing

SHM = Path("/dev/shm")
# The shipped reference workloads (package data; the rwsw test finds them by name: `workload = "pgbench"`).
WORKLOADS_DIR = Path(__file__).resolve().parents[1] / "src" / "ssdpts" / "workloads"
WORKLOAD_SUFFIX = ".workload.json"
@dataclass(frozen=True)
class ScratchFs:
    device: str                  # the loop device (/dev/loopN)
    mountpoint: Path


def _run(*cmd: str, **kw) -> subprocess.CompletedProcess:
    return subprocess.run(cmd, check=True, capture_output=True, text=True, **kw)


@contextmanager
def scratch_fs(size: int = 256 * 2**20):
    """A fresh ext4 on a loop device of its own, mounted on a temporary directory; all of it removed afterwards."""
    backing = (SHM if SHM.is_dir() else Path(tempfile.gettempdir())) / f"ssdpts-apps-{uuid.uuid4().hex[:8]}.img"
    mountpoint = Path(tempfile.mkdtemp(prefix="ssdpts-apps-"))
    device = ""
    try:
        with open(backing, "wb") as f:
            f.truncate(size)
        device = _run("losetup", "--direct-io=on", "-f", "--show", str(backing)).stdout.strip()
        # 4 KiB blocks as on any real-size file system (mke2fs picks 1 KiB below 512 MiB); lazy_itable_init and
        # lazy_journal_init=0: no ext4lazyinit thread writing in the background of the capture.
        _run("mkfs.ext4", "-q", "-F", "-b", "4096", "-E", "lazy_itable_init=0,lazy_journal_init=0", device)
        _run("mount", device, str(mountpoint))
        mountpoint.chmod(0o755)
        yield ScratchFs(device, mountpoint)
    finally:
        if device:
            subprocess.run(["umount", str(mountpoint)], capture_output=True)
            subprocess.run(["losetup", "-d", device], capture_output=True)
        backing.unlink(missing_ok=True)
        shutil.rmtree(mountpoint, ignore_errors=True)


def scratch_fs_missing() -> str | None:
    """Why `scratch_fs` cannot work here (one line), or None."""
    if os.geteuid() != 0:
        return "needs root (loop device, mount)"
    return next((f"{tool} is not installed" for tool in ("losetup", "mkfs.ext4") if not shutil.which(tool)), None)


def postgres_missing() -> str | None:
    """Why PostgreSQL cannot run here for a capture (one line), or None."""
    if reason := scratch_fs_missing() or server_missing():
        return reason
    return None if pg_tool("pgbench") else "pgbench is not installed (apt-get install postgresql-contrib)"


class PgCluster(PgServer):
    """The capture's server, with pgbench."""

    def _pgbench_args(self, *args: str) -> list[str]:
        return ["-h", str(self.socket_dir), "-p", str(self.port), *args, "postgres"]

    def pgbench(self, *args: str, timeout: float = 600) -> subprocess.CompletedProcess:
        return self.as_postgres("pgbench", *self._pgbench_args(*args), timeout=timeout)

    def pgbench_process(self, *args: str) -> subprocess.Popen:
        return subprocess.Popen([pg_tool("pgbench") or "pgbench", *self._pgbench_args(*args)], **AS_POSTGRES,
                                cwd=self.socket_dir, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


@contextmanager
def postgres(fs: ScratchFs, port: int = 5432, options: str = ""):
    """A private PostgreSQL cluster with its data on `fs`: no TCP listener, its socket in a directory of its own
    (so it never meets another server on this machine), stopped (fast) afterwards, also on failure."""
    with pg_server(fs.mountpoint, port, options) as server:
        yield PgCluster(server.datadir, server.socket_dir, server.port, server.options)


def small_file_storm(root: Path, stop: threading.Event, seed: int = 22, rounds_per_s: float = 4) -> int:
    """fs_mark-like: in rounds, create small files (1-64 KiB, sizes skewed small) in a few directories, fsync each,
    rename a quarter of them, delete half and fsync the directories, until `stop` is set. Returns the files created.

    It rests 1/`rounds_per_s` s before each round: on a RAM-backed loop device an fsync costs microseconds, and
    a storm at full speed issues more block requests than a tracefs capture can read on a busy 2-core machine."""
    rng = random.Random(seed)
    dirs = [root / f"d{i}" for i in range(8)]
    for d in dirs:
        d.mkdir(parents=True, exist_ok=True)
    created, live = 0, []
    while not stop.wait(1 / rounds_per_s):
        for _ in range(64):
            path = rng.choice(dirs) / f"f{created}"
            size = min(64 * 1024, int(rng.expovariate(1 / 6000)) + 1024)
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
            try:
                os.write(fd, rng.randbytes(size))
                os.fsync(fd)
            finally:
                os.close(fd)
            live.append(path)
            created += 1
        rng.shuffle(live)
        for i, path in enumerate(live[: len(live) // 4]):
            renamed = path.with_name(path.name + "r")
            path.rename(renamed)
            live[i] = renamed
        for path in live[len(live) // 2:]:
            path.unlink()
        del live[len(live) // 2:]
        for d in dirs:                      # the directory entries too (fs_mark's fsync of the directory)
            fd = os.open(d, os.O_RDONLY)
            try:
                os.fsync(fd)
            finally:
                os.close(fd)
    return created


def pgbench_load(cluster: PgCluster, stop: threading.Event, clients: tuple[int, ...] = (4,),
                 phase_s: float = 3600) -> None:
    """pgbench (TPC-B-like) until `stop` is set: `phase_s` seconds with each client count of `clients` in turn."""
    for n in itertools.cycle(clients):
        proc = cluster.pgbench_process("-c", str(n), "-j", str(min(n, 4)), "-T", str(math.ceil(phase_s)))
        try:
            if stop.wait(phase_s):
                return
        finally:
            proc.terminate()
            proc.wait(timeout=60)


@contextmanager
def running(load, *args, **kw):
    """Runs `load(*args, stop=EVENT, **kw)` in a thread for the duration of the block; stops and joins it after,
    and raises what it raised."""
    stop = threading.Event()
    failure: list[BaseException] = []

    def body():
        try:
            load(*args, stop=stop, **kw)
        except BaseException as e:  # noqa: BLE001 - re-raised in the caller's thread
            failure.append(e)

    thread = threading.Thread(target=body, name=f"app-{getattr(load, '__name__', 'load')}", daemon=True)
    thread.start()
    try:
        yield
    finally:
        stop.set()
        thread.join()
    if failure:
        raise failure[0]


PGBENCH_SCALE = 8                     # ~120 MiB of tables: a little less than the 128 MiB shared_buffers default
PGBENCH_CLIENTS = (1, 4, 16)          # one phase each, in turn: the captured steps change in queue depth
WARMUP_S = 2.0                        # the application runs this long before the capture starts


@contextmanager
def _pgbench_busy(fs: ScratchFs, duration_s: float):
    # checkpoint_timeout=30s (the minimum): checkpoints write the 8 KiB data pages within a short capture.
    with postgres(fs, options="-c checkpoint_timeout=30s") as pg:
        pg.pgbench("-i", "-s", str(PGBENCH_SCALE), "-q")
        with running(pgbench_load, pg, clients=PGBENCH_CLIENTS, phase_s=duration_s / len(PGBENCH_CLIENTS)):
            yield


@contextmanager
def _small_files_busy(fs: ScratchFs, duration_s: float):
    with running(small_file_storm, fs.mountpoint / "storm"):
        yield


@dataclass(frozen=True)
class App:
    name: str
    busy: Callable[[ScratchFs, float], AbstractContextManager]   # the application working during the block
    missing: Callable[[], str | None]                              # why it cannot run here, or None
    fs_size: int
    note: str


APPS = {app.name: app for app in (
    App("pgbench", _pgbench_busy, postgres_missing, 512 * 2**20,
        f"PostgreSQL 15 pgbench (TPC-B-like, scale {PGBENCH_SCALE}, clients {'/'.join(map(str, PGBENCH_CLIENTS))} "
        "in equal phases, checkpoint_timeout=30s, other settings default) on a fresh ext4 on a 512 MiB loop device; "
        "tables fit in RAM, so the device sees writes (WAL, checkpoints, ext4 journal) and almost no reads"),
    App("small-files", _small_files_busy, scratch_fs_missing, 256 * 2**20,
        "fs_mark-like metadata storm (tests/apps.py small_file_storm): small files (1-64 KiB, most under 8 KiB) "
        "created with fsync each, a quarter renamed, half deleted, directories fsync'ed, in rounds of 64, one "
        "thread, 0.25 s of rest before each round, on a fresh ext4 on a 256 MiB loop device"),
)}


def capture_app(name: str, duration_s: int, step_s: int, out: Path, recipe: str):
    """Runs application `name` on a scratch file system and `ssdpts capture`s its loop device for `duration_s`;
    writes the workload file `out` (with `recipe` and the application's note as its source) and returns it."""
    import json
    import sys

    from ssdpts.capture.model import load

    app = APPS[name]
    with scratch_fs(app.fs_size) as fs, app.busy(fs, duration_s + WARMUP_S):
        time.sleep(WARMUP_S)
        _run(sys.executable, "-m", "ssdpts", "capture", fs.device, "--duration", f"{duration_s}s",
             "--step", f"{step_s}s", "--out", str(out), "--force", "--quiet", timeout=duration_s + 120)
    capture = load(out)
    capture.source.command = recipe
    capture.source.note = f"{app.note}. {capture.source.note}" if capture.source.note else app.note
    out.write_text(json.dumps(capture.to_json(), indent=1) + "\n")
    return capture
