"""Whole-host CPU utilisation over a cell, from /proc/stat's aggregate "cpu" line (all CPUs), beside fio's
own usr_cpu/sys_cpu (which count only fio's threads). proc(5): the fields are USER_HZ ticks since boot;
`guest` time is already inside `user` and is not added again."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

PROC_STAT = Path("/proc/stat")
_FIELDS = ("user", "nice", "system", "idle", "iowait", "irq", "softirq", "steal")


def read_ticks(path: Path = PROC_STAT) -> tuple[int, ...] | None:
    """The aggregate cpu line's first eight counters, or None when /proc/stat cannot be read."""
    try:
        with open(path) as f:
            first = f.readline().split()
    except OSError:
        return None
    if not first or first[0] != "cpu":
        return None
    values = [int(x) for x in first[1:9]]
    return tuple(values + [0] * (8 - len(values)))


def cpu_count(path: Path = PROC_STAT) -> int:
    try:
        return sum(1 for line in open(path) if line[:3] == "cpu" and line[3:4].isdigit())
    except OSError:
        return 0


@dataclass(frozen=True)
class HostCpu:
    """Shares (%) of all CPUs' time over the cell; `busy` = 100 − idle − iowait (iowait is idle time with
    I/O outstanding)."""

    user_pct: float
    system_pct: float
    iowait_pct: float
    irq_pct: float               # hardirq + softirq
    steal_pct: float
    idle_pct: float
    cpus: int
    seconds: float

    @property
    def busy_pct(self) -> float:
        return max(0.0, 100.0 - self.idle_pct - self.iowait_pct)

    @property
    def busy_cores(self) -> float:
        return self.busy_pct / 100 * self.cpus

    def iops_per_busy_core(self, iops: float) -> float | None:
        return iops / self.busy_cores if self.busy_cores > 0 else None

    @classmethod
    def between(cls, before: tuple[int, ...] | None, after: tuple[int, ...] | None, cpus: int,
                hz: int = 100) -> "HostCpu | None":
        if before is None or after is None:
            return None
        d = dict(zip(_FIELDS, (b - a for a, b in zip(before, after))))
        total = sum(d.values())
        if total <= 0:
            return None         # shorter than one tick: not measurable
        pct = (lambda *k: 100.0 * sum(d[x] for x in k) / total)
        return cls(pct("user", "nice"), pct("system"), pct("iowait"), pct("irq", "softirq"), pct("steal"),
                   pct("idle"), cpus, total / hz / max(cpus, 1))
