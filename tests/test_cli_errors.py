"""Bad input: one line naming the problem and the fix, non-zero exit, nothing written."""

import pytest

from conftest import ssdpts

pytestmark = pytest.mark.no_end_report    # reads no end-of-run report (tests/conftest.py)


@pytest.mark.parametrize("args, message", [
    (["run", "/dev/nope-no-such-device"], "does not exist"),
    (["run", "/tmp/ssdpts-no-such-dir/x.img", "--size", "1G"], "does not exist"),
    (["run", "/tmp/ssdpts-new-file-without-size.img"], "--size"),
    (["run", "--tests", "iops,bogus", "/tmp/x.img", "--size", "1M"], "unknown test 'bogus'"),
    (["run", "--profile", "nope", "/tmp/x.img", "--size", "1M"], "unknown profile 'nope'"),
    (["run", "/tmp/x.img", "--size", "eight"], "bad --size"),
    (["show", "no-such-run", "--results", "/tmp/ssdpts-empty-results"], "no results database"),
    (["run", "/tmp/x.img", "--size", "0"], "less than one 512-byte sector"),
    (["run", "/tmp", "--size", "1M"], "is a directory"),
    (["info", "/tmp"], "is a directory"),
    (["run", "sim:"], "names no simulated drive"),
    (["info", "sim:"], "names no simulated drive"),
    (["run", "/tmp/ssdpts-too-big.img", "--size", "900P"], "does not fit"),
    (["steady-state", "11746", "11690", "eleven"], "'eleven' is not a number"),
    (["steady-state", "1", "2", "3", "--window", "1"], "--window must be at least 2"),
    (["show"], "Missing argument 'RUN_ID'"),
    (["no-such-command"], "No such command"),
    (["analyze", "slc-cache", "--bw-log", "/tmp/ssdpts-no-such.log"], "does not exist"),
    (["analyze", "slc-cache", "--bw-log", "/tmp"], "is a directory"),
])
def test_one_line_errors(args, message):
    p = ssdpts(*args, check=False)
    assert p.returncode == 2
    lines = p.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("ssdpts: error:") and message in lines[0], p.stderr


def test_help_teaches():
    out = ssdpts("run", "--help").stdout
    for word in ("--destroy-data", "--purge", "--profile", "resume", "not a SNIA purge"):
        assert word in out
    assert "MiB/s" in ssdpts("--help").stdout


def _results_with(tmp_path, content: bytes):
    d = tmp_path / "results"
    d.mkdir()
    (d / "ssdpts.db").write_bytes(content)
    return d


@pytest.mark.parametrize("command", [["list"], ["show", "x"], ["report", "x"], ["resume", "x"],
                                     ["export", "x", "--format", "json", "--out", "/tmp/ssdpts-export-x"]])
def test_corrupt_database_is_one_line_and_untouched(tmp_path, command):
    junk = b"this is not an sqlite database" * 100
    d = _results_with(tmp_path, junk)
    p = ssdpts(*command, "--results", str(d), check=False)
    assert p.returncode == 2 and len(p.stderr.strip().splitlines()) == 1, p.stderr
    assert "not a readable ssdpts results database" in p.stderr and "Traceback" not in p.stderr
    assert (d / "ssdpts.db").read_bytes() == junk


def test_foreign_sqlite_database_is_refused_untouched(tmp_path):
    import sqlite3

    d = tmp_path / "results"
    d.mkdir()
    db = sqlite3.connect(d / "ssdpts.db")
    db.execute("CREATE TABLE photos (id INTEGER, path TEXT)")
    db.commit()
    db.close()
    before = (d / "ssdpts.db").read_bytes()
    p = ssdpts("list", "--results", str(d), check=False)
    assert p.returncode == 2 and "another program" in p.stderr and "photos" in p.stderr, p.stderr
    assert (d / "ssdpts.db").read_bytes() == before


def test_bad_analyze_inputs_are_one_line(tmp_path):
    notsmart = tmp_path / "a.json"
    notsmart.write_text('{"foo": 1}')
    log = tmp_path / "bw.log"
    log.write_text("garbage,,x\n")
    for args in (["analyze", "endurance", str(notsmart), str(notsmart)], ["analyze", "slc-cache", "--bw-log", str(log)]):
        p = ssdpts(*args, check=False)
        assert p.returncode == 2 and "Traceback" not in p.stderr, p.stderr
        assert p.stderr.strip().splitlines()[-1].startswith("ssdpts: error:"), p.stderr


def test_nothing_is_created_for_refused_runs(tmp_path):
    results = tmp_path / "results"
    for args in (["run", str(tmp_path / "x.img"), "--size", "0"], ["run", str(tmp_path)],
                 ["run", str(tmp_path / "x.img"), "--size", "1M", "--tests", "nope"]):
        p = ssdpts(*args, "--results", str(results), check=False)
        assert p.returncode == 2, p.stderr
    assert not results.exists() and not (tmp_path / "x.img").exists()
