"""Fixtures: real block devices (loop with direct I/O on tmpfs, zram), always detached afterwards."""

from __future__ import annotations

import contextlib
import os
import resource
import shutil
import signal
import subprocess
import sys
import uuid
from pathlib import Path

import pytest

HERE = Path(__file__).parent
TINY = HERE / "profiles" / "tiny.toml"
TINY_WRITES = str(HERE / "profiles" / "tiny-writes.toml")   # tiny, latency's write cell only
SHM = Path("/dev/shm")



# --- where the suite's CPU goes: `pytest --cpu-per-file N` (make test prints it) ---------------------------------
# Each test phase's CPU (user + system) of its pytest process and of the processes it waited for (getrusage
# RUSAGE_SELF + RUSAGE_CHILDREN): ssdpts and fio started by a test count, servers that outlive it (PostgreSQL,
# Chromium, Prometheus) and the kernel's loop-device threads do not. With pytest-xdist each worker measures its
# own tests and the figure travels in the report's user_properties, so the controller adds them up per file.

def pytest_addoption(parser):
    parser.addoption("--cpu-per-file", type=int, default=0, metavar="N",
                     help="print the N test files that took the most CPU (their processes and the ones they waited for)")


def _cpu_s() -> float:
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item, nextitem):
    item._cpu_since = _cpu_s()
    yield


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    now = _cpu_s()
    outcome.get_result().user_properties.append(("cpu_s", now - item._cpu_since))   # this phase's (setup, call, teardown)
    item._cpu_since = now


_CPU_PER_FILE: dict[str, float] = {}


def pytest_runtest_logreport(report):
    for key, value in report.user_properties:
        if key == "cpu_s":
            path = report.nodeid.split("::")[0]
            _CPU_PER_FILE[path] = _CPU_PER_FILE.get(path, 0.0) + value


def pytest_terminal_summary(terminalreporter, config):
    n = config.getoption("--cpu-per-file")
    if not n or not _CPU_PER_FILE:
        return
    total = sum(_CPU_PER_FILE.values())
    terminalreporter.section(f"CPU per test file (top {n} of {len(_CPU_PER_FILE)}; {total:,.0f} s in all)")
    for path, seconds in sorted(_CPU_PER_FILE.items(), key=lambda kv: -kv[1])[:n]:
        terminalreporter.write_line(f"{seconds:8.1f} s  {seconds / total:5.1%}  {path}")


def _can_make_devices() -> str | None:
    if os.geteuid() != 0:
        return "needs root to create loop/zram devices"
    if not shutil.which("losetup"):
        return "losetup (util-linux) is not installed"
    if not shutil.which("fio"):
        return "fio is not installed"
    return None


requires_devices = pytest.mark.skipif(_can_make_devices() is not None, reason=_can_make_devices() or "")


@pytest.fixture(autouse=True, scope="module")
def _no_end_report(request):
    """A file marked `no_end_report` runs ssdpts with SSDPTS_REPORT=0: its runs skip the end-of-run HTML report
    (about 1-3 s of plotting each, a fifth of the suite's CPU), because the file reads no report or writes the
    one it checks with `ssdpts report`. Module scope, so the file's module fixtures' runs skip it too."""
    if request.node.get_closest_marker("no_end_report") is None:
        yield
        return
    before = os.environ.get("SSDPTS_REPORT")
    os.environ["SSDPTS_REPORT"] = "0"
    try:
        yield
    finally:
        if before is None:
            os.environ.pop("SSDPTS_REPORT", None)
        else:
            os.environ["SSDPTS_REPORT"] = before


SWAP_HEADER = 4096     # a swap area's first page: mkswap's header, which the kernel never rewrites while active


def active_swap_areas() -> set[str]:
    """Real paths of the active swap areas (/proc/swaps escapes a space as \\040)."""
    try:
        lines = Path("/proc/swaps").read_text().splitlines()[1:]
    except OSError:
        return set()
    return {os.path.realpath(l.split()[0].replace("\\040", " ")) for l in lines if l.split()}


def digest(path: str | Path) -> str:
    """sha256 of a file's or a device's bytes: what a refusal must leave unchanged. Of an active swap area only
    its header: the kernel itself writes swapped-out pages to the rest at any time (seen under memory pressure),
    while a run that wrote to it would have started at offset 0."""
    import hashlib

    limit = SWAP_HEADER if os.path.realpath(path) in active_swap_areas() else None
    h = hashlib.sha256()
    with open(path, "rb") as f:
        if limit is not None:
            h.update(f.read(limit))
        else:
            for chunk in iter(lambda: f.read(1 << 20), b""):
                h.update(chunk)
    return h.hexdigest()


def sigint_as_at_a_terminal() -> None:
    """preexec_fn for a child a test sends SIGINT (Ctrl-C) to: a background job of a shell (as `make test` runs
    tests/test_real_shape.py, or a CI script may run everything) starts with SIGINT ignored, and the child would
    inherit that (Python then installs no Ctrl-C handler)."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


class LoopFactory:
    def __init__(self):
        self.devices: list[tuple[str, Path]] = []

    def __call__(self, size: int = 64 * 2**20) -> str:
        backing = (SHM if SHM.is_dir() else Path("/tmp")) / f"ssdpts-test-{uuid.uuid4().hex[:8]}.img"
        with open(backing, "wb") as f:
            f.truncate(size)
        dev = subprocess.check_output(["losetup", "--direct-io=on", "-f", "--show", str(backing)], text=True).strip()
        self.devices.append((dev, backing))
        return dev

    def cleanup(self):
        for dev, backing in reversed(self.devices):
            subprocess.run(["umount", dev], capture_output=True)
            subprocess.run(["swapoff", dev], capture_output=True)
            subprocess.run(["losetup", "-d", dev], capture_output=True)
            backing.unlink(missing_ok=True)


@pytest.fixture
def loop_factory():
    f = LoopFactory()
    try:
        yield f
    finally:
        f.cleanup()


@pytest.fixture
def loopdev(loop_factory) -> str:
    if _can_make_devices():
        pytest.skip(_can_make_devices())
    return loop_factory(64 * 2**20)


ZRAM_CONTROL = Path("/sys/class/zram-control")


@contextlib.contextmanager
def _own_zram():
    """A 64 MiB zram device of the caller's own (hot_add), reset and removed afterwards: tests run beside each
    other (make test runs the suite in several processes), so none may share /dev/zram0."""
    index = int((ZRAM_CONTROL / "hot_add").read_text())
    node = Path(f"/sys/block/zram{index}")
    try:
        (node / "disksize").write_text(str(64 * 2**20))
        yield f"/dev/zram{index}"
    finally:
        (node / "reset").write_text("1")
        (ZRAM_CONTROL / "hot_remove").write_text(str(index))


@pytest.fixture
def zram() -> str:
    """A 64 MiB zram device: the test's own where the kernel can add one, else /dev/zram0 when it is free."""
    if _can_make_devices():
        pytest.skip(_can_make_devices())
    if (ZRAM_CONTROL / "hot_add").exists():
        with _own_zram() as device:
            yield device
        return
    node = Path("/sys/block/zram0")
    if not node.exists():
        pytest.skip("no zram0 on this kernel")
    if (node / "disksize").read_text().strip() != "0":
        pytest.skip("/dev/zram0 is already configured by someone else")
    (node / "disksize").write_text(str(64 * 2**20))
    try:
        yield "/dev/zram0"
    finally:
        (node / "reset").write_text("1")


@pytest.fixture
def zram_own() -> str:
    """A 64 MiB zram device of this test's own (hot_add)."""
    reason = _can_make_devices() or (None if (ZRAM_CONTROL / "hot_add").exists()
                                     else "no zram hot_add on this kernel (modprobe zram)")
    if reason:
        pytest.skip(reason)
    with _own_zram() as device:
        yield device


@contextlib.contextmanager
def tmpfs(mnt: Path, size: str):
    """A tmpfs of the test's own at `mnt` (created), of `size` (e.g. "16m"); always unmounted (lazily: a
    process the test stopped may still hold a file there)."""
    if os.geteuid() != 0:
        pytest.skip("mounting a file system needs root")
    mnt.mkdir()
    subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "ssdpts-test", str(mnt)], check=True)
    try:
        yield mnt
    finally:
        subprocess.run(["umount", "-l", str(mnt)], capture_output=True)


@pytest.fixture
def read_only_fs(tmp_path) -> Path:
    """A small tmpfs with an existing file, remounted read-only; always unmounted."""
    with tmpfs(tmp_path / "ro", "4m") as mnt:
        (mnt / "old.img").write_bytes(os.urandom(1 << 20))
        subprocess.run(["mount", "-o", "remount,ro", str(mnt)], check=True)
        yield mnt


@pytest.fixture
def results(tmp_path) -> Path:
    return tmp_path / "results"


@pytest.fixture
def tiny() -> str:
    return str(TINY)


def tiny_with(path: Path, tables: str) -> str:
    """A profile at `path`: tests/profiles/tiny.toml with `tables` (TOML) added; its path."""
    path.write_text(f'[profile]\nextends = "{TINY}"\n{tables}')
    return str(path)


def ssdpts(*args: str, check: bool = True, **kw) -> subprocess.CompletedProcess:
    """Run the real CLI in a subprocess, as a user would."""
    import sys

    p = subprocess.run([sys.executable, "-m", "ssdpts", *args], capture_output=True, text=True, timeout=600, **kw)
    if check and p.returncode != 0:
        raise AssertionError(f"ssdpts {' '.join(args)} failed ({p.returncode}):\n{p.stdout}\n{p.stderr}")
    return p


def ssdpts_here(*args: str, check: bool = True):
    """Run the CLI in this process (click's CliRunner): for tests that only read a command's output or files, not
    its process (exit status, stderr, signals, startup); saves a Python start and a matplotlib import per call.
    Returns click's Result (.exit_code, .stdout, .stderr)."""
    from click.testing import CliRunner

    from ssdpts import cli

    # the command installs its interrupt handlers and unraisable hook: put this process's back
    handlers = {s: signal.getsignal(s) for s in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)}
    hook = sys.unraisablehook
    try:
        r = CliRunner().invoke(cli.main, [str(a) for a in args])
    finally:
        for s, h in handlers.items():
            signal.signal(s, h)
        sys.unraisablehook = hook
    if check and r.exit_code != 0:
        raise AssertionError(f"ssdpts {' '.join(map(str, args))} failed ({r.exit_code}):\n{r.output}") from r.exception
    return r


def assert_no_stall(results: Path, run_id: str) -> None:
    """No round of the run stalled: a stall (fio killed HANG_GRACE_S after a cell's due end, the round run
    again) ends with exit 0 and a completed run, so only the recorded `fio-stall` deviations show it."""
    import json

    doc = json.loads(ssdpts("show", run_id, "--json", "--results", str(results)).stdout)
    stalls = [d["evidence"] for d in doc["conformance"]["deviations"] if d["rule"] == "fio-stall"]
    assert not stalls, f"run {run_id}: fio stalled {len(stalls)} time(s): " + "; ".join(stalls)


def run_completed(target: str, results: Path, profile: str, tests: str, *extra: str):
    """`ssdpts run` through the CLI; returns (run id, Store) and checks the run completed without a stall."""
    from ssdpts.store import Store

    p = ssdpts("run", target, "--profile", profile, "--tests", tests, "--destroy-data", "--results", str(results),
               "-q", *extra)
    rid = p.stdout.strip().splitlines()[-1]
    store = Store.in_dir(results)
    assert store.run(rid)["status"] == "completed", store.run(rid)
    assert_no_stall(results, rid)
    return rid, store


def wait_for_rounds(db: Path, test: str, n: int, timeout: float = 120.0) -> str | None:
    """Poll the results database until the first run has `n` committed rounds of `test`; its id."""
    import time

    from ssdpts.store import Store

    deadline = time.time() + timeout
    while time.time() < deadline:
        if db.exists():
            s = Store(db)
            try:
                runs = s.runs()
                if runs and len(s.rounds(runs[0]["id"], test, with_cells=False)) >= n:
                    return runs[0]["id"]
            finally:
                s.close()
        time.sleep(0.05)
    return None
