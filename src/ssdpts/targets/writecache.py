"""The drive's volatile write cache, as the profile's spec requires it (PTS-E: disabled, WCD; PTS-C:
enabled, WCE). With the user's consent (`--set-write-cache`) it is set before the tests and restored
at the end; without consent, or where it cannot be set or read, the mismatch is a recorded deviation.

Commands: NVMe `nvme set-feature CTRL -f 6 -v 0|1` (feature 6 = Volatile Write Cache, read back with
`get-feature`; the feature is controller-wide, so it goes to the controller /dev/nvmeX: sent to a namespace it
fails with "Feature Not Namespace Specific"), ATA `hdparm -W0|-W1 DEV`, SCSI/SAS `sdparm --set WCE=0|1 DEV`.

The state is always asked from the drive: sysfs `queue/write_cache` of an NVMe namespace says whether the
controller *has* a volatile cache (Identify VWC), not whether it is on (seen on Linux 6.1 in the QEMU test bed,
docs/testing.md).
"""

from __future__ import annotations

import re
import subprocess
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Callable

from ..deviations import RUN_WIDE, WRITE_CACHE_SOURCE, Deviation
from ..errors import SsdptsError
from . import sysfs

# (exit status, stdout + stderr) of a command; tests pass a fake one
Runner = Callable[[list[str]], tuple[int, str]]

SPEC_WORDS = {"enabled": "WCE (volatile write cache enabled)", "disabled": "WCD (volatile write cache disabled)"}
SYSFS_STATES = {"write back": "enabled", "write through": "disabled"}
STATES = {True: "write back", False: "write through"}   # the words sysfs and target info use


def run_command(cmd: list[str]) -> tuple[int, str]:
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, errors="replace", timeout=60)
    except (OSError, subprocess.SubprocessError) as e:
        return 127, f"{cmd[0]}: {e}"
    return p.returncode, (p.stdout or "") + (p.stderr or "")


def spec_words(state: str | None) -> str:
    """The report header's words for a state: WCE / WCD as the spec writes them, or why it is unknown."""
    return SPEC_WORDS.get(state or "", "unknown (not readable on this device)")


@dataclass
class WriteCacheState:
    """One drive: what the profile requires, what the drive had, what it ran with, and how."""

    device: str
    required: str                      # enabled | disabled | unchanged
    before: str | None = None          # enabled | disabled | None = unknown
    during: str | None = None
    changed: bool = False
    restored: bool | None = None       # None: nothing to restore
    commands: list[str] = field(default_factory=list)
    note: str = ""

    def to_dict(self) -> dict:
        return asdict(self)


def tool_for(dev: str, roots: sysfs.SysRoots | None = None) -> str | None:
    """Which command family controls this device's cache: nvme, hdparm (ATA) or sdparm (SCSI); None if none.
    libata disks report the SCSI vendor "ATA" in sysfs."""
    name = Path(dev).name
    if name.startswith("nvme"):
        return "nvme"
    if name.startswith("sd"):
        disk = re.sub(r"\d+$", "", name)
        try:
            vendor = ((roots or sysfs.SysRoots()).sys / "block" / disk / "device" / "vendor").read_text().strip()
        except OSError:
            return "sdparm"
        return "hdparm" if vendor == "ATA" else "sdparm"
    return None


def _tool(target) -> str | None:
    if target.kind != "block" or target.host is not None:
        return None
    kind = (target.info or {}).get("smartctl_device_type")   # what smartctl found, when it was asked
    if Path(target.path).name.startswith("sd") and kind in ("sat", "ata", "scsi"):
        return "sdparm" if kind == "scsi" else "hdparm"
    return tool_for(target.path)


def _commands(tool: str, dev: str, on: bool | None) -> list[str]:
    """The set command (on = True/False) or the read command (on = None)."""
    if tool == "nvme":
        ctrl = sysfs.nvme_controller(Path(dev).name, sysfs.SysRoots())
        dev = f"/dev/{ctrl}" if ctrl else dev     # feature 06h is controller-wide
        return ["nvme", "get-feature", dev, "-f", "6"] if on is None else \
            ["nvme", "set-feature", dev, "-f", "6", "-v", "1" if on else "0"]
    if tool == "hdparm":
        return ["hdparm", "-W", dev] if on is None else ["hdparm", f"-W{1 if on else 0}", dev]
    return ["sdparm", "--get=WCE", dev] if on is None else ["sdparm", "--set", f"WCE={1 if on else 0}", dev]


_READ = {"nvme": re.compile(r"current value:\s*(0x[0-9a-f]+|\d+)", re.I),
         "hdparm": re.compile(r"write-caching\s*=\s*(\d)"),
         "sdparm": re.compile(r"^\s*WCE\s+(\d)", re.M)}


def read_device(dev: str, tool: str | None, run: Runner = run_command) -> str | None:
    """enabled / disabled as the device itself reports it; None when it cannot be asked."""
    if tool is None:
        return None
    rc, out = run(_commands(tool, dev, None))
    # parsed whatever the exit status: sdparm --get exits 5 when WCE is 0 on QEMU's scsi-hd
    m = _READ[tool].search(out) if rc == 0 or tool == "sdparm" else None
    return ("enabled" if int(m.group(1), 0) & 1 else "disabled") if m else None


def read_enabled(dev: str, run: Runner = run_command) -> bool | None:
    """True/False as the device reports it, None when it cannot be asked (no tool, virtual device, error)."""
    state = read_device(dev, tool_for(dev), run)
    return None if state is None else state == "enabled"


def set_enabled(dev: str, enabled: bool, run: Runner = run_command) -> None:
    """Turn the device's volatile write cache on or off (the caller has the user's consent) and check it took."""
    tool = tool_for(dev)
    if tool is None:
        raise SsdptsError(f"cannot set the write cache of {dev}: not an NVMe, ATA or SCSI disk")
    cmd = _commands(tool, dev, enabled)
    rc, out = run(cmd)
    if rc != 0:
        raise SsdptsError(f"'{' '.join(cmd)}' failed: {(out.strip().splitlines() or [f'exit {rc}'])[-1]}")
    now = read_enabled(dev, run)
    if now is not enabled:
        raise SsdptsError(f"'{' '.join(cmd)}' ran but {dev} reports its write cache "
                          f"{'unknown' if now is None else STATES[now]}: the drive did not take the setting")


def read_state(target, run: Runner = run_command) -> str | None:
    """enabled / disabled as the drive reports it (the kernel's sysfs view as a fallback), None if unknown."""
    state = read_device(target.path, _tool(target), run)
    return state or SYSFS_STATES.get((target.info or {}).get("write_cache") or "")


def apply(target, required: str, consent: bool, run: Runner = run_command) -> WriteCacheState:
    """Set one drive's cache as `required` when allowed; the record says what happened either way."""
    st = WriteCacheState(device=target.label_id, required=required)
    if target.kind == "sim":
        st.note = "the simulated drive has no volatile write cache"
        return st
    st.before = st.during = read_state(target, run)
    if required not in ("enabled", "disabled") or st.before == required:
        return st
    tool = _tool(target)
    if not consent:
        st.note = (f"the profile requires the write cache {required}, the drive has it "
                   f"{st.before or 'in an unknown state'}; add --set-write-cache to let ssdpts set it (and restore it)")
        return st
    if tool is None:
        where = "on the remote host" if target.host else f"for a {target.kind} target"
        st.note = f"the write cache cannot be set {where}; it is {st.before or 'unknown'}"
        return st
    cmd = _commands(tool, target.path, required == "enabled")
    rc, out = run(cmd)
    st.commands.append(" ".join(cmd))
    now = read_state(target, run)
    if rc != 0 or now != required:
        last = (out.strip().splitlines() or [f"exit {rc}"])[-1]
        st.note = f"setting the write cache {required} failed ({' '.join(cmd)}: {last}); it is {now or 'unknown'}"
        st.during = now
        return st
    st.during, st.changed = now, True
    return st


def restore(target, st: WriteCacheState, run: Runner = run_command) -> None:
    """Put back what the drive had before the run (only if ssdpts changed it)."""
    if not st.changed or st.before is None:
        return
    tool = _tool(target)
    cmd = _commands(tool, target.path, st.before == "enabled")
    rc, _ = run(cmd)
    st.commands.append(" ".join(cmd))
    st.restored = rc == 0 and read_state(target, run) == st.before


def deviation(st: WriteCacheState) -> Deviation | None:
    if st.required not in ("enabled", "disabled") or st.during == st.required or st.note.startswith("the simulated"):
        return None
    return Deviation("write-cache", f"{st.device}: required {spec_words(st.required)}, ran with "
                                    f"{spec_words(st.during)}" + (f"; {st.note}" if st.note else ""),
                     WRITE_CACHE_SOURCE)


@contextmanager
def applied(store, run_id: str, target, required: str, consent: bool, run: Runner = run_command):
    """Around the tests: set every drive's cache (with consent), record the states and any deviation in the
    run, and restore what was changed at the end, whatever happens."""
    members = target.drives()
    states = [apply(m, required, consent, run) for m in members]

    def record() -> None:
        store.record_step(run_id, RUN_WIDE, "write-cache", "write-cache",
                          {"required": required, "consent": consent, "drives": [s.to_dict() for s in states]})

    record()
    for s in states:
        d = deviation(s)
        if d is not None:
            store.record_deviation(run_id, RUN_WIDE, d)
    try:
        yield states
    finally:
        for m, s in zip(members, states):
            restore(m, s, run)
        record()
