"""Turn what the user typed into a Target, reading what can be known without writing."""

from __future__ import annotations

import errno
import json
import os
import re
import shutil
import stat
import subprocess
from pathlib import Path

from ..errors import SsdptsError
from ..workload.fio import filename_problem
from . import sysfs, writecache
from .placement import direct_io_alignment, file_placement
from .base import Target
from .record import TargetRecord
from .facts import block_facts
from .identify import smartctl_identity
from .sysfs import SysRoots


def _run_json(cmd: list[str]) -> dict | None:
    if not shutil.which(cmd[0]):
        return None
    try:
        out = subprocess.run(cmd, capture_output=True, text=True, errors="replace", timeout=60)
        return json.loads(out.stdout) if out.stdout.strip().startswith("{") else None
    except (OSError, subprocess.SubprocessError, json.JSONDecodeError):
        return None


REMOTE_SPEC = re.compile(r"^\[?([^\]/]+?)\]?:(\d+):(/[^#]*)(?:#size=(\d+))?$")   # HOST:PORT:/dev/x#size=N


def remote_spec(target: Target) -> str:
    host, port = target.host.rsplit(":", 1)
    return f"{host}:{port}:{target.path}#size={target.size_bytes}"


def open_target(spec: str, size: int | None = None, roots: SysRoots | None = None, probe: bool = True,
                check_free_space: bool = True) -> Target:
    """Block device, regular file (created later if missing) or 'sim:PRESET|FILE'. A dry run (`plan`) passes
    check_free_space=False: it creates no file, so a --size larger than the free space is no reason to refuse."""
    if size is not None and size <= 0:
        raise SsdptsError(f"--size must be greater than zero (got {size}); e.g. --size 8G")
    if spec.startswith("sim:"):
        from .sim import open_sim_target

        return open_sim_target(spec)
    remote = REMOTE_SPEC.match(spec)
    if remote:
        from .remote import remote_target

        host, port, path, sz = remote.groups()
        return remote_target(host, int(port), path, int(sz) if sz else size)
    path = canonical_path(spec)
    if os.path.isdir(path):
        raise SsdptsError(f"{spec} is a directory; name a block device or a file, e.g. {spec.rstrip('/')}/scratch.img "
                          "--size 8G")
    mode = os.stat(path).st_mode if os.path.exists(path) else 0
    if stat.S_ISBLK(mode) or stat.S_ISCHR(mode):
        roots = roots or SysRoots()
        target = (_block_target(spec, canonical_node(path, roots), roots, probe) if stat.S_ISBLK(mode)
                  else _passthrough_target(spec, path, roots, probe))
        if size is not None and size > target.size_bytes:
            raise SsdptsError(f"--size {size} is larger than {spec} ({target.size_bytes} bytes); a block device is "
                              "tested whole: drop --size")
        return target
    if os.path.exists(path) and not stat.S_ISREG(mode):
        raise SsdptsError(f"{spec} is neither a block device nor a regular file; name a device like /dev/nvme0n1 or a file")
    if not os.path.exists(path) and spec.startswith("/dev/"):
        raise SsdptsError(f"{spec} does not exist; check the device name with 'lsblk'")
    problem = filename_problem(path)
    if problem:
        raise SsdptsError(f"refusing {spec}: {problem}; rename the file (fio would open another one)")
    existing = os.path.getsize(path) if os.path.exists(path) else 0
    if size is None and existing == 0:
        raise SsdptsError(f"{spec} does not exist yet; give its size with --size, e.g. --size 8G")
    if not os.path.isdir(os.path.dirname(path)):
        raise SsdptsError(f"cannot create {spec}: directory {os.path.dirname(path)} does not exist")
    if check_free_space and size is not None and size > existing:
        fs = os.statvfs(os.path.dirname(path))
        free = fs.f_bavail * fs.f_frsize
        if size - existing > free:
            raise SsdptsError(f"--size {size} does not fit: {os.path.dirname(path)} has {free} bytes free "
                              f"({free / 2**30:.1f} GiB); choose a smaller --size or another directory")
    return _file_target(spec, path, size or existing, roots or SysRoots())


def _file_target(spec: str, path: str, size: int, roots: SysRoots) -> Target:
    """A file with the facts of the drive under it: file system, device, whole disk (health), and the O_DIRECT
    alignment fio needs (probed on an existing file; else the device's logical block; 4096 when unknown)."""
    where = file_placement(path, roots)
    probed = direct_io_alignment(path)
    if probed:
        lbs, source = probed, f"O_DIRECT probe: {probed}-byte reads accepted on {where.filesystem}"
    elif where.logical_block_size:
        lbs, source = where.logical_block_size, f"logical block of {where.device} (file not probed)"
    else:
        lbs, source = 4096, "assumed 4096 (no block device to read it from)"
    info = {"model": "file", "transport": "file", "filesystem_path": path, "placement": where.description,
            "filesystem": where.filesystem, "mount_point": where.mount_point, "backing_device": where.device,
            "health_device": where.disk, "logical_block_size_source": source,
            "device_logical_block_size": where.logical_block_size,
            "device_physical_block_size": where.physical_block_size}
    if where.why_no_disk:
        info["health_device_note"] = where.why_no_disk
    if where.layers:
        info["layers"] = list(where.layers)           # file system device down to the drives
    if where.drives:                                   # who each drive is, as sysfs names it
        info["drives"] = {d: {k: v for k, v in sysfs.block_info(d[5:], roots).items()
                              if k in ("model", "serial", "firmware") and v} for d in where.drives}
    if len(where.drives) > 1:
        info["health_devices"] = list(where.drives)   # md raid1, a dm over several drives: each one's health
    return Target(kind="file", spec=spec, path=path, size_bytes=size, logical_block_size=lbs,
                  physical_block_size=max(lbs, where.physical_block_size or 4096), info=info)


def reopen_specs(stored: TargetRecord) -> list[str]:
    """What to open to resume a run on the targets it stored (`Target.to_dict`, a set's members): a file by its
    absolute path (a relative name means another file from another directory, and a name may hold spaces), a
    remote target with its size, a device by the name the user gave (by-id names survive a reboot)."""
    out = []
    for m in stored.drives():
        if m.host:
            out.append(f"{m.spec}#size={m.size_bytes}")
        elif m.kind == "sim" or (m.kind == "block" and os.path.isabs(m.spec)):
            out.append(m.spec)
        else:
            out.append(m.path)
    return out


def canonical_path(spec: str) -> str:
    """The absolute path with every symlink resolved: what fio is given and what the safety checks look at
    (a /dev/disk/by-path/pci-0000:00:1f.2-ata-1 link is /dev/sda to both)."""
    path = os.path.abspath(spec)
    try:
        os.stat(path)
    except FileNotFoundError:
        pass                          # a file target created later (through a dangling link: at the file it names)
    except OSError as e:
        loop = " (a symlink loop)" if e.errno == errno.ELOOP else ""
        raise SsdptsError(f"cannot use {spec}: {e.strerror}{loop}; name the device or file itself") from None
    return os.path.realpath(path)


def canonical_node(path: str, roots: SysRoots) -> str:
    """/dev/NAME for a block device node found elsewhere (a copy made with mknod), when that is the same device."""
    node = roots.dev / sysfs.device_name(path, roots)
    try:
        if node.is_block_device() and node.stat().st_rdev == os.stat(path).st_rdev:
            return str(node)
    except OSError:
        pass
    return path


def _run_text(cmd: list[str]) -> str | None:
    if not shutil.which(cmd[0]):
        return None
    try:
        return subprocess.run(cmd, capture_output=True, text=True, errors="replace", timeout=60).stdout
    except (OSError, subprocess.SubprocessError):
        return None


def _nvme_namespace_facts(disk: str, ns: dict | None) -> dict:
    """Active namespaces of the controller (Identify `nn` is only the largest allowed NSID) and the LBA format."""
    out: dict = {}
    listed = _run_json(["nvme", "list-ns", f"/dev/{disk}", "-o", "json"])
    if listed and isinstance(listed.get("nsid_list"), list):
        out["namespaces"] = len(listed["nsid_list"])
    if ns and isinstance(ns.get("lbafs"), list):
        flbas = int(ns.get("flbas") or 0)
        index = (flbas & 0xF) | ((flbas >> 1) & 0x30)     # bits 3:0, and 6:5 as the upper bits (NVMe 2.0)
        if index < len(ns["lbafs"]):
            lbaf = ns["lbafs"][index]
            out["lba_format"] = (f"LBAF {index}: {2 ** int(lbaf.get('ds') or 0)} B data + {int(lbaf.get('ms') or 0)} B "
                                 f"metadata (of {int(ns.get('nlbaf') or 0) + 1} formats)")
    return out


def _block_target(spec: str, path: str, roots: SysRoots, probe: bool) -> Target:
    name = sysfs.device_name(path, roots)
    info = sysfs.block_info(name, roots)
    if info["size_bytes"] == 0:
        raise SsdptsError(f"{spec} has size 0; attach or configure the device first")
    if probe:
        disk = sysfs.whole_disk(name, roots)
        ctrl = ns = feature = None
        if disk.startswith("nvme"):
            ctrl = _run_json(["nvme", "id-ctrl", f"/dev/{disk}", "-o", "json"])
            ns = _run_json(["nvme", "id-ns", f"/dev/{disk}", "-o", "json"])
            feature = _run_text(["nvme", "get-feature", f"/dev/{disk}", "-f", "2"])
            if ctrl:
                info["nvme_id_ctrl"] = {k: ctrl.get(k) for k in ("vid", "sn", "mn", "fr", "tnvmcap", "oacs", "sanicap", "fna", "vwc", "oncs", "nn")}
                info["model"] = (ctrl.get("mn") or "").strip() or info["model"]
                info["serial"] = (ctrl.get("sn") or "").strip() or info["serial"]
                info["firmware"] = (ctrl.get("fr") or "").strip() or info["firmware"]
            info.update(_nvme_namespace_facts(disk, ns))
        smart = _run_json(["smartctl", "-j", "-i", path])
        ident = smartctl_identity(smart)
        if smart and ident.model:
            info["model"] = info["model"] or ident.model
            info["serial"] = info["serial"] or ident.serial
            info["firmware"] = info["firmware"] or ident.firmware
            info["smartctl_device_type"] = (smart.get("device") or {}).get("type")
            protocol = (smart.get("device") or {}).get("protocol")
            if info["transport"] == "sata/sas" and protocol in ("ATA", "SCSI"):
                info["transport"] = "sata" if protocol == "ATA" else "scsi/sas"
        if "lba_format" not in info:
            info["lba_format"] = f"{info['logical_block_size']} B logical / {info['physical_block_size']} B physical"
        info["facts"] = block_facts(name, roots, info, ctrl, ns, smart, feature, info["size_bytes"]).to_dict()
        cache = writecache.read_enabled(f"/dev/{disk}")
        if cache is not None:                # the drive's own answer beats sysfs (stale for NVMe)
            info["write_cache"] = writecache.STATES[cache]
    return Target(kind="block", spec=spec, path=path, size_bytes=info["size_bytes"],
                  logical_block_size=info["logical_block_size"], physical_block_size=info["physical_block_size"],
                  info=info)


def _passthrough_target(spec: str, path: str, roots: SysRoots, probe: bool) -> Target:
    """An NVMe namespace through its generic character device /dev/ngXnY (fio's io_uring_cmd engine): the
    namespace's block device is the target's `path`, so size, identify, health, safety and purge are the block
    device's, and `passthrough` is what fio opens."""
    ng = sysfs.char_device_name(path, roots)
    if not sysfs.is_nvme_generic(ng, roots):
        raise SsdptsError(f"{spec} is a character device but not an NVMe generic device (/dev/ngXnY); name a block "
                          "device like /dev/nvme0n1, an NVMe namespace's /dev/ng0n1, or a file")
    disk = sysfs.nvme_generic_block(ng, roots)
    if disk is None or not (roots.dev / disk).is_block_device():
        raise SsdptsError(f"refusing {spec}: its namespace has no block device (no /dev/nvme{ng[2:]}: the kernel "
                          "makes none for a format its block layer does not take), and ssdpts reads the size and "
                          "checks safety there; format the namespace to a plain LBA format, or test another one")
    target = _block_target(spec, str(roots.dev / disk), roots, probe)
    target.passthrough = path
    target.info["passthrough"] = (f"{path} is the NVMe generic character device of {disk}'s namespace: fio's "
                                  "io_uring_cmd sends it NVMe commands that bypass the block layer")
    return target


def prepare_file(target: Target) -> None:
    """Create or extend a file target to its size, fully allocated (no sparse holes to read as zeros)."""
    from .safety import mark_scratch_file

    p = Path(target.path)
    created = not p.exists()
    with open(p, "ab"):
        pass
    if p.stat().st_size < target.size_bytes:
        fd = os.open(p, os.O_RDWR)
        try:
            os.posix_fallocate(fd, 0, target.size_bytes)
        except OSError:
            os.truncate(p, target.size_bytes)
        finally:
            os.close(fd)          # an open file would keep its file system busy (a study unmounts it)
    if created:
        mark_scratch_file(str(p))
