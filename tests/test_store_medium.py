"""The results store survives its medium and its neighbours: a results file system that fills up or turns
read-only in the middle of a run, a database on read-only media, a database another program holds locked.
And a run started the way a script starts it (a background job, SIGINT inherited as ignored) still stops on
`kill -INT`. Each failure is one line with its exit code; the run is `interrupted`, never stuck `running`,
and `resume` completes it."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from conftest import requires_devices, ssdpts, tmpfs, wait_for_rounds
from ssdpts.realtime.timing import STORE_LOCK_WAIT_S
from ssdpts.store import Store
from ssdpts.store.medium import EX_IOERR, EX_TEMPFAIL

pytestmark = pytest.mark.no_end_report    # reads no end-of-run report (tests/conftest.py)


# Rounds of a run whose results medium fails under it: the failure comes right after its second round (a 16 MiB
# tmpfs fills in milliseconds; ext4's error trigger is immediate), seen stopping at round 2 of 40, and the resume
# runs the rest, so 12 keeps ten rounds of margin and resumes ten, not thirty-eight (40 s a test at rest).
MEDIUM_ROUNDS = 12


def _never_steady(tmp_path: Path, tiny: str, rounds: int) -> Path:
    p = tmp_path / "never.toml"
    p.write_text(f'[profile]\nextends = "{tiny}"\n[steady_state]\nmax_range = 0.000001\nmax_rounds = {rounds}\n')
    return p


def _measuring_run(target: str, profile: Path, results: Path) -> tuple[subprocess.Popen, str]:
    """`ssdpts run` of the iops test started in the background; returns once it has committed 2 rounds."""
    proc = subprocess.Popen([sys.executable, "-m", "ssdpts", "run", target, "--profile", str(profile), "--tests",
                             "iops", "--destroy-data", "--results", str(results), "-q"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    rid = wait_for_rounds(results / "ssdpts.db", "iops", 2)
    if not rid:
        proc.kill()
        pytest.fail(f"the run never committed 2 rounds: {proc.communicate()}")
    return proc, rid


def _one_line(stderr: str) -> str:
    lines = stderr.strip().splitlines()
    assert len(lines) == 1, stderr
    assert "Traceback" not in stderr and "internal error" not in stderr, stderr
    return lines[0]


def _status(results: Path, rid: str) -> dict:
    """The run as `ssdpts show --json` reports it (what a user sees, settled from outside this process)."""
    return json.loads(ssdpts("show", rid, "--json", "--results", str(results)).stdout)["run"]


@pytest.fixture
def small_fs(tmp_path):
    """A 16 MiB tmpfs of the test's own, mounted at a temporary directory and always unmounted."""
    with tmpfs(tmp_path / "fs", "16m") as mnt:
        yield mnt


def _fill(directory: Path) -> Path:
    """Write a file until the file system says it is full."""
    filler = directory / "filler"
    with open(filler, "wb") as f:
        try:
            while True:
                f.write(b"\xa5" * 2**16)
                f.flush()
        except OSError as e:
            assert e.errno == 28, e     # ENOSPC
    return filler


# --- signals as a script sends them ----------------------------------------------------------------------

@requires_devices
def test_sigint_to_a_background_job_of_a_script_interrupts_the_run(loopdev, results, tiny, tmp_path):
    """`ssdpts run ... &` in a non-interactive shell inherits SIGINT ignored; `kill -INT` still stops it."""
    profile = _never_steady(tmp_path, tiny, 6)
    run = (f"{sys.executable} -m ssdpts run {loopdev} --profile {profile} --tests iops --destroy-data "
           f"--results {results} -q")
    # grep is a background job of the same shell: it shows the disposition the ssdpts job inherits
    script = f"grep SigIgn /proc/self/status & {run} & echo \"pid $!\"; wait $!"
    proc = subprocess.Popen(["bash", "-c", script], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    pid, inherited = None, None
    while pid is None or inherited is None:
        line = proc.stdout.readline()
        assert line, f"the script ended early: {proc.communicate()}"
        if line.startswith("pid "):
            pid = int(line.split()[1])
        elif line.startswith("SigIgn:"):
            inherited = int(line.split()[1], 16)
    assert inherited & (1 << (signal.SIGINT - 1)), "the shell's background job did not inherit SIGINT ignored"
    rid = wait_for_rounds(results / "ssdpts.db", "iops", 2)
    if not rid:
        proc.kill()
        pytest.fail(f"the run never committed 2 rounds: {proc.communicate()}")
    status = dict(line.split(":\t") for line in Path(f"/proc/{pid}/status").read_text().splitlines() if ":\t" in line)
    assert not int(status["SigIgn"], 16) & (1 << (signal.SIGINT - 1))     # ssdpts handles it now
    assert int(status["SigCgt"], 16) & (1 << (signal.SIGINT - 1))
    os.kill(pid, signal.SIGINT)
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 130, err
    assert f"ssdpts resume {rid}" in _one_line(err)
    run_row = _status(results, rid)
    assert run_row["status"] == "interrupted", run_row
    ssdpts("resume", rid, "--results", str(results), "-q")
    store = Store.in_dir(results)
    assert store.run(rid)["status"] == "completed"
    assert [r.round for r in store.rounds(rid, "iops", with_cells=False)] == list(range(1, 7))


# --- a results file system that fills up ------------------------------------------------------------------

@requires_devices
def test_a_full_results_file_system_interrupts_the_run_and_resume_completes_it(loopdev, small_fs, tiny,
                                                                                  tmp_path):
    results = small_fs / "results"
    profile = _never_steady(tmp_path, tiny, MEDIUM_ROUNDS)
    proc, rid = _measuring_run(loopdev, profile, results)
    filler = _fill(small_fs)
    out, err = proc.communicate(timeout=300)
    line = _one_line(err)
    assert proc.returncode == EX_IOERR, err
    assert line.startswith(f"ssdpts: error: run {rid} interrupted: results file system full: "), line
    assert line.endswith(f"free space there, then 'ssdpts resume {rid}'"), line
    stopped_at = len(Store.in_dir(results).rounds(rid, "iops", with_cells=False))
    assert 2 <= stopped_at < MEDIUM_ROUNDS
    # every other command still answers, on the full file system
    assert _status(results, rid)["status"] == "interrupted"
    assert "results file system full" in _status(results, rid)["message"]
    listed = ssdpts("list", "--results", str(results))
    assert rid in listed.stdout and "interrupted" in listed.stdout
    assert ssdpts("check", rid, "--results", str(results), check=False).returncode in (0, 1)
    # resume before there is room: the same one line, nothing lost
    p = ssdpts("resume", rid, "--results", str(results), "-q", check=False)
    assert p.returncode == EX_IOERR and "results file system full" in _one_line(p.stderr), p.stderr
    assert Store.in_dir(results).run(rid)["status"] == "interrupted"
    filler.unlink()
    ssdpts("resume", rid, "--results", str(results), "-q")
    store = Store.in_dir(results)
    assert store.run(rid)["status"] == "completed"
    assert [r.round for r in store.rounds(rid, "iops", with_cells=False)] == list(range(1, MEDIUM_ROUNDS + 1))
    assert not list((results / "logs").glob("*.reserve"))


# --- a results database on read-only media ----------------------------------------------------------------

@requires_devices
@pytest.mark.parametrize("left", ["closed", "wal"])
def test_a_results_database_on_read_only_media_is_read(loopdev, small_fs, results, tiny, tmp_path, left):
    """closed: the database was closed cleanly (no -wal: opened `immutable`); wal: the last changes are still
    in its -wal (opened `mode=ro`, they are read)."""
    profile = _never_steady(tmp_path, tiny, 5)
    rid = ssdpts("run", loopdev, "--profile", str(profile), "--tests", "iops", "--destroy-data", "--results",
                 str(results), "-q").stdout.strip().splitlines()[-1]
    copy = small_fs / "results"
    writer = None
    if left == "wal":      # a change committed to the -wal, not yet in the database file
        writer = Store.in_dir(results)
        writer.record_step(rid, "", "note:1", "note", {"text": "only in the wal"})
        assert (results / "ssdpts.db-wal").stat().st_size > 0
    shutil.copytree(results, copy)
    if writer is not None:
        writer.close()
    subprocess.run(["mount", "-o", "remount,ro", str(small_fs)], check=True)
    store = Store.in_dir(copy)
    assert store.read_only and store.run(rid)["status"] == "completed"
    assert (store.step(rid, "", "note:1") is not None) == (left == "wal")
    store.close()
    assert rid in ssdpts("list", "--results", str(copy)).stdout
    assert _status(copy, rid)["status"] == "completed"
    assert ssdpts("check", rid, "--results", str(copy), check=False).returncode in (0, 1)
    out = tmp_path / "out"
    ssdpts("export", rid, "--format", "json", "--out", str(out), "--results", str(copy))
    assert json.loads((out / f"{rid}.json").read_text())["run"]["id"] == rid
    p = ssdpts("report", rid, "--results", str(copy), check=False)
    assert p.returncode == 2 and "--out" in _one_line(p.stderr), p.stderr
    ssdpts("report", rid, "--out", str(tmp_path / "report"), "--results", str(copy))
    assert (tmp_path / "report" / "report.html").exists()
    p = ssdpts("delete", rid, "--yes", "--results", str(copy), check=False)
    assert p.returncode == 2 and "can only be read here" in _one_line(p.stderr), p.stderr


# --- a database another program holds locked ---------------------------------------------------------------

HOLDER = """
import sqlite3, sys
db = sqlite3.connect(sys.argv[1], isolation_level=None)
if sys.argv[2] == "exclusive-mode":       # locking_mode=EXCLUSIVE: in WAL mode too, readers are shut out
    db.execute("PRAGMA locking_mode=EXCLUSIVE")
db.execute("BEGIN EXCLUSIVE")
db.execute("UPDATE meta SET value=value")
print("held", flush=True)
sys.stdin.read()        # held until the test closes its stdin: longer than any wait of the command
"""


@pytest.mark.parametrize("mode", ["transaction", "exclusive-mode"])
def test_a_locked_database_is_waited_on_then_named_with_its_holder(tmp_path, mode):
    results = tmp_path / "results"
    store = Store.in_dir(results)
    rid = store.create_run(target_spec="x", target={}, host={}, profile_name="p", profile={}, tests=[],
                           options={}, engine="fio")
    store.set_run_status(rid, "failed", "a test's run")
    store.close()
    holder = subprocess.Popen([sys.executable, "-c", HOLDER, str(results / "ssdpts.db"), mode],
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "held"
        listed = ssdpts("list", "--results", str(results), check=False)
        if mode == "transaction":       # WAL: reading needs no lock, it answers at once
            assert listed.returncode == 0 and rid in listed.stdout, listed.stderr
            p = ssdpts("delete", rid, "--yes", "--results", str(results), check=False)
        else:
            p = listed
        assert holder.poll() is None, "the lock must outlive the wait"
        line = _one_line(p.stderr)
        assert p.returncode == EX_TEMPFAIL, p.stderr
        assert "is locked: python" in line and f"(pid {holder.pid}) holds a write lock" in line, line
        assert f"waited {STORE_LOCK_WAIT_S:g} s" in line and f"kill {holder.pid}" in line, line
    finally:
        holder.kill()
        holder.wait()
    ssdpts("delete", rid, "--yes", "--results", str(results))
    assert Store.in_dir(results).runs() == []


# --- a results file system that turns read-only ----------------------------------------------------------

@pytest.fixture
def ext4_fs(tmp_path):
    """A 32 MiB ext4 (errors=remount-ro) on a loop device of the test's own; unmounted and detached always.
    Yields (mount point, loop device)."""
    if os.geteuid() != 0 or not shutil.which("mkfs.ext4"):
        pytest.skip("needs root and mkfs.ext4")
    image = Path("/dev/shm" if Path("/dev/shm").is_dir() else tmp_path) / f"ssdpts-ext4-{os.getpid()}.img"
    with open(image, "wb") as f:
        f.truncate(32 * 2**20)
    mnt = tmp_path / "ext4"
    mnt.mkdir()
    dev = subprocess.check_output(["losetup", "-f", "--show", str(image)], text=True).strip()
    try:
        subprocess.run(["mkfs.ext4", "-q", "-F", dev], check=True)
        subprocess.run(["mount", "-o", "errors=remount-ro", dev, str(mnt)], check=True)
        yield mnt, dev
    finally:
        subprocess.run(["umount", "-l", str(mnt)], capture_output=True)
        subprocess.run(["losetup", "-d", dev], capture_output=True)
        image.unlink(missing_ok=True)


@requires_devices
def test_a_results_file_system_turning_read_only_interrupts_the_run(loopdev, ext4_fs, tiny, tmp_path):
    mnt, dev = ext4_fs
    trigger = Path(f"/sys/fs/ext4/{Path(dev).name}/trigger_fs_error")
    if not trigger.exists():
        pytest.skip(f"no {trigger} on this kernel")
    results = mnt / "results"
    profile = _never_steady(tmp_path, tiny, MEDIUM_ROUNDS)
    proc, rid = _measuring_run(loopdev, profile, results)
    trigger.write_text("test: results medium turned read-only\n")    # ext4 remounts itself read-only
    out, err = proc.communicate(timeout=300)
    line = _one_line(err)
    assert proc.returncode == EX_IOERR, err
    assert line.startswith(f"ssdpts: error: run {rid} interrupted: results file system read-only: "), line
    assert f"remount it read-write, then 'ssdpts resume {rid}'" in line, line
    # the medium keeps "running", but no command shows a run whose process has ended as running, and the
    # reason is the one the run gave (kept outside the read-only medium), not that its process is gone
    reason = line.removeprefix(f"ssdpts: error: run {rid} interrupted: ").partition(" (the status could not")[0]
    assert reason.endswith(f"remount it read-write, then 'ssdpts resume {rid}'"), line
    assert _status(results, rid)["status"] == "interrupted"
    assert _status(results, rid)["message"] == reason
    assert "interrupted" in ssdpts("list", "--results", str(results)).stdout
    note = Path(tempfile.gettempdir()) / "ssdpts-unrecorded" / f"{rid}.json"
    assert note.exists()
    subprocess.run(["umount", str(mnt)], check=True)
    subprocess.run(["e2fsck", "-fy", dev], capture_output=True)       # 1: errors corrected
    subprocess.run(["mount", dev, str(mnt)], check=True)
    # repaired: the first command that reads the run records that reason in the database, and the note goes
    assert _status(results, rid)["message"] == reason
    store = Store.in_dir(results)
    assert (store.run(rid)["status"], store.run(rid)["message"]) == ("interrupted", reason)
    store.close()
    assert not note.exists()
    ssdpts("resume", rid, "--results", str(results), "-q")
    store = Store.in_dir(results)
    assert (store.run(rid)["status"], store.run(rid)["message"]) == ("completed", "")
    assert [r.round for r in store.rounds(rid, "iops", with_cells=False)] == list(range(1, MEDIUM_ROUNDS + 1))
    # the resume's pause says why no stop was recorded: the read-only medium, not a killed process
    [stop] = [s["data"] for s in store.steps(rid, "iops") if s["kind"] == "stop"]
    assert stop["last_io_source"].startswith(f"the last stored round's end (no stop was recorded: {reason};")
    store.close()
    assert not list((results / "logs").glob("*.reserve"))


def test_an_interrupt_lost_in_an_at_fork_hook_is_raised_again(tmp_path):
    """Python ignores an exception raised in an at-fork hook (subprocess start-up runs them): a KeyboardInterrupt
    from SIGINT landing there was lost, and a run went on to exit 0 (a fresh clone's script-started run). The
    handler repeats it until it is handled."""
    script = tmp_path / "lost.py"
    script.write_text(
        "import os, signal, sys, time\n"
        "from ssdpts import interrupts\n"
        "interrupts.install()\n"
        "def hook():\n"
        "    os.kill(os.getpid(), signal.SIGINT)\n"
        "    for _ in range(1000): pass      # the handler runs here, between two bytecodes of the hook\n"
        "os.register_at_fork(after_in_parent=hook)\n"
        "try:\n"
        "    pid = os.fork()\n"
        "    if pid == 0:\n"
        "        os._exit(0)\n"
        "    os.waitpid(pid, 0)\n"
        "    time.sleep(5)\n"
        "    print('lost')\n"
        "except KeyboardInterrupt:\n"
        "    interrupts.acknowledge()\n"
        "    print('raised again')\n")
    r = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=60)
    assert r.stdout.strip() == "raised again" and "KeyboardInterrupt" not in r.stderr, (r.stdout, r.stderr)


def test_an_interrupt_on_its_way_lets_every_clean_up_finish(tmp_path):
    """An interrupt that propagates runs the `finally` blocks and `__exit__`s on its way (fio killed, a tracefs
    instance removed). Beside two busy loops those took longer than the 0.5 s after which a periodic repeat
    raised it again, inside them: a run's trace instance was left behind. Only a lost interrupt is repeated."""
    script = tmp_path / "cleanup.py"
    script.write_text(
        "import os, signal, time\n"
        "from ssdpts import interrupts\n"
        "interrupts.install()\n"
        "try:\n"
        "    try:\n"
        "        os.kill(os.getpid(), signal.SIGINT)\n"
        "        time.sleep(5)\n"
        "    finally:\n"
        "        time.sleep(1.5)        # a clean-up slower than the old repeat\n"
        "        print('cleaned up')\n"
        "except KeyboardInterrupt:\n"
        "    interrupts.acknowledge()\n"
        "    print('handled')\n")
    r = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=60)
    assert r.stdout.split() == ["cleaned", "up", "handled"] and not r.stderr, (r.stdout, r.stderr)
