"""Which process runs a run: recorded in the run row, so a run whose process is gone is seen as interrupted.

A pid alone is not enough: after a reboot, or once the kernel hands the pid to another process, the same
number names someone else. The boot id and the process's start time (field 22 of /proc/PID/stat, clock
ticks since boot) tell them apart.
"""

from __future__ import annotations

import os
from dataclasses import asdict, dataclass
from pathlib import Path

BOOT_ID = Path("/proc/sys/kernel/random/boot_id")


def _start_ticks(pid: int) -> int | None:
    """The process's start time in clock ticks since boot, or None when there is no such process."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    # the command name (field 2) is in parentheses and may hold spaces or ')': split after the last ')'
    return int(stat[stat.rindex(")") + 2:].split()[19])


def _boot_id() -> str:
    try:
        return BOOT_ID.read_text().strip()
    except OSError:
        return ""


@dataclass(frozen=True)
class RunOwner:
    pid: int = 0                 # 0: not recorded (runs stored before ssdpts recorded it)
    host: str = ""
    boot_id: str = ""
    start_ticks: int = 0

    @classmethod
    def current(cls) -> "RunOwner":
        import socket       # here and in `here`: a stored owner is read without it

        pid = os.getpid()
        return cls(pid=pid, host=socket.gethostname(), boot_id=_boot_id(), start_ticks=_start_ticks(pid) or 0)

    @classmethod
    def from_dict(cls, d: dict) -> "RunOwner":
        return cls(**{k: d[k] for k in ("pid", "host", "boot_id", "start_ticks") if k in d})

    def to_dict(self) -> dict:
        return asdict(self)

    @property
    def recorded(self) -> bool:
        return self.pid > 0

    @property
    def here(self) -> bool:
        import socket

        return self.host == socket.gethostname()

    def gone(self) -> str | None:
        """Why the process that ran the run no longer runs it, or None while it may (alive, another host,
        or not recorded: nothing can be told)."""
        if not self.recorded or not self.here:
            return None
        if self.boot_id and self.boot_id != _boot_id():
            return f"its process {self.pid} on {self.host} ended with a reboot"
        ticks = _start_ticks(self.pid)
        if ticks is None:
            return f"its process {self.pid} on {self.host} is gone (killed, or ended without recording why)"
        if self.start_ticks and ticks != self.start_ticks:
            return f"its process {self.pid} on {self.host} is gone (the pid now belongs to another process)"
        return None
