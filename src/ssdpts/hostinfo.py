"""The test platform, recorded with every run (SNIA report header: Test Platform)."""

from __future__ import annotations

import os
from dataclasses import dataclass, replace
from pathlib import Path

from . import __version__
from .records import from_data, to_data


def _cpu_model() -> str:
    try:
        for line in open("/proc/cpuinfo"):
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    import platform     # here and below: reading a stored run's record needs neither platform nor socket

    return platform.processor() or "unknown"


def _os_name() -> str:
    try:
        for line in open("/etc/os-release"):
            if line.startswith("PRETTY_NAME="):
                return line.split("=", 1)[1].strip().strip('"')
    except OSError:
        pass
    import platform

    return platform.system()


DMI = Path("/sys/class/dmi/id")
REMOTE_NOT_AVAILABLE = "not available from the remote host"   # a fio server's CPU, memory, OS and board
DMI_FIELDS = ("board_vendor", "board_name", "bios_vendor", "bios_version", "bios_date")


def dmi_facts(root: Path = DMI) -> dict:
    """Motherboard and BIOS from the SMBIOS tables the kernel exposes; "not available (why)" per field."""
    if not root.is_dir():
        why = f"not available ({root} is absent: no SMBIOS/DMI tables, e.g. a non-x86 or some virtual hosts)"
        return {f: why for f in DMI_FIELDS}
    out = {}
    for f in DMI_FIELDS:
        try:
            out[f] = (root / f).read_text().strip() or "not available (empty in the DMI table)"
        except OSError as e:
            out[f] = f"not available ({root / f}: {e.strerror})"
    return out


@dataclass(frozen=True)
class HostRecord:
    """The test platform stored with a run (runs.host_json). A key an older run did not store reads as None
    ("not recorded"); keys a newer ssdpts added are ignored."""

    hostname: str | None = None
    cpu_model: str | None = None
    cpu_cores: int | None = None
    memory_bytes: int | None = None
    kernel: str | None = None
    os: str | None = None
    python: str | None = None
    fio_version: str | None = None
    ssdpts_version: str | None = None
    # motherboard and BIOS (DMI_FIELDS), each a value or "not available (why)"; None: the run predates them
    board_vendor: str | None = None
    board_name: str | None = None
    bios_vendor: str | None = None
    bios_version: str | None = None
    bios_date: str | None = None
    # targets on fio servers: their hosts, the words for what cannot be seen from here, and this machine
    remote_hosts: list[str] | None = None
    not_available: str | None = None
    controller: HostRecord | None = None
    # the bench checks made before the run (ssdpts doctor's findings, as Finding.to_dict); None: made none
    doctor: list[dict] | None = None

    def to_json(self) -> dict:
        """As stored: the keys this run recorded (an unrecorded one stays absent, as older runs stored it)."""
        out = {k: v for k, v in to_data(self).items() if v is not None}
        if self.controller is not None:
            out["controller"] = self.controller.to_json()
        return out

    @classmethod
    def from_json(cls, data: dict | None) -> HostRecord:
        return from_data(cls, data or {})

    def with_checks(self, findings: list[dict]) -> HostRecord:
        return replace(self, doctor=findings)


def host_info(fio_version: str = "") -> HostRecord:
    import platform
    import socket

    mem = 0
    try:
        for line in open("/proc/meminfo"):
            if line.startswith("MemTotal:"):
                mem = int(line.split()[1]) * 1024
    except OSError:
        pass
    return HostRecord(hostname=socket.gethostname(), cpu_model=_cpu_model(), cpu_cores=os.cpu_count(),
                      memory_bytes=mem, kernel=platform.release(), os=_os_name(), python=platform.python_version(),
                      fio_version=fio_version, ssdpts_version=__version__, **dmi_facts())


def platform_record(target, fio_version: str = "") -> HostRecord:
    """The test platform of the run: this machine, or - for targets on fio servers - the fio hosts, whose
    CPU, memory and OS ssdpts cannot see: marked as such, with this machine kept apart as the controller."""
    members = getattr(target, "members", None) or [target]
    remote = sorted({m.host for m in members if m.host})
    here = host_info(fio_version)
    if not remote:
        return here
    na = REMOTE_NOT_AVAILABLE
    return HostRecord(hostname=", ".join(remote), cpu_model=na, kernel=na, os=na, python=here.python,
                      fio_version=f"{fio_version} (client; servers speak the same protocol)",
                      ssdpts_version=here.ssdpts_version, remote_hosts=remote, not_available=na, controller=here)
