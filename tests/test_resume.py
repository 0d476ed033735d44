"""A run killed with SIGKILL loses at most the round in flight; `resume` completes it with continuous rounds."""

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from conftest import requires_devices, ssdpts, wait_for_rounds
from ssdpts.pts import registry
from ssdpts.store import Store

pytestmark = pytest.mark.no_end_report    # reads no end-of-run report (tests/conftest.py)


def _holders(dev: str) -> list[str]:
    out = []
    for fd_dir in Path("/proc").glob("[0-9]*/fd"):
        try:
            if any(os.readlink(fd) == dev for fd in fd_dir.iterdir()):
                out.append(f"{fd_dir.parent.name} ({(fd_dir.parent / 'comm').read_text().strip()})")
        except OSError:
            continue
    return out


@requires_devices
def test_sigkill_then_resume(loopdev, results, tiny, tmp_path):
    never_steady = tmp_path / "never.toml"
    never_steady.write_text(f'[profile]\nextends = "{tiny}"\n[steady_state]\nmax_range = 0.000001\nmax_rounds = 8\n')
    proc = subprocess.Popen([sys.executable, "-m", "ssdpts", "run", loopdev, "--profile", str(never_steady),
                             "--tests", "iops", "--destroy-data", "--results", str(results), "-q"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    db = results / "ssdpts.db"
    rid = wait_for_rounds(db, "iops", 3)
    assert rid, "the run never committed 3 rounds"
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    time.sleep(0.5)
    # fio dies with ssdpts: nothing keeps writing to the device behind our back (only processes holding
    # this very device count: other sessions on the same machine may run fio of their own)
    left = _holders(loopdev)
    assert not left, f"orphan processes still hold {loopdev}: {left}"
    store = Store(db)
    killed_at = len(store.rounds(rid, "iops", with_cells=False))
    assert store.run(rid)["status"] == "running"       # never marked complete
    assert killed_at >= 3
    store.close()

    out = ssdpts("resume", rid, "--results", str(results), "-q")
    assert out.stdout.strip().splitlines()[-1] == rid
    store = Store(db)
    rounds = store.rounds(rid, "iops")
    assert [r.round for r in rounds] == list(range(1, 9))    # continuous, no duplicate, none missing
    assert len(store.rounds(rid, "iops", kind="precondition")) == 1   # preconditioning not repeated
    assert store.run(rid)["status"] == "completed"
    summary = registry.get("iops").decode(store.tests(rid)[0]["summary"])
    assert summary.steady.reached is False and summary.steady.window_rounds == [4, 5, 6, 7, 8]
    assert "NOT REACHED" in ssdpts("show", rid, "--results", str(results)).stdout
    p = ssdpts("resume", rid, "--results", str(results), check=False)
    assert p.returncode == 2 and "already complete" in p.stderr
