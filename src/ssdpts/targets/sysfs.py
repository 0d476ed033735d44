"""Reading block-device facts from sysfs and /proc. Roots are parameters so tests can use fake trees."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path


@dataclass
class SysRoots:
    sys: Path = Path("/sys")
    proc: Path = Path("/proc")
    dev: Path = Path("/dev")


def _read(path: Path, default: str = "") -> str:
    try:
        return path.read_text().strip()
    except OSError:
        return default


def read_text(path: Path, default: str = "") -> str:
    """A sysfs or /proc file's text, stripped; `default` when it cannot be read."""
    return _read(path, default)


def device_name(dev_path: str, roots: SysRoots) -> str:
    """Kernel name (e.g. 'loop3', 'nvme0n1p2') of a block device node, via its major:minor."""
    st = os.stat(dev_path)
    majmin = f"{os.major(st.st_rdev)}:{os.minor(st.st_rdev)}"
    link = roots.sys / "dev" / "block" / majmin
    if link.exists():
        return Path(os.path.realpath(link)).name
    return Path(os.path.realpath(dev_path)).name


def block_dir(name: str, roots: SysRoots) -> Path:
    """/sys/class/block/NAME resolved (works for partitions too)."""
    p = roots.sys / "class" / "block" / name
    if p.exists():
        return Path(os.path.realpath(p))
    return roots.sys / "block" / name


def partitions(name: str, roots: SysRoots) -> list[str]:
    d = block_dir(name, roots)
    if not d.is_dir():
        return []
    return sorted(c.name for c in d.iterdir() if (c / "partition").exists())


def whole_disk(name: str, roots: SysRoots) -> str:
    """The parent disk of a partition, or the name itself."""
    d = block_dir(name, roots)
    if (d / "partition").exists():
        return d.parent.name
    return name


def nvme_controller(name: str, roots: SysRoots) -> str | None:
    """'nvme0' for namespace disk 'nvme0n1' (with native multipath the disk hangs off nvme-subsysN: its
    first controller). Admin commands that are not namespace specific go to the controller."""
    dev = Path(os.path.realpath(block_dir(whole_disk(name, roots), roots) / "device"))
    if dev.name.startswith("nvme-subsys"):
        ctrls = sorted(p.name for p in dev.iterdir() if p.name.startswith("nvme") and not p.name.startswith("nvme-")
                       and (p / "dev").exists()) if dev.is_dir() else []
        return ctrls[0] if ctrls else None
    return dev.name if dev.name.startswith("nvme") else None


def majmin(name: str, roots: SysRoots) -> str:
    return _read(block_dir(name, roots) / "dev")


def read_only(name: str, roots: SysRoots) -> bool:
    return _read(block_dir(name, roots) / "ro") == "1"


def holders(name: str, roots: SysRoots) -> list[str]:
    d = block_dir(name, roots) / "holders"
    return sorted(c.name for c in d.iterdir()) if d.is_dir() else []


def block_info(name: str, roots: SysRoots) -> dict:
    disk = whole_disk(name, roots)
    d = block_dir(name, roots)
    dd = block_dir(disk, roots)
    sectors = int(_read(d / "size", "0") or 0)
    sched = _read(dd / "queue" / "scheduler")
    active = sched[sched.find("[") + 1:sched.find("]")] if "[" in sched else sched
    return {
        "name": name,
        "model": _read(dd / "device" / "model") or _read(dd / "device" / "name") or None,
        "serial": _read(dd / "device" / "serial") or _read(dd / "serial") or None,
        "firmware": _read(dd / "device" / "firmware_rev") or _read(dd / "device" / "rev") or None,
        "size_bytes": sectors * 512,
        "logical_block_size": int(_read(dd / "queue" / "logical_block_size", "512") or 512),
        "physical_block_size": int(_read(dd / "queue" / "physical_block_size", "4096") or 4096),
        "rotational": _read(dd / "queue" / "rotational") == "1",
        "scheduler": active or None,
        "write_cache": _read(dd / "queue" / "write_cache") or None,
        "discard_max_bytes": int(_read(dd / "queue" / "discard_max_bytes", "0") or 0),
        "transport": ("nvme" if disk.startswith("nvme") else "loop" if disk.startswith("loop")
                      else "zram" if disk.startswith("zram") else "sata/sas" if disk.startswith("sd") else "other"),
        "backing_file": _read(dd / "loop" / "backing_file") or None,
    }
