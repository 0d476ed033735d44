"""Refusals that guard the data and the outputs (issue 27): each runs the real CLI and asserts one line
`ssdpts: error: ...`, exit 2, nothing created (no results directory, no run row) and the bytes of the target
and of everything beside it unchanged (sha256 of every file under the test's directory, before and after)."""

from __future__ import annotations

import os
import re
import shutil
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from conftest import TINY, digest, requires_devices, ssdpts, tiny_with
from ssdpts.store import Store

ERROR = "ssdpts: error: "


def snapshot(*roots: Path) -> dict[str, str]:
    """Every directory and the sha256 of every regular file or device under `roots`: what a refusal may not
    change or add to."""
    out = {}
    for root in roots:
        if not root.is_dir():
            out[str(root)] = digest(root) if root.exists() else "absent"
            continue
        for dirpath, _, files in os.walk(root):
            out[dirpath] = "directory"
            for f in files:
                p = Path(dirpath) / f
                out[str(p)] = digest(p) if p.is_file() and not p.is_symlink() else "other"
    return out


def refused(*args: str, watch: list[Path], cwd: Path, env: dict | None = None) -> str:
    """Run `ssdpts ARGS` in `cwd`; assert exit 2, exactly one stderr line `ssdpts: error: ...`, and that nothing
    under `watch` changed or appeared. The line."""
    before = snapshot(*watch)
    p = ssdpts(*args, check=False, cwd=cwd, env=env)
    lines = p.stderr.splitlines()
    assert p.returncode == 2, (p.returncode, p.stderr)
    assert len(lines) == 1 and lines[0].startswith(ERROR), p.stderr
    assert snapshot(*watch) == before
    return lines[0]


def run_args(target: str, results: Path, *extra: str) -> list[str]:
    return ["run", target, "--profile", str(TINY), "--tests", "iops", "--results", str(results), "-q", *extra]


def image(path: Path, size: int = 64 * 2**20) -> Path:
    with open(path, "wb") as f:
        f.truncate(size)
    return path


def attach(backing: Path) -> str:
    return subprocess.check_output(["losetup", "-f", "--show", str(backing)], text=True).strip()


# ---- item 1: never the wrong data -------------------------------------------------------------------------

@requires_devices
def test_image_backing_a_mounted_loop_device_is_refused_even_with_consent(tmp_path):
    """The reported bug: a disk image behind a loop device with a mounted ext4 was overwritten."""
    img = image(tmp_path / "disk.img")
    (tmp_path / "neighbour.bin").write_bytes(os.urandom(4096))
    subprocess.run(["mkfs.ext4", "-q", "-E", "lazy_itable_init=0,lazy_journal_init=0", str(img)], check=True)
    mnt = tmp_path / "mnt"
    mnt.mkdir()
    dev = attach(img)
    try:
        subprocess.run(["mount", "-o", "ro", dev, str(mnt)], check=True)   # ro: ext4 writes nothing on its own
        try:
            line = refused(*run_args(str(img), tmp_path / "results", "--destroy-data", "--size", "64M"),
                           watch=[tmp_path], cwd=tmp_path)
            assert f"it backs loop device {dev} (mounted at {mnt})" in line and "losetup -d" in line
            info = ssdpts("info", str(img), "--profile", str(TINY), cwd=tmp_path).stdout
            assert f"safe        no: {line.removeprefix(ERROR)}" in info          # info gives the run's answer
        finally:
            subprocess.run(["umount", str(mnt)], check=True)
    finally:
        subprocess.run(["losetup", "-d", dev], check=True)


@requires_devices
def test_image_backing_an_unmounted_loop_device_is_refused(tmp_path):
    img = image(tmp_path / "disk.img")
    link = tmp_path / "other-name.img"
    os.link(img, link)                                   # the same inode under another name is the same file
    dev = attach(img)
    try:
        for name in (img, link):
            line = refused(*run_args(str(name), tmp_path / "results", "--destroy-data"), watch=[tmp_path],
                           cwd=tmp_path)
            assert f"refusing {name}: it backs loop device {dev};" in line and "mounted" not in line
    finally:
        subprocess.run(["losetup", "-d", dev], check=True)


@requires_devices
def test_active_swap_file_is_refused(tmp_path):
    swap = tmp_path / "swap file"
    with open(swap, "wb") as f:
        f.write(bytes(16 * 2**20))                      # swapon refuses a file with holes
    swap.chmod(0o600)
    subprocess.run(["mkswap", str(swap)], check=True, capture_output=True)
    if subprocess.run(["swapon", str(swap)], capture_output=True).returncode != 0:
        pytest.skip("swapon of a file is not permitted here")
    try:
        line = refused(*run_args(str(swap), tmp_path / "results", "--destroy-data"), watch=[tmp_path], cwd=tmp_path)
        assert "it is an active swap file; run 'swapoff" in line
    finally:
        subprocess.run(["swapoff", str(swap)], check=True)


def test_file_open_for_writing_by_another_process_is_refused_whatever_the_flags(tmp_path):
    target = tmp_path / "scratch.img"
    target.write_bytes(os.urandom(2**20))
    writer = subprocess.Popen([sys.executable, "-c", "import os, sys, time\n"
                               f"fd = os.open({str(target)!r}, os.O_WRONLY)\nprint('open', flush=True)\n"
                               "time.sleep(600)"], stdout=subprocess.PIPE, text=True)
    try:
        assert writer.stdout.readline().strip() == "open"
        for flags in ([], ["--ignore-doctor", "all"]):
            line = refused(*run_args(str(target), tmp_path / "results", "--destroy-data", *flags), watch=[tmp_path],
                           cwd=tmp_path)
            assert f"open for writing by python" in line and f"(pid {writer.pid})" in line
    finally:
        writer.kill()
        writer.wait()


@requires_devices
def test_info_and_run_give_one_answer_for_an_exclusively_held_device(loopdev, tmp_path):
    holder = subprocess.Popen([sys.executable, "-c", "import os, time\n"
                               f"fd = os.open({loopdev!r}, os.O_RDONLY | os.O_EXCL)\nprint('held', flush=True)\n"
                               "time.sleep(600)"], stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "held"
        line = refused(*run_args(loopdev, tmp_path / "results", "--destroy-data"), watch=[tmp_path, Path(loopdev)],
                       cwd=tmp_path)
        assert f"another program holds it exclusively (open by python (pid {holder.pid}))" in line
        info = ssdpts("info", loopdev, "--profile", str(TINY), cwd=tmp_path).stdout
        assert f"safe        no: {line.removeprefix(ERROR)}" in info
    finally:
        holder.kill()
        holder.wait()
    assert "safe        yes" in ssdpts("info", loopdev, "--profile", str(TINY), cwd=tmp_path).stdout


@requires_devices
def test_disk_named_with_its_own_partition_is_refused(loop_factory, tmp_path):
    if not shutil.which("sfdisk") or not shutil.which("partx"):
        pytest.skip("sfdisk and partx (util-linux) are needed to partition a loop device")
    disk = loop_factory(64 * 2**20)
    subprocess.run(["sfdisk", "-q", disk], input=",30M\n,\n", text=True, check=True, capture_output=True)
    subprocess.run(["partx", "-a", disk], capture_output=True)          # no udev here: the nodes are made by hand
    try:
        part = f"{disk}p1"
        if not Path(part).is_block_device():
            pytest.skip("the partitions of the loop device did not appear")
        for order in ([disk, part], [part, disk]):
            line = refused("run", *order, "--profile", str(TINY), "--tests", "iops", "--destroy-data", "--results",
                           str(tmp_path / "results"), "-q", watch=[tmp_path, Path(disk)], cwd=tmp_path)
            assert f"refusing {part}: it is a partition of {disk}, also named in this run" in line
    finally:
        subprocess.run(["partx", "-d", disk], capture_output=True)


# ---- item 4: every output checked before work starts --------------------------------------------------

def test_results_naming_a_file_is_refused(tmp_path):
    target = tmp_path / "scratch.img"
    not_a_dir = tmp_path / "results"
    not_a_dir.write_text("a file, not a directory\n")
    line = refused(*run_args(str(target), not_a_dir, "--size", "64M"), watch=[tmp_path], cwd=tmp_path)
    assert f"--results {not_a_dir} is a file" in line
    env = dict(os.environ, SSDPTS_RESULTS=str(not_a_dir))
    for args in (["run", str(target), "--size", "64M", "--profile", str(TINY), "--tests", "iops", "-q"], ["list"]):
        line = refused(*args, watch=[tmp_path], cwd=tmp_path, env=env)
        assert f"SSDPTS_RESULTS {not_a_dir} is a file" in line


def test_outputs_on_a_read_only_file_system_are_refused(read_only_fs, tmp_path):
    ro, results = read_only_fs, tmp_path / "results"
    workload = next((Path(__file__).parent / "workloads").glob("*.json"))
    cases = [(["export", "RUN", "--format", "json", "--out", str(ro / "x")], "--out"),
             (["export", "RUN", "--format", "csv", "--out", str(ro)], "--out"),
             (["compare", "A", "B", "--out", str(ro / "x")], "--out"),
             (["report", "RUN", "--out", str(ro / "x")], "--out"),
             (["analyze", "workload", str(workload), "--out", str(ro / "x")], "--out"),
             (["check", "RUN", "--criteria", str(tmp_path / "rules.toml"), "--junit", str(ro / "j.xml")], "--junit"),
             (run_args(str(tmp_path / "scratch.img"), ro / "results", "--size", "64M"), "--results")]
    for args, option in cases:
        if "--results" not in args and args[0] != "analyze":
            args = [*args, "--results", str(results)]
        line = refused(*args, watch=[tmp_path], cwd=tmp_path)
        assert line.startswith(f"{ERROR}{option} ") and "read-only file system" in line, line


def test_outputs_in_unwritable_or_missing_places_are_refused(tmp_path):
    a_file = tmp_path / "plain.txt"
    a_file.write_text("not a directory\n")
    results = tmp_path / "results"
    for args, expect in [
            (["export", "RUN", "--format", "json", "--out", str(a_file / "sub")], f"{a_file} is a file"),
            (["compare", "A", "B", "--out", str(a_file)], "is a file"),
            (["check", "RUN", "--criteria", str(tmp_path / "rules.toml"), "--junit", str(tmp_path / "no" / "j.xml")],
             "does not exist"),
            (["check", "RUN", "--criteria", str(tmp_path / "rules.toml"), "--junit", str(tmp_path)], "is a directory"),
            (run_args(str(tmp_path / "scratch.img"), a_file / "results", "--size", "64M"), f"{a_file} is a file")]:
        line = refused(*args, "--results", str(results), watch=[tmp_path], cwd=tmp_path) if "--results" not in args \
            else refused(*args, watch=[tmp_path], cwd=tmp_path)
        assert expect in line, line


def test_sim_serve_socket_in_a_missing_folder_or_over_a_file_is_refused(tmp_path):
    line = refused("sim", "serve", "--socket", str(tmp_path / "missing" / "sim.sock"), watch=[tmp_path], cwd=tmp_path)
    assert "directory" in line and "does not exist" in line
    keep = tmp_path / "notes.txt"
    keep.write_text("never removed by a server\n")
    line = refused("sim", "serve", "--socket", str(keep), watch=[tmp_path], cwd=tmp_path)
    assert "exists and is not a socket" in line


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@requires_devices
def test_remote_run_leaves_nothing_in_the_current_directory(loopdev, tmp_path):
    """fio's client writes the jobs' interval logs (rnd_4K_0-100_clat.17.log.127.0.0.1, ...) into its current
    directory: a run through --host once left them where the user stood (and `make test` in the repository)."""
    port = _free_port()
    server = subprocess.Popen(["fio", f"--server=ip:127.0.0.1,{port}"], cwd=tmp_path, stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL, start_new_session=True)
    try:
        deadline = time.time() + 60
        while socket.socket().connect_ex(("127.0.0.1", port)) != 0:
            assert time.time() < deadline and server.poll() is None, "fio --server did not start"
            time.sleep(0.1)
        cwd = tmp_path / "where-the-user-stands"
        cwd.mkdir()
        results = tmp_path / "results"
        # the one logged cell alone (the tiny matrix's other three cells log nothing this test reads)
        profile = tiny_with(tmp_path / "one-cell.toml",
                            '[tests.iops]\nmixes = [0]\nblock_sizes = ["4k"]\ntracking = [["4k", 0]]\n')
        ssdpts("run", "--host", f"127.0.0.1:{port}", loopdev, "--size", "64M", "--profile", profile, "--tests",
               "iops", "--destroy-data", "--results", str(results), "-q", cwd=cwd)
        assert sorted(os.listdir(cwd)) == []
        assert sorted(os.listdir(tmp_path)) == ["one-cell.toml", "results", "where-the-user-stands"]  # the server's
        # the logs are the run's: stored with each round in the results, read as a local run's are; the
        # folder the client ran in (under RESULTS/logs/RUN_ID) is gone once they are
        store = Store.in_dir(results)
        [run] = store.runs()
        assert sorted(os.listdir(results / "logs")) == [f"{run['id']}.log"]
        rounds = store.rounds(run["id"], "iops")
        assert rounds
        with_intervals = 0
        for r in rounds:
            logs = store.logs(r.id)
            # fio's own names: the client appends the host; 4K 0/100 is the one logged cell of the tiny matrix
            named = [re.fullmatch(r"rnd_4K_0-100_(\w+)\.\d+\.log\.127\.0\.0\.1", name) for name in logs]
            assert all(named) and sorted(m.group(1) for m in named) == ["clat", "iops", "lat", "slat"]
            [cell] = [c for c in r.cells if c.name == "rnd_4K_0-100"]
            [iops_log] = [text for name, text in logs.items() if "_iops." in name]
            entries = [line.split(",") for line in iops_log.splitlines()]
            interval_s = int(next(w for w in r.workloads if w["name"] == cell.name)["log_interval_ms"]) / 1000
            # what fio logged, interval by interval: its IOPS averages × the interval (writes, direction 1)
            # a log with entries gives intervals that agree with them, one without gives none (a loaded run
            # once stored a round's cell without intervals; which of the two it was is not known)
            assert bool(cell.intervals) == bool(entries), (r.round, sorted(logs), len(entries), cell.intervals)
            assert sum(i["write_ios"] for i in cell.intervals) == pytest.approx(
                sum(float(e[1]) * interval_s for e in entries if int(e[2]) == 1))
            with_intervals += bool(cell.intervals)
        assert with_intervals, "no round's cell has intervals from fio's logs"
    finally:
        os.killpg(server.pid, 9)
        server.wait()


@requires_devices
def test_purge_method_the_device_lacks_is_refused_before_a_run(loopdev, tmp_path):
    line = refused(*run_args(loopdev, tmp_path / "results", "--destroy-data", "--purge", "nvme-sanitize"),
                   watch=[tmp_path, Path(loopdev)], cwd=tmp_path)
    assert f"--purge nvme-sanitize is not possible on {loopdev}" in line and "use --purge trim or --purge none" in line


# ---- inputs out of range or naming nothing ---------------------------------------------------------------

def test_tracking_a_cell_not_in_the_matrix_is_refused(tmp_path):
    profile = tmp_path / "p.toml"
    profile.write_text(f'[profile]\nextends = "{TINY}"\n[tests.iops]\ntracking = [["3k", 0]]\n')
    line = refused("run", str(tmp_path / "scratch.img"), "--size", "64M", "--profile", str(profile), "--tests", "iops",
                   "--results", str(tmp_path / "results"), watch=[tmp_path], cwd=tmp_path)
    assert 'iops.tracking: ["3K", 0] is not a cell of the matrix (block sizes 64K, 4K × read % 65, 0)' in line


@pytest.mark.parametrize("size, problem", [("1.5", "1.5 bytes is not a whole number of bytes"),
                                           ("0.3k", "307.2 bytes is not a whole number of bytes"),
                                           ("100", "less than one 512-byte sector"),
                                           ("0", "less than one 512-byte sector")])
def test_sizes_that_are_not_whole_bytes_or_below_a_sector_are_refused(tmp_path, size, problem):
    for command in (run_args(str(tmp_path / "scratch.img"), tmp_path / "results", "--size", size),
                    ["endurance", str(tmp_path / "scratch.img"), "--size", size, "--results", str(tmp_path / "results")],
                    ["plan", str(tmp_path / "scratch.img"), "--size", size, "--profile", str(TINY)]):
        line = refused(*command, watch=[tmp_path], cwd=tmp_path)
        assert problem in line, line


@pytest.mark.parametrize("option, value", [("--rated-tbw", "-5"), ("--rated-tbw", "0"), ("--dwpd", "-1")])
def test_negative_or_zero_ratings_are_refused(tmp_path, option, value):
    extra = ["--warranty-years", "5"] if option == "--dwpd" else []
    snapshots = [str(tmp_path / "a.json"), str(tmp_path / "b.json")]
    for command in (["endurance", str(tmp_path / "scratch.img"), "--size", "64M", "--results",
                     str(tmp_path / "results"), option, value, *extra],
                    ["analyze", "endurance", *snapshots, option, value, *extra]):
        line = refused(*command, watch=[tmp_path], cwd=tmp_path)
        assert f"'{option}': '{value}' is not a positive number" in line, line


# ---- input files that are not regular files ----------------------------------------------------------------

def _bounded_refusal(args: list[str], cwd: Path, watch: list[Path]) -> str:
    """`ssdpts ARGS` with a time and memory bound (read, /dev/zero never ends and fills memory; a FIFO waits for
    a writer for ever): exit 2, one line, nothing under `watch` changed. The line."""
    import resource

    def bound():
        resource.setrlimit(resource.RLIMIT_AS, (4 * 2**30, 4 * 2**30))

    before = snapshot(*watch)
    try:
        p = subprocess.run([sys.executable, "-m", "ssdpts", *args], cwd=cwd, capture_output=True, text=True,
                           timeout=120, stdin=subprocess.DEVNULL, preexec_fn=bound)
    except subprocess.TimeoutExpired:
        pytest.fail(f"ssdpts {' '.join(args)} was still reading after 120 s")
    lines = p.stderr.splitlines()
    assert p.returncode == 2 and len(lines) == 1 and lines[0].startswith(ERROR), (p.returncode, p.stderr[-2000:])
    assert snapshot(*watch) == before
    return lines[0]


def _input_options(zero: str, tmp_path: Path) -> dict[str, tuple[list[str], str]]:
    """Every option that reads a user file, given `zero`: (the command, what its refusal calls the file)."""
    results, img = str(tmp_path / "results"), str(tmp_path / "scratch.img")
    extends = tmp_path / "extends.toml"
    extends.write_text(f'[profile]\nextends = "{zero}"\n')
    rwsw = tmp_path / "rwsw.toml"
    rwsw.write_text(f'[profile]\nextends = "{TINY}"\ntests = ["rwsw"]\n[tests.rwsw]\nworkload = "{zero}"\n')
    return {
        "run --profile": (["run", img, "--size", "64M", "--profile", zero, "--results", results], "profile"),
        "profile extends": (["plan", img, "--size", "64M", "--profile", str(extends)], "profile"),
        "rwsw workload": (["plan", img, "--size", "64M", "--profile", str(rwsw)], "rwsw workload"),
        "plan --claims": (["plan", img, "--size", "64M", "--claims", zero], "claims file"),
        "run --hosts": (["run", "--hosts", zero, "/dev/nvme9n9", "--results", results], "hosts file"),
        "check --criteria": (["check", "x", "--criteria", zero, "--results", results], "criteria file"),
        "compare --spec-sheet": (["compare", "a", "b", "--spec-sheet", zero, "--out", str(tmp_path / "cmp"),
                                  "--results", results], "claims file"),
        "analyze workload": (["analyze", "workload", zero], "workload file"),
        "analyze endurance": (["analyze", "endurance", zero, zero], "health snapshot"),
        "analyze slc-cache": (["analyze", "slc-cache", "--bw-log", zero], "bandwidth log"),
        "capture --from-iolog": (["capture", "--from-iolog", zero, "--out", str(tmp_path / "w.workload.json")],
                                 "fio iolog"),
    }


INPUT_OPTIONS = ("run --profile", "profile extends", "rwsw workload", "plan --claims", "run --hosts", "check --criteria",
                 "compare --spec-sheet", "analyze workload", "analyze endurance", "analyze slc-cache",
                 "capture --from-iolog")


@pytest.mark.parametrize("option", INPUT_OPTIONS)
def test_dev_zero_as_any_input_file_is_refused_unread(tmp_path, option):
    options = _input_options("/dev/zero", tmp_path)
    assert tuple(options) == INPUT_OPTIONS
    args, what = options[option]
    line = _bounded_refusal(args, cwd=tmp_path, watch=[tmp_path])
    assert line == f"{ERROR}{what} /dev/zero is a character device, not a regular file; save it to a file and give that"


def test_fifos_devices_and_directories_as_a_profile_are_refused_unread(tmp_path):
    fifo = tmp_path / "profile.fifo"
    os.mkfifo(fifo)
    (tmp_path / "profile.d").mkdir()
    (tmp_path / "zero.toml").symlink_to("/dev/zero")
    for path, kind in ((fifo, "is a FIFO (named pipe), not a regular file; save it to a file and give that"),
                       ("/dev/urandom", "is a character device, not a regular file; save it to a file and give that"),
                       (tmp_path / "zero.toml", "is a character device, not a regular file; save it to a file and give that"),
                       (tmp_path / "profile.d", "is a directory; give the file inside it")):
        line = _bounded_refusal(["run", str(tmp_path / "scratch.img"), "--size", "64M", "--profile", str(path),
                                 "--results", str(tmp_path / "results")], cwd=tmp_path, watch=[tmp_path])
        assert line == f"{ERROR}profile {path} {kind}"
