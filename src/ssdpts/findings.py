"""What the bench checks found (doctor.py runs them): the records a run stores in its platform record and the one
line its report and `show` quote, read without importing the checks."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from enum import Enum
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .hostinfo import HostRecord


class Status(str, Enum):
    OK = "ok"
    WARN = "warn"
    FAIL = "fail"
    NA = "n/a"          # the fact cannot be read on this machine / device


_SEVERITY = {Status.OK: 0, Status.NA: 1, Status.WARN: 2, Status.FAIL: 3}


@dataclass(frozen=True)
class Finding:
    """What one check found."""

    check: str
    status: Status
    found: str
    fix: str = ""
    ignored: bool = False       # a fail the user chose to run past (--ignore-doctor)

    def to_dict(self) -> dict:
        return {**asdict(self), "status": self.status.value}

    @classmethod
    def from_dict(cls, d: dict) -> "Finding":
        return cls(d["check"], Status(d["status"]), d["found"], d.get("fix", ""), bool(d.get("ignored")))

    def line(self) -> str:
        mark = f"{self.status.value} (ignored)" if self.ignored else self.status.value
        return f"{mark:14} {self.check:13} {self.found}" + (f"\n{'':28} fix: {self.fix}" if self.fix else "")


def worst(findings: list[Finding]) -> Status:
    return max((f.status for f in findings), key=_SEVERITY.__getitem__, default=Status.OK)


def counts(findings: list[Finding]) -> str:
    """'9 ok, 1 warn, 2 n/a'."""
    n = {s: sum(1 for f in findings if f.status is s) for s in Status}
    return ", ".join(f"{k} {s.value}" for s, k in n.items() if k)


def summary(findings: list[Finding]) -> str:
    """One line for report headers: counts, and every check that warned or failed, by name."""
    head = counts(findings)
    notes = [f"{f.check} {f.status.value}{' (ignored)' if f.ignored else ''}: {f.found}"
             for f in findings if f.status in (Status.WARN, Status.FAIL)]
    return head + (f" — {'; '.join(notes)}" if notes else "")


def recorded_checks(host: HostRecord) -> str:
    """The checks a run made before it started, from its platform record (older runs made none)."""
    if host.doctor is None:
        return "not recorded (the run predates ssdpts's bench checks)"
    return summary([Finding.from_dict(f) for f in host.doctor])
