"""The drive's volatile write cache, asked from the drive itself (not from sysfs).

sysfs `queue/write_cache` of an NVMe namespace says whether the controller *has* a volatile write cache
(Identify VWC), not whether it is on: after `nvme set-feature -f 6 -v 0` it still reads "write back"
(seen on Linux 6.1 in the QEMU test bed, docs/testing.md). So the state is read with the drive's own
command: NVMe Get Features 06h, ATA IDENTIFY via `hdparm -W`, SCSI caching mode page WCE via `sdparm`.
`set_enabled` changes it (callers must have the user's consent) and reads it back.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

from ..errors import SsdptsError
from . import sysfs

STATES = {True: "write back", False: "write through"}   # the words sysfs and the reports use


def _protocol(dev: str) -> str:
    name = Path(dev).name
    if name.startswith("nvme"):
        return "nvme"
    if name.startswith("sd"):
        disk = re.sub(r"\d+$", "", name)
        vendor = Path(f"/sys/block/{disk}/device/vendor")
        try:
            return "ata" if vendor.read_text().strip() == "ATA" else "scsi"   # libata reports vendor "ATA"
        except OSError:
            return "scsi"
    return ""


def _commands(dev: str, enabled: bool | None) -> list[str] | None:
    proto = _protocol(dev)
    if proto == "nvme":
        # feature 06h is controller-wide: sent to a namespace (its NSID) it fails with "Feature Not Namespace Specific"
        ctrl = sysfs.nvme_controller(Path(dev).name, sysfs.SysRoots())
        ctrl_dev = f"/dev/{ctrl}" if ctrl else dev
        return ["nvme", "get-feature", ctrl_dev, "-f", "6"] if enabled is None else \
            ["nvme", "set-feature", ctrl_dev, "-f", "6", "-v", "1" if enabled else "0"]
    if proto == "ata":
        return ["hdparm", "-W", dev] if enabled is None else ["hdparm", f"-W{1 if enabled else 0}", dev]
    if proto == "scsi":
        return ["sdparm", "--get=WCE", dev] if enabled is None else \
            ["sdparm", "--set=WCE" if enabled else "--clear=WCE", dev]
    return None


def _run(cmd: list[str]) -> subprocess.CompletedProcess:
    return subprocess.run(cmd, capture_output=True, text=True, errors="replace", timeout=60)


def read_enabled(dev: str) -> bool | None:
    """True/False as the drive reports it, None when it cannot be asked (no tool, virtual device, error)."""
    cmd = _commands(dev, None)
    if not cmd or not shutil.which(cmd[0]):
        return None
    try:
        p = _run(cmd)
    except (OSError, subprocess.SubprocessError):
        return None
    text = p.stdout    # parsed whatever the exit status: sdparm --get exits 5 when WCE is 0 on QEMU's scsi-hd
    m = (re.search(r"Current value:\s*(?:0x)?([0-9a-fA-F]+)", text) if cmd[0] == "nvme" else
         re.search(r"write-caching\s*=\s*(\d)", text) if cmd[0] == "hdparm" else
         re.search(r"^WCE\s+(\d)", text, re.M))
    if not m:
        return None
    return bool(int(m.group(1), 16 if cmd[0] == "nvme" else 10) & 1)


def set_enabled(dev: str, enabled: bool) -> None:
    """Turn the drive's volatile write cache on or off and check that it took."""
    cmd = _commands(dev, enabled)
    if not cmd:
        raise SsdptsError(f"cannot set the write cache of {dev}: not an NVMe, ATA or SCSI disk")
    if not shutil.which(cmd[0]):
        raise SsdptsError(f"setting the write cache of {dev} needs {cmd[0]}, which is not installed")
    p = _run(cmd)
    if p.returncode != 0:
        last = (p.stderr or p.stdout).strip().splitlines()[-1:] or [f"exit {p.returncode}"]
        raise SsdptsError(f"'{' '.join(cmd)}' failed: {last[0]}")
    now = read_enabled(dev)
    if now is not enabled:
        raise SsdptsError(f"'{' '.join(cmd)}' ran but {dev} reports its write cache "
                          f"{'unknown' if now is None else STATES[now]}: the drive did not take the setting")
