"""Bad input: one line naming the problem and the fix, non-zero exit, nothing written."""

import pytest

from conftest import ssdpts


@pytest.mark.parametrize("args, message", [
    (["run", "/dev/nope-no-such-device"], "does not exist"),
    (["run", "/tmp/ssdpts-no-such-dir/x.img", "--size", "1G"], "does not exist"),
    (["run", "/tmp/ssdpts-new-file-without-size.img"], "--size"),
    (["run", "--tests", "iops,bogus", "/tmp/x.img", "--size", "1M"], "unknown test 'bogus'"),
    (["run", "--profile", "nope", "/tmp/x.img", "--size", "1M"], "unknown profile 'nope'"),
    (["run", "/tmp/x.img", "--size", "eight"], "bad --size"),
    (["show", "no-such-run", "--results", "/tmp/ssdpts-empty-results"], "no results database"),
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
