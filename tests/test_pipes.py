"""A reader that stops early (`ssdpts show RUN --json | head`) chose to: every command ends quietly, as Unix tools
do — no message, no error log, exit 141 (what a shell reports for `yes | head -1`, 128 + SIGPIPE)."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from conftest import ssdpts

pytestmark = pytest.mark.no_end_report


@pytest.fixture(scope="module")
def stored(tmp_path_factory):
    """A small simulated run: (results directory, run id)."""
    results = tmp_path_factory.mktemp("pipes") / "results"
    p = ssdpts("run", "sim:client", "--profile", "quick", "--tests", "iops", "--destroy-data",
               "--results", str(results), "-q")
    return results, p.stdout.strip().splitlines()[-1]


def _files(*roots) -> set[str]:
    return {os.path.join(d, f) for root in roots for d, _, names in os.walk(root) for f in names}


def _user_env(tmp) -> dict:
    """The environment a user's shell gives: stdout block-buffered (no PYTHONUNBUFFERED, under which a write cut
    by the reader's exit returns short and Python drops the rest unseen), temp files in a folder of the test's."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONUNBUFFERED"}
    env["TMPDIR"] = str(tmp)
    return env


def _sigpipe_status_of_a_unix_tool() -> int:
    """The status the shell itself gives a writer whose reader left: `yes | head -c1`."""
    return int(subprocess.run(["bash", "-c", "yes | head -c1 >/dev/null; echo ${PIPESTATUS[0]}"],
                              capture_output=True, text=True, check=True).stdout)


@pytest.mark.parametrize("command", [["show", "{rid}", "--json"], ["show", "{rid}"], ["check", "{rid}"],
                                     ["list"], ["tests"], ["--help"], ["show", "--help"], ["--version"],
                                     ["steady-state", "11746", "11690", "11731"]])
def test_a_pipe_without_reader_ends_quietly(stored, tmp_path, command):
    """The reader is gone before ssdpts writes a byte (its end of the pipe closed before the start): the
    first write fails with EPIPE, whatever the timing."""
    results, rid = stored
    before = _files(results, tmp_path)
    read_end, write_end = os.pipe()
    os.close(read_end)
    try:
        p = subprocess.run([sys.executable, "-m", "ssdpts", *(a.format(rid=rid) for a in command),
                            *(["--results", str(results)] if command[0] in ("show", "check", "list") and
                              "--help" not in command else [])],
                           stdout=write_end, stderr=subprocess.PIPE, text=True, timeout=120,
                           env=_user_env(tmp_path))
    finally:
        os.close(write_end)
    assert p.returncode == _sigpipe_status_of_a_unix_tool() == 141, p.stderr
    assert p.stderr == ""
    assert _files(results, tmp_path) == before, "an error log was written"


def test_head_stops_reading_show_json(stored, tmp_path):
    """`show --json | head -c1` in a real shell: the document is larger than a pipe's buffer (64 KiB), so
    ssdpts is still writing when head leaves; its status is the one the shell gives `yes` in the same place."""
    results, rid = stored
    size = len(ssdpts("show", rid, "--json", "--results", str(results)).stdout.encode())
    assert size > 1 << 16
    before = _files(results, tmp_path)
    script = (f"{sys.executable} -m ssdpts show {rid} --json --results {results} | head -c1; "
              "echo \" ${PIPESTATUS[0]}\"; yes | head -c1 >/dev/null; echo \" ${PIPESTATUS[0]}\"")
    p = subprocess.run(["bash", "-c", script], capture_output=True, text=True, timeout=120, env=_user_env(tmp_path))
    first, ssdpts_status, yes_status = p.stdout.split()
    assert first == "{" and ssdpts_status == yes_status == "141", p.stdout
    assert p.stderr == ""
    assert _files(results, tmp_path) == before
