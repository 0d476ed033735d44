"""No traceback, no debris: bad input files and numbers are one line, an unexpected error is one line and a
traceback file (exit 70), a run whose process is gone shows as interrupted, `delete` removes runs and their
files, SIGTERM/SIGHUP stop a run like Ctrl-C."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from conftest import requires_devices, ssdpts, wait_for_rounds
from ssdpts import cli, runstatus
from ssdpts.runner import testrun
from ssdpts.errors import SsdptsError
from ssdpts.owner import RunOwner
from ssdpts.pts import registry
from ssdpts.store import Store
from test_resume import _holders

pytestmark = pytest.mark.no_end_report    # reads no end-of-run report (tests/conftest.py)

BINARY = b"\x7fELF\x02\x01\x01\x00\x00\x00" * 20
NOT_UTF8 = "débit = 5\n".encode("latin-1")


def _one_line_error(p, message: str, code: int = 2) -> None:
    lines = p.stderr.strip().splitlines()
    assert p.returncode == code, (p.returncode, p.stderr)
    assert "Traceback" not in p.stderr + p.stdout, p.stderr
    assert len(lines) == 1 and lines[0].startswith("ssdpts: error:") and message in lines[0], p.stderr


def _new_run(results: Path, owner: RunOwner | None = None, tests: tuple[str, ...] = ("iops",)) -> str:
    store = Store.in_dir(results)
    try:
        return store.create_run(target_spec="/dev/x", target={"kind": "block", "size_bytes": 2**30, "info": {}},
                                host={}, profile_name="p", profile={"profile": {"name": "p"}}, tests=list(tests),
                                options={}, engine="fio", owner=owner)
    finally:
        store.close()


@pytest.fixture
def files(tmp_path) -> dict[str, Path]:
    out = {}
    for name, content in {"binary": BINARY, "latin1": NOT_UTF8, "nan.toml": b"[sequential]\nread_mb_s = nan\n",
                          "neg.toml": b"[sequential]\nread_mb_s = -5.0\n", "bad.toml": b"[sequential\n",
                          "nan.json": b'{"nvme_smart_health_information_log": {"data_units_written": NaN}}',
                          "bad.json": b'{"a": ', "nan.log": b"100, NaN, 1, 131072, 0\n200, 5000, 1, 131072, 0\n",
                          "back.log": b"100, 5000, 1, 131072, 0\n50, 5000, 1, 131072, 0\n"}.items():
        (tmp_path / name).write_bytes(content)
        out[name] = tmp_path / name
    out["dir"] = tmp_path
    out["missing"] = tmp_path / "no-such-file"
    return out


CASES = [
    # (command building function, file key, message)
    ("claims", "binary", "is a binary file"), ("claims", "latin1", "is not UTF-8"), ("claims", "dir", "is a directory"),
    ("claims", "missing", "does not exist"), ("claims", "nan.toml", "not a finite number"),
    ("claims", "neg.toml", "must be a positive number"), ("claims", "bad.toml", "is not valid TOML"),
    ("bwlog", "binary", "is a binary file"), ("bwlog", "latin1", "is not UTF-8"), ("bwlog", "dir", "is a directory"),
    ("bwlog", "missing", "does not exist"), ("bwlog", "nan.log", "finite numbers"),
    ("bwlog", "back.log", "time goes backwards"),
    ("snapshot", "binary", "is a binary file"), ("snapshot", "dir", "is a directory"),
    ("snapshot", "missing", "does not exist"), ("snapshot", "nan.json", "not a finite number"),
    ("snapshot", "bad.json", "is not valid JSON"),
    ("hosts", "binary", "is a binary file"), ("hosts", "dir", "is a directory"), ("hosts", "nan.toml", "finite"),
    ("sim", "binary", "is a binary file"), ("sim", "latin1", "is not UTF-8"), ("sim", "bad.toml", "not valid TOML"),
]


@pytest.mark.parametrize("kind, key, message", CASES)
def test_bad_input_files_are_one_line(tmp_path, files, kind, key, message):
    results = tmp_path / "results"
    f = str(files[key])
    if kind == "claims":
        rid = _new_run(results)
        args = ["report", rid, "--claimed", f, "--results", str(results)]
    elif kind == "bwlog":
        args = ["analyze", "slc-cache", "--bw-log", f]
    elif kind == "snapshot":
        args = ["analyze", "endurance", f, f]
    elif kind == "hosts":
        args = ["run", "/dev/nvme0n1", "--hosts", f, "--results", str(results)]
    else:
        args = ["run", f"sim:{f}", "--results", str(results)]
    before = {p: p.read_bytes() for p in tmp_path.iterdir() if p.is_file()}
    _one_line_error(ssdpts(*args, check=False), message)
    assert {p: p.read_bytes() for p in tmp_path.iterdir() if p.is_file()} == before   # input files untouched
    if kind == "claims":
        assert not (results / "reports").exists()
    else:
        assert not results.exists()      # nothing created


@pytest.mark.parametrize("args, message", [
    (["steady-state", "1", "2", "nan", "3"], "finite"),
    (["steady-state", "1", "2", "inf", "3"], "finite"),
    (["steady-state", "1", "2", "3", "--max-range", "nan"], "'nan' is not a finite number"),
    (["steady-state", "1", "2", "3", "--max-slope", "1e999"], "not a finite number"),
    (["analyze", "slc-cache", "--bw-log", "x.log", "--min-drop", "nan"], "not a finite number"),
    (["analyze", "slc-cache", "--bw-log", "x.log", "--bin", "-inf"], "not a finite number"),
    (["endurance", "/tmp/ssdpts-x.img", "--size", "1M", "--rated-tbw", "nan"], "not a finite number"),
    (["analyze", "endurance", "a.json", "b.json", "--dwpd", "inf"], "not a finite number"),
])
def test_non_finite_numbers_on_the_command_line(tmp_path, args, message):
    p = ssdpts(*args, "--results", str(tmp_path / "r"), check=False) if args[0] == "endurance" else \
        ssdpts(*args, check=False, cwd=tmp_path)
    _one_line_error(p, message)
    assert not (tmp_path / "r").exists() and not Path("/tmp/ssdpts-x.img").exists()


def test_ambiguous_and_unknown_run_ids(tmp_path):
    results = tmp_path / "results"
    a, b = _new_run(results), _new_run(results)
    p = ssdpts("show", "-", "--results", str(results), check=False)
    _one_line_error(p, "is ambiguous: it matches 2 runs")
    assert a in p.stderr and b in p.stderr
    for given in ("nope", "%", "_"):          # SQL wildcards are characters, not patterns
        _one_line_error(ssdpts("show", given, "--results", str(results), check=False), f"no run '{given}'")
    assert Store.in_dir(results).run(a[-7:])["id"] == a          # a unique part of the id is enough


# --- a run whose process is gone --------------------------------------------------------------------

def _dead_pid() -> int:
    p = subprocess.Popen(["true"])
    p.wait()
    return p.pid


def test_a_running_run_whose_process_is_gone_is_interrupted(tmp_path):
    results = tmp_path / "results"
    me = RunOwner.current()
    gone = _new_run(results, RunOwner(pid=_dead_pid(), host=me.host, boot_id=me.boot_id, start_ticks=1))
    reused = _new_run(results, RunOwner(pid=me.pid, host=me.host, boot_id=me.boot_id, start_ticks=me.start_ticks + 1))
    rebooted = _new_run(results, RunOwner(pid=me.pid, host=me.host, boot_id="another-boot", start_ticks=1))
    live = _new_run(results, me)
    elsewhere = _new_run(results, RunOwner(pid=1, host=socket.gethostname() + "-other", boot_id="x", start_ticks=1))
    out = ssdpts("list", "--results", str(results)).stdout
    status = {line.split()[0]: line.split()[1] for line in out.splitlines()[1:]}
    assert status == {gone: "interrupted", reused: "interrupted", rebooted: "interrupted", live: "running",
                      elsewhere: "running"}
    store = Store.in_dir(results)
    assert "is gone" in store.run(gone)["message"]
    assert "another process" in store.run(reused)["message"]
    assert "reboot" in store.run(rebooted)["message"]
    assert store.tests(gone)[0]["status"] == "pending"
    # a live run (this very process) is neither resumed nor deleted under its feet
    for command in ("resume", "delete"):
        _one_line_error(ssdpts(command, live, "--yes", "--results", str(results), check=False) if command == "delete"
                        else ssdpts(command, live, "--results", str(results), check=False), "is still running")
    _one_line_error(ssdpts("delete", elsewhere, "--yes", "--results", str(results), check=False), "on host")
    assert store.run(live)["status"] == "running"


# --- delete -----------------------------------------------------------------------------------------

def _with_files(results: Path, rid: str) -> list[Path]:
    store = Store.in_dir(results)
    store.record_step(rid, "iops", "purge", "purge", {"method": "trim"})
    store.set_run_status(rid, "failed", "for the test")
    store.close()
    paths = [results / "logs" / f"{rid}.log", results / "reports" / rid / "report.html",
             results / "sim" / f"{rid}.123.000001.state"]
    for p in paths:
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text("x")
    return paths


def _rows(results: Path, rid: str) -> int:
    store = Store.in_dir(results)
    n = sum(store.db.execute(f"SELECT COUNT(*) FROM {t} WHERE run_id=?", (rid,)).fetchone()[0]
            for t in ("tests", "steps", "rounds"))
    return n + store.db.execute("SELECT COUNT(*) FROM runs WHERE id=?", (rid,)).fetchone()[0]


def test_delete_removes_rows_and_files_after_confirmation(tmp_path):
    results = tmp_path / "results"
    a, b, c = _new_run(results), _new_run(results), _new_run(results)
    fa, fb, fc = _with_files(results, a), _with_files(results, b), _with_files(results, c)
    Store.in_dir(results).set_run_status(c, "completed")
    p = subprocess.run([sys.executable, "-m", "ssdpts", "delete", a, "--results", str(results)], input="n\n",
                       capture_output=True, text=True)
    assert p.returncode == 1 and p.stderr.rstrip().endswith("ssdpts: error: nothing deleted (answer y, or add --yes)")
    assert _rows(results, a) > 1 and all(f.exists() for f in fa)
    p = subprocess.run([sys.executable, "-m", "ssdpts", "delete", a, "--results", str(results)], input="y\n",
                       capture_output=True, text=True)
    assert p.returncode == 0 and f"deleted {a}" in p.stdout, p.stderr
    assert _rows(results, a) == 0 and not any(f.exists() for f in fa) and not (results / "reports" / a).exists()
    assert all(f.exists() for f in fb + fc)
    p = ssdpts("delete", "--failed", "--yes", "--results", str(results))
    assert f"deleted {b}" in p.stdout and _rows(results, b) == 0 and not any(f.exists() for f in fb)
    assert _rows(results, c) > 1 and all(f.exists() for f in fc)      # completed: not a failed run
    assert ssdpts("delete", "--failed", "--yes", "--results", str(results)).stdout.strip() == "no failed runs"


# --- the last-resort handler --------------------------------------------------------------------------

def _invoke(args, monkeypatch, debug: bool = False):
    if debug:
        monkeypatch.setenv(cli.DEBUG_ENV, "1")
    else:
        monkeypatch.delenv(cli.DEBUG_ENV, raising=False)
    return CliRunner().invoke(cli.main, args)


def test_an_unexpected_error_is_one_line_and_a_traceback_file(tmp_path, monkeypatch):
    monkeypatch.setattr(runstatus, "settled", lambda *a: (_ for _ in ()).throw(RuntimeError("boom\nsecond line")))
    results = tmp_path / "results"
    _new_run(results)
    r = _invoke(["list", "--results", str(results)], monkeypatch)
    assert r.exit_code == cli.EX_SOFTWARE
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and "RuntimeError: boom second line" in lines[0] and "Traceback" not in r.stderr
    (log,) = (results / "logs").glob("error-*.log")
    assert str(log) in lines[0] and "Traceback" in log.read_text() and "boom" in log.read_text()
    r = _invoke(["list", "--results", str(results)], monkeypatch, debug=True)
    assert isinstance(r.exception, RuntimeError)          # developers get the exception itself


def test_an_unexpected_error_before_a_results_dir_exists_creates_none(tmp_path, monkeypatch):
    monkeypatch.setattr(registry, "tests", lambda: 1 / 0)
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    r = _invoke(["tests"], monkeypatch)
    assert r.exit_code == cli.EX_SOFTWARE and "ZeroDivisionError" in r.stderr
    (log,) = tmp_path.glob("ssdpts-error-*.log")
    assert "ZeroDivisionError" in log.read_text()


@pytest.mark.parametrize("error, code", [(SsdptsError("read-only file system; remount it"), 2),
                                         (OSError(30, "Read-only file system"), cli.EX_SOFTWARE)])
def test_a_run_failing_in_its_setup_leaves_no_run(tmp_path, monkeypatch, error, code):
    from ssdpts.targets.sim import SimTarget

    def fail(*a, **k):
        raise error
    monkeypatch.setattr(SimTarget, "attach_state", fail)
    results = tmp_path / "results"
    r = _invoke(["run", "sim:client", "--profile", "quick", "--tests", "iops", "--results", str(results), "-q"],
                monkeypatch)
    assert r.exit_code == code, r.stderr
    assert len(r.stderr.strip().splitlines()) == 1 and "Traceback" not in r.stderr
    store = Store.in_dir(results)
    assert store.runs() == [] and store.db.execute("SELECT COUNT(*) FROM tests").fetchone()[0] == 0
    assert not list((results / "logs").glob("2*.log"))            # no run log left either


def test_an_unexpected_error_in_a_run_marks_it_failed(tmp_path, monkeypatch):
    def health(store, run_id, test, when, target, progress):
        store.record_step(run_id, test, f"health:{when}", "health", {})
        raise KeyError("no-such-field")
    monkeypatch.setattr(testrun, "_health", health)
    results = tmp_path / "results"
    r = _invoke(["run", "sim:client", "--profile", "quick", "--tests", "iops", "--results", str(results), "-q"],
                monkeypatch)
    assert r.exit_code == cli.EX_SOFTWARE and "KeyError" in r.stderr and "Traceback" not in r.stderr
    (run,) = Store.in_dir(results).runs()
    assert run["status"] == "failed" and "KeyError" in run["message"]
    assert Store.in_dir(results).tests(run["id"])[0]["status"] == "failed"


# --- SIGTERM / SIGHUP ----------------------------------------------------------------------------------

@requires_devices
@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGHUP])
def test_sigterm_and_sighup_interrupt_like_ctrl_c(loopdev, results, tiny, tmp_path, sig):
    never_steady = tmp_path / "never.toml"
    never_steady.write_text(f'[profile]\nextends = "{tiny}"\n[steady_state]\nmax_range = 0.000001\nmax_rounds = 6\n')
    proc = subprocess.Popen([sys.executable, "-m", "ssdpts", "run", loopdev, "--profile", str(never_steady),
                             "--tests", "iops", "--destroy-data", "--results", str(results), "-q"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    rid = wait_for_rounds(results / "ssdpts.db", "iops", 2)
    if not rid:
        proc.kill()
        pytest.fail(f"the run never committed 2 rounds: {proc.communicate()}")
    os.kill(proc.pid, sig)
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 130, err
    assert "Traceback" not in err and f"ssdpts resume {rid}" in err, err
    time.sleep(0.2)
    assert not _holders(loopdev), f"processes still hold {loopdev}: {_holders(loopdev)}"
    store = Store.in_dir(results)
    run = store.run(rid)
    assert run["status"] == "interrupted" and run["owner"].pid == proc.pid
    assert run["message"] == f"interrupted by {signal.Signals(sig).name}"
    assert ssdpts("list", "--results", str(results)).stdout.count("interrupted") == 1
    out = ssdpts("resume", rid, "--results", str(results), "-q")
    assert out.stdout.strip().splitlines()[-1] == rid
    assert store.run(rid)["status"] == "completed"
    assert [r.round for r in store.rounds(rid, "iops", with_cells=False)] == list(range(1, 7))


# --- kill -9 of a parallel run whose fio forks its jobs ------------------------------------------------

def _fio_below(pid: int) -> set[int]:
    """fio processes below `pid` (fio's main processes and their forked job processes)."""
    from ssdpts.engines.fiotree import descendants

    return {p for p in descendants(pid) if _proc_field(p, "comm") == "fio"}


def _proc_field(pid: int, name: str) -> str:
    """`comm` or `ppid` of process `pid`, "" when it has ended."""
    try:
        if name == "comm":
            return Path(f"/proc/{pid}/comm").read_text().strip()
        return Path(f"/proc/{pid}/stat").read_text().rsplit(") ", 1)[1].split()[1]
    except (OSError, IndexError):
        return ""


def _alive(pid: int) -> bool:
    """Not ended (a killed process adopted by init may be a zombie for a moment: that one is ended)."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(") ", 1)[1][0] not in "ZX"
    except (OSError, IndexError):
        return False


def _writes(dev: str) -> int:
    """Writes completed on `dev`, as the block layer counts them."""
    return int(Path(f"/sys/block/{Path(dev).name}/stat").read_text().split()[4])


def _running_cell_of(fio_pids: set[int], ssdpts_pid: int, runtime: str, dev: str) -> bool:
    """A forked job process (a fio whose parent is fio) of a job file with cells of `runtime` has `dev` open:
    past its gate (a job still waiting there would end with ssdpts's gatekeeper anyway)."""
    holding = {int(h.split()[0]) for h in _holders(dev)}
    for p in fio_pids & holding:
        parent = _proc_field(p, "ppid")
        if parent in ("", str(ssdpts_pid)):
            continue
        try:
            job = Path(f"/proc/{p}/cmdline").read_text().split("\0")[-2]
            if f"runtime={runtime}" in Path(job).read_text():
                return True
        except (OSError, IndexError):
            continue
    return False


@requires_devices
def test_kill_9_of_a_parallel_loop_run_leaves_no_fio_writing(loop_factory, results, tiny, tmp_path):
    """Several drives with a loop device among them run fio with a process per job (thread=0), and those job
    processes outlive fio's main process (they call setsid(), out of its process group, and have no death
    signal): when ssdpts is killed with SIGKILL in the middle of a 10-minute cell, its reaper ends them all."""
    long_cells = tmp_path / "long.toml"
    long_cells.write_text(f'[profile]\nextends = "{tiny}"\n[tests.iops]\ncell_runtime = "10m"\n')
    a, b = loop_factory(), loop_factory()
    proc = subprocess.Popen([sys.executable, "-m", "ssdpts", "run", a, b, "--profile", str(long_cells),
                             "--tests", "iops", "--destroy-data", "--results", str(results), "-q"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    try:
        deadline = time.monotonic() + 300
        fio: set[int] = set()
        while not _running_cell_of(fio, proc.pid, "600000ms", a):   # past preconditioning, in a long cell
            assert proc.poll() is None and time.monotonic() < deadline, "the run never started its long cells"
            fio = _fio_below(proc.pid)
            time.sleep(0.05)
        before = _writes(a), _writes(b)
        while (_writes(a), _writes(b)) == before:   # the job processes really write
            assert time.monotonic() < deadline, "fio's job processes never wrote"
            time.sleep(0.05)
        fio |= _fio_below(proc.pid)
        proc.kill()
        proc.wait()
        # a few seconds, however loaded the machine (without the reaper they would write for 10 minutes)
        deadline = time.monotonic() + 30
        while alive := {str(p) for p in fio if _alive(p)} | set(_holders(a)) | set(_holders(b)):
            assert time.monotonic() < deadline, f"still running after ssdpts was killed: {sorted(alive)}"
            time.sleep(0.05)
        for dev in (a, b):   # nothing in flight and nothing holds the device: its write counter stands still
            while Path(f"/sys/block/{Path(dev).name}/inflight").read_text().split() != ["0", "0"]:
                assert time.monotonic() < deadline, f"{dev} never drained"
                time.sleep(0.05)
        settled = _writes(a), _writes(b)
        time.sleep(1)
        assert (_writes(a), _writes(b)) == settled
    finally:
        try:
            os.killpg(proc.pid, signal.SIGKILL)   # its helpers, if the test failed before killing it
        except ProcessLookupError:
            pass
        proc.wait()


# ssdpts's engine with its main thread held right after it started a fio process (what it does next, e.g.
# anything that starts fio's reaper, never runs): prints fio's pid, then waits to be killed
_HELD_AFTER_FIO_SPAWN = """
import subprocess, sys, time
from pathlib import Path
from ssdpts.engines.fio import FioEngine
from ssdpts.targets import open_target
from ssdpts.workload import Workload
from ssdpts.workload.ioengine import IoRequest

engine = FioEngine(io_request=IoRequest("libaio"), workdir=sys.argv[2])
started = subprocess.Popen

class HeldAfterFio(started):
    def __init__(self, args, *more, **kw):
        super().__init__(args, *more, **kw)
        if args[0] == engine.binary and args[-1].endswith("job.fio"):     # a round's fio, not a probe
            print(self.pid, flush=True)
            time.sleep(3600)

subprocess.Popen = HeldAfterFio
session = engine.session(open_target(sys.argv[1], probe=False))
assert not session.io.threads, session.io
session.submit([Workload("long", "randwrite", bs=4096, threads=2, iodepth=4, runtime_s=600)])
"""


@requires_devices
def test_kill_9_right_after_fio_started_leaves_no_fio_writing(loopdev, tmp_path):
    """The reaper is in place before fio starts: ssdpts SIGKILLed at the first moment after it started a fio
    with a process per job (libaio on a loop device: thread=0) leaves neither fio nor its job processes
    writing. The reaper used to be started just after fio; killed in between, fio wrote on for its 10 minutes."""
    proc = subprocess.Popen([sys.executable, "-c", _HELD_AFTER_FIO_SPAWN, loopdev, str(tmp_path)],
                            stdout=subprocess.PIPE, text=True, start_new_session=True)
    fio: set[int] = set()
    try:
        fio_pid = int(proc.stdout.readline())
        deadline = time.monotonic() + 120
        before = _writes(loopdev)
        while _writes(loopdev) == before:            # fio's job processes really write
            assert time.monotonic() < deadline and _alive(fio_pid), "fio's job processes never wrote"
            time.sleep(0.05)
        fio = {fio_pid} | _fio_below(fio_pid)
        assert len(fio) >= 3                         # fio and its two forked job processes
        proc.kill()
        proc.wait()
        deadline = time.monotonic() + 30            # a few seconds, however loaded (without a reaper: 10 minutes)
        while alive := {str(p) for p in fio if _alive(p)} | set(_holders(loopdev)):
            assert time.monotonic() < deadline, f"still running after ssdpts was killed: {sorted(alive)}"
            time.sleep(0.05)
        while Path(f"/sys/block/{Path(loopdev).name}/inflight").read_text().split() != ["0", "0"]:
            assert time.monotonic() < deadline, f"{loopdev} never drained"
            time.sleep(0.05)
        settled = _writes(loopdev)
        time.sleep(1)
        assert _writes(loopdev) == settled
    finally:
        for p in fio:                                # what the test's failure left (the loop device must detach)
            try:
                os.kill(p, signal.SIGKILL)
            except ProcessLookupError:
                pass
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        proc.wait()
