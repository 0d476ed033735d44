#!/usr/bin/python3
"""Runs in the test-bed guest as PID 1 (after guest_init.sh): executes the host's requests.

The host writes XFER/req-NAME.json ({"cmd", "timeout"}); the agent runs the command with bash and writes
XFER/resp-NAME.json ({"rc", "out", "err", "seconds"}), each file renamed into place so that neither side
reads half a file. XFER/ready (the drives found, by serial) says the guest is up; XFER/stop powers it off.
Standard library only: it runs on the host's /usr/bin/python3.
"""

import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path

XFER = Path(sys.argv[1])
# Listing the shared directory over 9p at 20 Hz cost an idle guest 36 % of a host core under TCG (10.7 s of QEMU
# CPU in 30 s; 1.6 s when polling at 2 Hz). Commands come in bursts: poll fast for BUSY_S after the last one.
POLL_S = 0.05
IDLE_POLL_S = 0.5
BUSY_S = 2.0


def _read(p: Path) -> str:
    try:
        return p.read_text(errors="replace").strip()
    except OSError:
        return ""


def _serial(block: Path) -> str:
    """Serial of a disk: NVMe/ATA sysfs attribute, else the SCSI unit serial page (VPD 0x80)."""
    dev = block / "device"
    s = _read(dev / "serial")
    if s:
        return s
    try:
        page = (dev / "vpd_pg80").read_bytes()
        return page[4:4 + page[3]].decode(errors="replace").strip()
    except (OSError, IndexError):
        return ""


def _nvme_ctrl(block: Path) -> str:
    """/dev/nvmeX of a namespace disk (with native multipath the disk hangs off nvme-subsysN)."""
    dev = Path(os.path.realpath(block / "device"))
    if dev.name.startswith("nvme-subsys"):
        ctrls = sorted(p.name for p in dev.iterdir() if p.name.startswith("nvme") and
                       not p.name.startswith("nvme-subsys") and (p / "dev").exists())
        return f"/dev/{ctrls[0]}" if ctrls else ""
    return f"/dev/{dev.name}"


def discover(expected: list[dict]) -> dict:
    found: dict = {}
    for block in sorted(Path("/sys/block").iterdir()):
        serial = _serial(block)
        for d in expected:
            if serial == d["serial"]:
                entry = found.setdefault(d["name"], {"ctrl": "", "disks": []})
                entry["disks"].append(f"/dev/{block.name}")
                if d["bus"] == "nvme":
                    entry["ctrl"] = _nvme_ctrl(block)
    for entry in found.values():
        entry["disks"].sort(key=lambda p: [int(x) if x.isdigit() else x for x in re.split(r"(\d+)", p)])
    return found


def wait_for_drives(expected: list[dict], timeout: float = 60) -> dict:
    deadline = time.monotonic() + timeout
    while True:
        found = discover(expected)
        complete = all(len(found.get(d["name"], {}).get("disks", [])) == len(d["sizes_mib"]) for d in expected)
        if complete or time.monotonic() > deadline:
            return found
        time.sleep(0.2)


def reap() -> None:
    """PID 1 adopts orphans (daemons started by tests): collect the ones that exited."""
    try:
        while os.waitpid(-1, os.WNOHANG)[0] > 0:
            pass
    except ChildProcessError:
        pass


def serve() -> None:
    env = json.loads((XFER / "env.json").read_text())
    os.environ.update(env)
    os.environ["HOME"] = "/tmp/home"
    os.chdir(env.get("SSDPTS_REPO", "/"))
    expected = json.loads((XFER / "drives.json").read_text())
    found = wait_for_drives(expected)
    tmp = XFER / ".ready.tmp"
    tmp.write_text(json.dumps(found))
    os.replace(tmp, XFER / "ready")
    last_request = time.monotonic()
    while not (XFER / "stop").exists():
        reqs = sorted(p for p in XFER.iterdir() if p.name.startswith("req-"))
        if not reqs:
            reap()
            time.sleep(POLL_S if time.monotonic() - last_request < BUSY_S else IDLE_POLL_S)
            continue
        last_request = time.monotonic()
        for req in reqs:
            doc = json.loads(req.read_text())
            req.unlink()
            t0 = time.monotonic()
            try:
                p = subprocess.run(["bash", "-c", doc["cmd"]], capture_output=True, text=True, errors="replace",
                                   timeout=doc.get("timeout", 300), stdin=subprocess.DEVNULL)
                rc, out, err = p.returncode, p.stdout, p.stderr
            except subprocess.TimeoutExpired as e:
                rc, out, err = 124, (e.stdout or b"").decode(errors="replace") if isinstance(e.stdout, bytes) else \
                    (e.stdout or ""), f"timed out after {doc.get('timeout')} s"
            name = req.name[len("req-"):]
            tmp = XFER / f".resp-{name}.tmp"
            tmp.write_text(json.dumps({"rc": rc, "out": out, "err": err, "seconds": time.monotonic() - t0}))
            os.replace(tmp, XFER / f"resp-{name}")


if __name__ == "__main__":
    try:
        serve()
    finally:
        os.sync()
        Path("/proc/sysrq-trigger").write_text("o")
