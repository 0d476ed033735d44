"""Targets fio reads as we mean them: the canonical device node, and file names escaped for fio's `filename`
syntax (fio splits it at ':'); names fio would change are refused before anything is created."""

import hashlib
import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from conftest import TINY_WRITES, requires_devices, ssdpts
from ssdpts.errors import SsdptsError
from ssdpts.store import Store
from ssdpts.targets.remote import remote_target
from ssdpts.workload import Workload, render
from ssdpts.workload.fio import filename_value

pytestmark = pytest.mark.no_end_report    # reads no end-of-run report (tests/conftest.py)


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def one_line_error(p: subprocess.CompletedProcess, match: str) -> None:
    lines = [l for l in p.stderr.strip().splitlines() if l]
    assert p.returncode == 2 and len(lines) == 1 and lines[0].startswith("ssdpts: error:"), p.stderr
    assert match in lines[0], lines[0]


def test_colons_are_escaped_and_backslashes_kept():
    assert filename_value("/dev/loop0") == "/dev/loop0"
    assert filename_value("/t/victim:x.img") == "/t/victim\\:x.img"
    assert filename_value("/t/a\\:b") == "/t/a\\\\:b"          # fio takes back one backslash: a\:b
    assert filename_value("/t/my file %d.img") == "/t/my file %d.img"


@pytest.mark.parametrize("name", ["/t/a${HOME}", "/t/n$ncpus", "/t/a;b", "/t/a#b", "/t/trailing ", "/t/a\nb",
                                  "/t/tab\tx"])
def test_names_fio_would_change_are_refused(name):
    with pytest.raises(ValueError, match="fio cannot be given"):
        filename_value(name)


@pytest.mark.skipif(shutil.which("fio") is None, reason="fio is not installed")
@pytest.mark.parametrize("name, neighbour", [("victim:x.img", "victim"), ("pci-0000:00:1f.2-ata-1", "pci-0000"),
                                             ("x:", "x"), ("a\\:b.img", "a\\"), ("with space.img", "with"),
                                             ("back\\slash.img", "back"), ("pct%d.img", "pct")])
def test_fio_writes_exactly_the_named_file(tmp_path, name, neighbour):
    """Real fio with the rendered job: the bytes land in the file named, and no other file appears."""
    d = tmp_path / "d"
    d.mkdir()
    (d / neighbour).write_bytes(b"precious")
    job = tmp_path / "job.fio"
    job.write_text(render([Workload("w", "write", bs=4096, io_size=65536, direct=False)], str(d / name), 65536,
                          ioengine="psync").text())
    subprocess.run(["fio", "--output=/dev/null", str(job)], check=True, capture_output=True)
    assert sorted(os.listdir(d)) == sorted([name, neighbour])
    assert (d / name).stat().st_size == 65536 and any((d / name).read_bytes())
    assert (d / neighbour).read_bytes() == b"precious"


@pytest.mark.parametrize("name", ["x${HOME}.img", "trailing.img ", "semi;colon.img"])
def test_cli_refuses_names_fio_would_change_and_creates_nothing(tmp_path, name):
    p = ssdpts("run", name, "--size", "1M", "--results", str(tmp_path / "r"), check=False, cwd=tmp_path)
    one_line_error(p, "refusing")
    assert os.listdir(tmp_path) == []


@pytest.mark.parametrize("name", ["victim:x.img", "victim x.img"])
def test_file_target_with_colon_or_space_never_touches_its_neighbour(tmp_path, name):
    victim = tmp_path / "victim"
    victim.write_bytes(os.urandom(1 << 20))
    before = sha256(victim)
    p = ssdpts("run", f"./{name}", "--size", "8M", "--tests", "latency", "--profile", TINY_WRITES, "--results", "r",
               "-q", cwd=tmp_path)
    assert sha256(victim) == before and victim.stat().st_size == 1 << 20
    target = tmp_path / name
    assert target.stat().st_size == 8 << 20 and any(target.read_bytes())   # written (it was created all zeros)
    assert sorted(os.listdir(tmp_path)) == sorted(["r", "victim", name])
    store = Store.in_dir(tmp_path / "r")
    rid = p.stdout.strip().splitlines()[-1]
    assert store.run(rid)["target"].path == str(target)
    job = store.rounds(rid, "latency")[0].job_text
    assert f"filename={filename_value(str(target))}\n" in job


@requires_devices
def test_symlink_with_colon_to_a_loop_device_writes_the_device(loopdev, tmp_path):
    backing = Path(Path(f"/sys/block/{Path(loopdev).name}/loop/backing_file").read_text().strip())
    links = tmp_path / "by-path"
    links.mkdir()
    link = links / "pci-0000:00:1f.2-ata-1"
    link.symlink_to(loopdev)
    before = sha256(backing)
    p = ssdpts("run", str(link), "--profile", TINY_WRITES, "--tests", "latency", "--destroy-data", "--purge", "trim",
               "--results", str(tmp_path / "r"), "-q")
    assert sha256(backing) != before                              # the bytes landed on the loop device
    assert os.listdir(links) == [link.name] and link.is_symlink()    # no regular file 'pci-0000' beside the link
    store = Store.in_dir(tmp_path / "r")
    run = store.run(p.stdout.strip().splitlines()[-1])
    assert run["target"].path == loopdev and run["target"].spec == str(link)
    for r in store.rounds(run["id"], "latency"):
        assert f"filename={loopdev}\n" in r.job_text and "pci-0000" not in r.job_text


def test_resume_reopens_the_same_file_from_anywhere(tmp_path):
    """A resumed run opens the file it stored, whatever the name holds and wherever resume is called from."""
    (tmp_path / "my").write_bytes(b"precious")
    p = ssdpts("run", "./my file:1.img", "--size", "8M", "--tests", "latency", "--profile", TINY_WRITES,
               "--results", "r", "-q", cwd=tmp_path)
    rid = p.stdout.strip().splitlines()[-1]
    store = Store.in_dir(tmp_path / "r")
    store.set_run_status(rid, "interrupted")
    store.close()
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    ssdpts("resume", rid, "--results", str(tmp_path / "r"), "-q", cwd=elsewhere)
    assert Store.in_dir(tmp_path / "r").run(rid)["status"] == "completed"
    assert os.listdir(elsewhere) == [] and sorted(os.listdir(tmp_path)) == ["elsewhere", "my", "my file:1.img", "r"]
    assert (tmp_path / "my").read_bytes() == b"precious"


@requires_devices
def test_a_copy_of_the_device_node_is_tested_as_the_device(loopdev, tmp_path):
    rdev = os.stat(loopdev).st_rdev
    node = tmp_path / "my:disk"
    os.mknod(node, 0o600 | 0o060000, rdev)
    doc = json.loads(ssdpts("info", str(node), "--json").stdout)
    assert doc["path"] == loopdev and doc["spec"] == str(node)


def test_remote_names_fio_would_change_are_refused():
    with pytest.raises(SsdptsError, match=r"refusing h:/dev/disk/\$x: fio expands '\$'"):
        remote_target("h", 8765, "/dev/disk/$x", 2**30)
    assert remote_target("h", 8765, "/dev/disk/by-path/pci-0000:00:1f.2", 2**30).path == "/dev/disk/by-path/pci-0000:00:1f.2"
