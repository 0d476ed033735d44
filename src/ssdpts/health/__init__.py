"""Health snapshots: SMART / NVMe health log / simulator counters as one normalised record.

    from ssdpts.health import snapshot, deltas
    from ssdpts.health.record import HealthSnapshot
    before = snapshot(target)          # never raises; {"available": False, "reason": ...} when there is nothing
    ...
    d = deltas(HealthSnapshot.from_dict(before), HealthSnapshot.from_dict(snapshot(target)))
    # host/NAND bytes, WAF, wear of what happened in between

`snapshot` gives the normalised record in the form it is stored (a dict); the runner stores one before and
after every test (steps `health:before` / `health:after`), which the store reads back as `HealthSnapshot`
(record.py); the endurance test polls it. Field names and units: docs/endurance.md.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import time
from typing import TYPE_CHECKING

from ..lazy import lazy_attributes
from .parse import FIELDS, empty_record, finish, from_sim_counters, merge, parse_nvme_cli, parse_smartctl

if TYPE_CHECKING:
    from .record import HealthSnapshot

__all__ = ["snapshot", "deltas", "project", "FIELDS", "brief"]


# `deltas` and `project` (projection.py), imported when first named: the store reads a stored snapshot
# (health.record) without the wear arithmetic
__getattr__ = lazy_attributes(__name__, {"deltas": "projection", "project": "projection"})


TIMEOUT_S = 30
# virtual block devices: no SMART, no health log (the name says so before any tool is asked)
_VIRTUAL = re.compile(r"^(loop|zram|ram|nbd|dm-|md|rbd|vd|xvd|sr|fd)")


def _run_json(cmd: list[str]) -> tuple[dict | None, str]:
    """(parsed JSON or None, error text). smartctl's exit status is a bit mask: its JSON is used even if != 0."""
    if not shutil.which(cmd[0]):
        return None, f"{cmd[0]} is not installed"
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, errors="replace", timeout=TIMEOUT_S)
    except subprocess.TimeoutExpired:
        return None, f"{' '.join(cmd)} timed out after {TIMEOUT_S} s"
    except OSError as e:
        return None, f"{cmd[0]}: {e}"
    try:
        doc = json.loads(p.stdout) if p.stdout.strip() else None
    except ValueError:
        doc = None
    if doc is None:
        err = (p.stderr or p.stdout or "").strip().splitlines()
        return None, f"{' '.join(cmd)} failed (exit {p.returncode}): {err[-1] if err else 'no output'}"
    return doc, ""


def _disk(path: str) -> str:
    """/dev/nvme0n1p2 -> /dev/nvme0n1, /dev/sda3 -> /dev/sda (SMART belongs to the whole device)."""
    real = os.path.realpath(path)
    name = os.path.basename(real)
    m = re.match(r"^(nvme\d+n\d+)p\d+$", name) or re.match(r"^(mmcblk\d+)p\d+$", name) or \
        re.match(r"^((?:sd|hd|vd|xvd)[a-z]+)\d+$", name)
    return os.path.join(os.path.dirname(real), m.group(1)) if m else real


def _block_snapshot(target) -> dict:
    dev = _disk(target.path)
    name = os.path.basename(dev)
    transport = (target.info or {}).get("transport")
    if _VIRTUAL.match(name) or transport in ("loop", "zram"):
        kind = transport if transport in ("loop", "zram") else name.rstrip("0123456789")
        rec = empty_record("none", f"{dev} is a virtual block device ({kind}): it has no SMART or NVMe health data")
        rec["device"] = dev
        return finish(rec)
    nvme = name.startswith("nvme") or transport == "nvme"
    doc, err = _run_json(["smartctl", "-j", "-a", dev])
    rec = parse_smartctl(doc, dev) if doc is not None else finish({**empty_record("smartctl", err), "device": dev})
    if doc is None and shutil.which("smartctl"):
        rec["failures"] = [err]          # smartctl ran and failed: a failure, with its message
    if nvme:
        log, err2 = _run_json(["nvme", "smart-log", dev, "-o", "json"])
        ctrl, _ = _run_json(["nvme", "id-ctrl", dev, "-o", "json"])
        if log is not None:
            rec = merge(rec, parse_nvme_cli(log, ctrl, dev))
        elif not rec.get("available"):
            rec["reason"] = f"{rec.get('reason')}; nvme-cli: {err2}"
    rec["timestamp"] = time.time()       # when ssdpts took it (smartctl's local_time has 1 s resolution)
    return rec


def _drive_snapshot(disk: str) -> dict:
    from ..targets.base import Target      # here: the store reads health.record, and reading needs no target

    transport = "loop" if os.path.basename(disk).startswith("loop") else None
    return _block_snapshot(Target(kind="block", spec=disk, path=disk, size_bytes=0,
                                  info={"transport": transport} if transport else {}))


def _file_snapshot(target) -> dict:
    """A file's health is the drive's under its file system (resolved by targets.filesystem), when known."""
    info = target.info or {}
    disk = info.get("health_device")
    if disk:
        rec = _drive_snapshot(disk)
        rec["file_placement"] = info.get("placement")
        return rec
    why = info.get("health_device_note") or "files have no SMART or NVMe health data (test the block device to get it)"
    if info.get("health_devices"):
        # several drives under one file system (md raid1, dm over two disks): each drive's record, none for the file
        rec = empty_record("set", f"{target.path} ({info.get('placement', 'a file')}): health data {why}")
        rec["members"] = {d: _drive_snapshot(d) for d in info["health_devices"]}
        rec["device"], rec["file_placement"] = target.path, info.get("placement")
        return rec
    rec = empty_record("none", f"{target.path} ({info.get('placement', 'a file')}): health data {why}")
    rec["device"] = target.path
    return finish(rec)


def snapshot(target) -> dict:
    """The target's health now, as a normalised record (see docs/endurance.md). Never raises."""
    try:
        kind = getattr(target, "kind", None)
        if getattr(target, "host", None):
            from ..targets.remote import NOT_AVAILABLE

            # smartctl here would read this machine's device of the same name, not the fio host's drive
            rec = empty_record("none", f"health data {NOT_AVAILABLE} ({target.host}): ssdpts reaches it through "
                                       "fio only")
            rec["device"] = f"{target.host}:{target.path}"
            return finish(rec)
        if kind == "set":
            # several drives at once: no one drive's figures stand for the set, each drive's record is kept
            rec = empty_record("set", "a parallel run: each drive's health is under members")
            rec["members"] = {m.label_id: snapshot(m) for m in target.drives()}
            return rec
        if kind == "sim":
            rated = ((target.info or {}).get("params") or {}).get("rated_pe_cycles")
            rec = from_sim_counters(target.counters(), device=target.path, rated_pe=rated)
            rec["model"] = (target.info or {}).get("model")
            return rec
        if kind == "file":
            return _file_snapshot(target)
        if kind == "block":
            return _block_snapshot(target)
        return finish(empty_record("none", f"unknown target kind {kind!r}"))
    except Exception as e:  # informative data only: never fail a run for it, but record it as a failure
        rec = empty_record("error", f"health snapshot failed: {type(e).__name__}: {e}")
        rec["failures"] = [rec["reason"]]
        return finish(rec)


def brief(rec: HealthSnapshot) -> str:
    """One line for logs and progress: what the snapshot says."""
    if not rec.available:
        return f"health data not available ({rec.reason or 'no snapshot'})"
    parts = []
    if rec.percentage_used is not None:
        parts.append(f"wear {rec.percentage_used:.4g} %")
    if rec.host_written_bytes is not None:
        parts.append(f"host written {rec.host_written_bytes / 1e12:.4g} TB")
    if rec.media_written_bytes is not None:
        parts.append(f"NAND written {rec.media_written_bytes / 1e12:.4g} TB")
    if rec.temperature_c is not None:
        parts.append(f"{rec.temperature_c:.0f} °C")
    return ", ".join(parts) or "health data available"
