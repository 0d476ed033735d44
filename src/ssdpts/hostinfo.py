"""The test platform, recorded with every run (SNIA report header: Test Platform)."""

from __future__ import annotations

import os
import platform
import socket
from pathlib import Path

from . import __version__


def _cpu_model() -> str:
    try:
        for line in open("/proc/cpuinfo"):
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def _os_name() -> str:
    try:
        for line in open("/etc/os-release"):
            if line.startswith("PRETTY_NAME="):
                return line.split("=", 1)[1].strip().strip('"')
    except OSError:
        pass
    return platform.system()


DMI = Path("/sys/class/dmi/id")
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


def host_info(fio_version: str = "") -> dict:
    mem = 0
    try:
        for line in open("/proc/meminfo"):
            if line.startswith("MemTotal:"):
                mem = int(line.split()[1]) * 1024
    except OSError:
        pass
    return {
        "hostname": socket.gethostname(),
        "cpu_model": _cpu_model(),
        "cpu_cores": os.cpu_count(),
        "memory_bytes": mem,
        "kernel": platform.release(),
        "os": _os_name(),
        "python": platform.python_version(),
        "fio_version": fio_version,
        "ssdpts_version": __version__,
        **dmi_facts(),
    }


def platform_record(target, fio_version: str = "") -> dict:
    """The test platform of the run: this machine, or - for targets on fio servers - the fio hosts, whose
    CPU, memory and OS ssdpts cannot see: marked as such, with this machine kept apart as the controller."""
    members = getattr(target, "members", None) or [target]
    remote = sorted({m.host for m in members if m.host})
    here = host_info(fio_version)
    if not remote:
        return here
    na = "not available from the remote host"
    return {"hostname": ", ".join(remote), "cpu_model": na, "cpu_cores": None, "memory_bytes": None, "kernel": na,
            "os": na, "python": here["python"], "fio_version": f"{fio_version} (client; servers speak the same protocol)",
            "ssdpts_version": here["ssdpts_version"], "remote_hosts": remote, "not_available": na, "controller": here}
