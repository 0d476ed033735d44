"""Purge: put the device back as if never written (SNIA), or as close as the device allows.

`auto` picks the strongest supported method. TRIM (blkdiscard) is *not* a SNIA purge; when it is
all there is, the results say so.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import time
from typing import Callable

from ..errors import SsdptsError
from ..realtime.timing import PURGE_TIMEOUT_S, TOOL_TIMEOUT_S
from . import sysfs
from .base import HYPOTHETICAL, Target
from .facts import DeviceFacts
from .hold import released
from .identify import LbaFormat
from .record import PurgeRecord
from .sysfs import SysRoots

METHODS = ("auto", "nvme-sanitize", "nvme-format", "ata-secure-erase", "sg-format", "trim", "none")
# SNIA purge families (SECURITY ERASE, FORMAT UNIT, sanitize); the simulated drive's purge models one.
# A file's truncate + fallocate and TRIM never are: the device below keeps its internal state.
SNIA_PURGES = {"nvme-sanitize", "nvme-format", "ata-secure-erase", "sg-format", "sim-purge"}


def _run(cmd: list[str], timeout: float | None = None) -> str:
    if not shutil.which(cmd[0]):
        raise SsdptsError(f"purge needs {cmd[0]}, which is not installed; install it or choose --purge trim")
    timeout = PURGE_TIMEOUT_S if timeout is None else timeout
    try:
        # errors="replace": sg_format prints the LU name as raw bytes (seen: 0xf6), not UTF-8
        out = subprocess.run(cmd, capture_output=True, text=True, errors="replace", timeout=timeout)
    except subprocess.TimeoutExpired:
        raise SsdptsError(f"purge command '{' '.join(cmd)}' did not finish in {timeout / 3600:g} h; check the drive "
                          "(it may still be erasing), then resume or choose another --purge method") from None
    if out.returncode != 0:
        last = (out.stderr or out.stdout).strip().splitlines()[-1:] or [f"exit {out.returncode}"]
        raise SsdptsError(f"purge command '{' '.join(cmd)}' failed: {last[0]}; try another --purge method")
    if cmd[0] == "hdparm" and _ata_aborted(out.stderr):
        raise SsdptsError(f"purge command '{' '.join(cmd)}' failed: the drive aborted it (ATA ABRT); "
                          "try another --purge method")
    return out.stdout


def _ata_aborted(stderr: str) -> bool:
    """hdparm exits 0 when the drive aborts an ATA command; the sense data it prints says so
    (fixed-format sense 70h, sense key 0Bh ABORTED COMMAND), seen on QEMU's AHCI disk."""
    m = re.search(r"sb\[\]:\s*7[01] [0-9a-f]{2} ([0-9a-f]{2})", stderr)
    return bool(m) and int(m.group(1), 16) & 0xF == 0xB


def sanitize_status(text: str, disk: str) -> int:
    """SSTAT bits 2:0 from `nvme sanitize-log -o json` (flat, or keyed by the device name). A log that cannot be
    read is a failure: "done" would be a guess, and the drive may still be sanitizing (or have failed)."""
    import json

    try:
        log = json.loads(text)
        if isinstance(log, dict) and "sstat" not in log and len(log) == 1 and isinstance(next(iter(log.values())), dict):
            log = next(iter(log.values()))
        return int(log["sstat"]) & 0x7
    except (ValueError, TypeError, KeyError, AttributeError, StopIteration):
        first = text.strip().splitlines()[:1] or ["(empty)"]
        raise SsdptsError(f"cannot read the NVMe sanitize log of {disk} (nvme sanitize-log printed {first[0][:80]!r}); "
                          f"the purge is not known to be done: check 'nvme sanitize-log {disk}', then resume") from None


def _wait_sanitize(disk: str, timeout: float | None = None) -> None:
    """Sanitize runs in the background and the drive aborts I/O meanwhile: wait until the log says done."""
    timeout = PURGE_TIMEOUT_S if timeout is None else timeout
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        status = sanitize_status(_run(["nvme", "sanitize-log", disk, "-o", "json"]), disk)
        if status in (0, 1):          # never sanitized / completed
            return
        if status == 3:
            raise SsdptsError(f"NVMe sanitize of {disk} failed (sanitize log status 3); see 'nvme sanitize-log {disk}'")
        time.sleep(5)
    raise SsdptsError(f"NVMe sanitize of {disk} did not finish in {timeout / 3600:.0f} h")


def supported_methods(target: Target, roots: SysRoots | None = None) -> list[str]:
    """Methods this device supports, strongest first."""
    roots = roots or SysRoots()
    if target.kind != "block":
        return []
    name = sysfs.device_name(target.path, roots)
    disk = sysfs.whole_disk(name, roots)
    found: list[str] = []
    ctrl = target.info.get("nvme_id_ctrl") or {}
    if name != disk:
        # a partition: sanitize / format / secure erase act on the whole disk, so only TRIM of the
        # partition itself is allowed
        return ["trim"] if int(target.info.get("discard_max_bytes") or 0) > 0 else []
    if disk.startswith("nvme") and ctrl:
        # active namespaces; Identify `nn` is the largest NSID allowed (256 on QEMU, 32..128 on enterprise
        # drives with namespace management), a fallback only when they could not be listed
        namespaces = int(target.info.get("namespaces") or ctrl.get("nn") or 1)
        # sanitize acts on the whole NVM subsystem, format on every namespace when FNA bit 0 is set:
        # only when this namespace is the controller's only one
        if int(ctrl.get("sanicap") or 0) & 0x3 and namespaces == 1:
            found.append("nvme-sanitize")
        if int(ctrl.get("oacs") or 0) & 0x2 and (namespaces == 1 or not int(ctrl.get("fna") or 0) & 0x1):
            found.append("nvme-format")
    elif disk.startswith("sd") and shutil.which("hdparm"):
        try:
            text = subprocess.run(["hdparm", "-I", f"/dev/{disk}"], capture_output=True, text=True, timeout=TOOL_TIMEOUT_S).stdout
            sec = text.split("Security:", 1)[1][:600] if "Security:" in text else ""
            if re.search(r"^\s*supported\s*$", sec, re.M) and re.search(r"not\s+frozen", sec):
                found.append("ata-secure-erase")
        except (OSError, subprocess.SubprocessError):
            pass
        # SCSI FORMAT UNIT only on SCSI/SAS: libata does not translate it for SATA drives ("sat": Invalid opcode)
        if target.info.get("smartctl_device_type") == "scsi" and shutil.which("sg_format"):
            found.append("sg-format")
    if int(target.info.get("discard_max_bytes") or 0) > 0:
        found.append("trim")
    return found


def check_method(target: Target, method: str, roots: SysRoots | None = None) -> None:
    """A purge method the user named is possible on every local block device of `target`: refused before a run
    is created, not when its first test begins (auto and none always are; files, simulated and remote drives
    have their own purge)."""
    if method in ("auto", "none"):
        return
    for m in target.drives():
        if m.kind != "block" or m.host is not None:
            continue
        supported = supported_methods(m, roots)
        if method not in supported:
            instead = " or ".join(f"--purge {s}" for s in supported + ["none"])
            raise SsdptsError(f"--purge {method} is not possible on {m.path}: it is not supported there, or it would "
                              f"also erase other partitions or namespaces of the same drive; use {instead}")


# a purge done by the engine that reaches the drive (engines/interface.py Engine.purge): None leaves it to this module
ThroughEngine = Callable[[Target, str], "PurgeRecord | None"]


def purge(target: Target, method: str = "auto", roots: SysRoots | None = None,
          through: ThroughEngine | None = None) -> PurgeRecord:
    """Purge `target` (consent and safety were checked by the caller). `through`: the run's engine's purge, asked
    first for every drive (a remote host's drive can only be purged through the engine that reaches it)."""
    if method not in METHODS:
        raise SsdptsError(f"unknown purge method {method!r}; allowed: {', '.join(METHODS)}")
    t0 = time.monotonic()
    if target.kind == "set":
        records = [purge(m, method, roots, through) for m in target.members]
        return PurgeRecord(",".join(sorted({r.method for r in records})), all(r.snia_purge for r in records),
                           " ; ".join(r.command for r in records), time.monotonic() - t0,
                           " | ".join(f"{m.label_id}: {r.method}{'' if r.snia_purge else ' (not a SNIA purge)'}"
                                      for m, r in zip(target.members, records)))
    done = through(target, method) if through is not None else None
    if done is not None:
        return done
    if target.host is not None:
        raise SsdptsError(f"{target.label_id} is on host {target.host}: only the remote engine can purge it; "
                          "purge it through the run's engine (ctx.purger.purge)")
    if target.kind == "file":
        # empty and reallocate in place: same inode, so the run's lock on the file stays valid
        os.truncate(target.path, 0)
        fd = os.open(target.path, os.O_RDWR)
        try:
            os.posix_fallocate(fd, 0, target.size_bytes)
        except OSError:
            os.ftruncate(fd, target.size_bytes)
        finally:
            os.close(fd)
        return PurgeRecord("file-recreate", False, f"truncate + fallocate {target.path}", time.monotonic() - t0,
                           "file targets are emptied and reallocated: not a SNIA purge (the filesystem and the "
                           "device below keep their state)")
    if target.kind == "sim":
        target.drive.purge()
        return PurgeRecord("sim-purge", True, "SimDrive.purge()", 0.0, "simulated drive returned to fresh-out-of-box")
    if method == "none":
        return PurgeRecord("none", False, "", 0.0, "no purge requested: results start from the device's current state")
    supported = supported_methods(target, roots)
    if method == "auto":
        if not supported:
            return PurgeRecord("none", False, "", 0.0,
                               "device supports no purge or TRIM: results start from its current state")
        method = supported[0]
    dev = target.path
    disk = "/dev/" + sysfs.whole_disk(sysfs.device_name(dev, roots or SysRoots()), roots or SysRoots())
    check_method(target, method, roots)
    if method == "nvme-sanitize":
        sanicap = int((target.info.get("nvme_id_ctrl") or {}).get("sanicap") or 0)
        action, what = ("2", "block erase") if sanicap & 0x2 else ("4", "crypto erase")
        cmd = ["nvme", "sanitize", disk, f"--sanact={action}"]
        _run(cmd)
        _wait_sanitize(disk)
        note = f"NVMe sanitize ({what})"
    elif method == "nvme-format":
        cmd = nvme_format_command(dev)
        _run(cmd)
        note = "NVMe format with user-data erase (SES=1)"
    elif method == "ata-secure-erase":
        _run(["hdparm", "--user-master", "u", "--security-set-pass", "ssdpts", disk])
        cmd = ["hdparm", "--user-master", "u", "--security-erase", "ssdpts", disk]
        try:
            _run(cmd)
        except SsdptsError:
            # never leave the drive locked with our temporary password
            subprocess.run(["hdparm", "--user-master", "u", "--security-disable", "ssdpts", disk],
                           capture_output=True, timeout=TOOL_TIMEOUT_S)
            raise
        note = "ATA SECURITY ERASE UNIT"
    elif method == "sg-format":
        cmd = ["sg_format", "--format", "--quick", disk]
        _run(cmd)
        note = "SCSI FORMAT UNIT"
    elif method == "trim":
        cmd = ["blkdiscard", "-f", dev]
        _run(cmd)
        note = "TRIM of every LBA (blkdiscard): not a SNIA purge; the drive may keep internal state"
    else:
        raise SsdptsError(f"purge method {method} is not supported here")
    return PurgeRecord(method, method in SNIA_PURGES, " ".join(cmd), time.monotonic() - t0, note)


def nvme_format_command(dev: str, lba_format: int | None = None) -> list[str]:
    """nvme-cli's format with user-data erase (SES=1); `lba_format` switches the namespace to that LBA format
    (e.g. 512 -> 4096-byte sectors, seed 003's ISDCT `nvmeformat LBAFormat=3 SecureEraseSetting=1`)."""
    return ["nvme", "format", dev, "--ses=1", *([f"--lbaf={lba_format}"] if lba_format is not None else []), "--force"]


def chosen_lba_format(target: Target, lba_format: int) -> LbaFormat:
    """The namespace's LBA format `lba_format`, or one line naming the formats it has."""
    facts = DeviceFacts.from_dict(target.info.get("facts"))
    formats = facts.lba_formats if facts else []
    if target.kind != "block" or target.host is not None or not formats:
        raise SsdptsError(f"refusing {target.label_id}: choosing an LBA format needs a local NVMe namespace whose "
                          "formats nvme-cli can read (nvme id-ns); this target lists none")
    found = next((f for f in formats if f.index == lba_format), None)
    if found is None:
        raise SsdptsError(f"{target.label_id} has no LBA format {lba_format}; it has "
                          + ", ".join(f.label() for f in formats))
    return found


def format_namespace(target: Target, lba_format: int) -> PurgeRecord:
    """NVMe format with user-data erase into LBA format `lba_format` (a SNIA purge, and a new sector size)."""
    chosen = chosen_lba_format(target, lba_format)
    t0 = time.monotonic()
    cmd = nvme_format_command(target.path, lba_format)
    # after formatting, nvme-cli sets the new block size (BLKBSZSET), which the kernel refuses (EBUSY) while
    # another descriptor holds the device O_EXCL: let go of the run's hold for the command (QEMU test bed)
    with released(target.path):
        _run(cmd)
    return PurgeRecord("nvme-format", True, " ".join(cmd), time.monotonic() - t0,
                       f"NVMe format with user-data erase (SES=1) into {chosen.label()}")


def trim_all(target: Target, roots: SysRoots | None = None) -> PurgeRecord:
    """TRIM (discard) every LBA, whatever --purge says: the simulated drive's unmap, blkdiscard on a block
    device. Never a SNIA purge: the drive keeps its block state (and may still erase later)."""
    if target.kind == "set":
        records = [trim_all(m, roots) for m in target.members]
        return PurgeRecord("trim", False, " ; ".join(r.command for r in records), sum(r.seconds for r in records),
                           records[0].note)
    if target.kind == "sim":
        target.drive.trim(0, target.size_bytes)
        return PurgeRecord("trim", False, "SimDrive.trim(0, capacity)", 0.0,
                           "TRIM of every LBA: not a SNIA purge; the drive keeps its blocks' state")
    if target.kind == "block" and target.host is None and "trim" in supported_methods(target, roots):
        return purge(target, "trim", roots)
    raise SsdptsError(f"TRIM of every LBA is not possible on {target.label_id} (a {target.kind} target without "
                      "discard support here); leave trim out of the study's methods")


def planned_purge(target: Target, method: str = "auto", roots: SysRoots | None = None) -> PurgeRecord:
    """What `purge` would do on `target`, without doing it (for `ssdpts plan`); seconds is 0: not measured."""
    if target.kind == "set":
        plans = [planned_purge(m, method, roots) for m in target.drives()]
        return PurgeRecord(",".join(sorted({p.method for p in plans})), all(p.snia_purge for p in plans), "", 0.0,
                           " | ".join(f"{m.label_id}: {p.method}" for m, p in zip(target.drives(), plans)))
    if target.host is not None:
        ok = method in ("auto", "trim")
        return PurgeRecord("trim" if ok else "none", False, "", 0.0,
                           "TRIM through a remote fio trim job" if ok else f"{method} cannot run through fio remotely")
    if target.kind == "file":
        return PurgeRecord("file-recreate", "file-recreate" in SNIA_PURGES, "", 0.0,
                           "the file is emptied and reallocated")
    if target.kind == "sim":
        return PurgeRecord("sim-purge", True, "", 0.0, "simulated drive returned to fresh-out-of-box")
    if method == "none":
        return PurgeRecord("none", False, "", 0.0, "no purge requested")
    if target.kind == HYPOTHETICAL:
        return PurgeRecord(method, method == "auto" or method in SNIA_PURGES, "", 0.0, "chosen at run time: the drive's "
            "sanitize, format or secure erase; a drive with none is not purged, and the test is non-conformant" if method == "auto" else
            "whether the drive supports it is checked at run time")
    supported = supported_methods(target, roots)
    chosen = (supported[0] if supported else "none") if method == "auto" else method
    if chosen != "none" and chosen not in supported:
        return PurgeRecord(chosen, False, "", 0.0, f"{chosen} is not possible on this device: the run would refuse it")
    return PurgeRecord(chosen, chosen in SNIA_PURGES, "", 0.0,
                       "" if chosen in SNIA_PURGES else "not a SNIA purge: the test would be non-conformant")
