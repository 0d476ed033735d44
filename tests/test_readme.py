"""Every command in README.md runs as written, in the order it is written, as a new user would type it: in an
empty folder (so results go to ./results), on a real block device (a loop device stands in for /dev/nvme0n1),
with the run id the earlier run printed in place of RUN_ID.

Two kinds of line are not run literally, each for a stated reason: `make demo` and `make test` are checked with
`make -n` (this test is part of `make test`, and `make demo` would set up a second time what the suite already
has); a run the README says takes hours is started, seen to commit its first round, and stopped with Ctrl-C as
the README says it may be (exit 130, `interrupted`, resumable)."""

from __future__ import annotations

import os
import re
import shlex
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from conftest import requires_devices, sigint_as_at_a_terminal

pytestmark = [pytest.mark.device, pytest.mark.slow, pytest.mark.no_end_report, requires_devices]

ROOT = Path(__file__).resolve().parent.parent
DRIVE = "/dev/nvme0n1"                 # the README's drive, replaced by a loop device
HOURS_LONG = ("pts-client", "pts-enterprise")
EXITS = {"check": {0, 1}}             # check exits 1 for a run that is not conformant (a quick run never is)


def readme_commands() -> list[str]:
    """The command lines of README.md's sh blocks, comments cut off."""
    lines, inside = [], False
    for line in (ROOT / "README.md").read_text().splitlines():
        if line.startswith("```"):
            inside = line.strip() == "```sh" if not inside else False
            continue
        command = re.sub(r"\s+#\s.*$", "", line).strip()
        if inside and command and not command.startswith("#"):
            lines.append(command)
    return lines


def test_the_readme_has_commands_of_every_kind():
    commands = readme_commands()
    assert {c.split()[0] for c in commands} == {"make", "ssdpts"}
    assert any(DRIVE in c for c in commands) and any("RUN_ID" in c for c in commands)


def test_every_readme_command_runs_as_written(loop_factory, tmp_path):
    drive = loop_factory(256 * 2**20)
    env = {k: v for k, v in os.environ.items() if k != "SSDPTS_RESULTS"}
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT / "src"), env.get("PYTHONPATH")]))
    run_id = None
    for line in readme_commands():
        argv = [drive if a == DRIVE else a for a in shlex.split(line)]
        if argv[0] == "make":
            p = subprocess.run(["make", "-n", *argv[1:]], cwd=ROOT, capture_output=True, text=True, timeout=60)
            assert p.returncode == 0, f"{line}: {p.stderr}"
            continue
        if run_id is not None:
            argv = [run_id if a == "RUN_ID" else a for a in argv]
        assert "RUN_ID" not in argv, f"{line}: no run before it gave a RUN_ID"
        command = [sys.executable, "-m", "ssdpts", *argv[1:]]
        if argv[1] == "run" and any(p in argv for p in HOURS_LONG):
            _start_then_interrupt(command, tmp_path, env, line)
            continue
        p = subprocess.run(command, cwd=tmp_path, capture_output=True, text=True, timeout=900, env=env)
        assert p.returncode in EXITS.get(argv[1], {0}) and "Traceback" not in p.stderr, \
            f"{line} -> exit {p.returncode}\n{p.stdout[-2000:]}\n{p.stderr[-2000:]}"
        if argv[1] == "run" and DRIVE in line:
            run_id = re.findall(r"^run (\S+) complete", p.stdout + p.stderr, re.M)[-1]
    assert run_id is not None and (tmp_path / "results" / "ssdpts.db").is_file()
    assert (tmp_path / "results" / "reports" / run_id / "report.html").is_file()


def _start_then_interrupt(command: list[str], cwd: Path, env: dict, line: str) -> None:
    """A run of hours: started as written, stopped with Ctrl-C once it committed a round (WIPC's)."""
    from ssdpts.store import Store

    db = cwd / "results" / "ssdpts.db"
    before = {r["id"] for r in Store(db).runs()} if db.exists() else set()
    child = subprocess.Popen(command, cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                             preexec_fn=sigint_as_at_a_terminal)
    try:
        deadline, started = time.time() + 600, None
        while time.time() < deadline and child.poll() is None and started is None:
            time.sleep(0.5)
            store = Store(db)
            try:
                new = [r["id"] for r in store.runs() if r["id"] not in before]
                if new and any(store.rounds(new[0], test, kind="precondition", with_cells=False)
                               for test in store.run(new[0])["tests"]):
                    started = new[0]
            finally:
                store.close()
        assert started is not None, f"{line}: no round committed ({child.poll()})"
        child.send_signal(signal.SIGINT)
        out, err = child.communicate(timeout=120)
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()
    assert child.returncode == 130 and f"ssdpts resume {started}" in out + err, f"{line}: {out[-1500:]}{err[-1500:]}"
