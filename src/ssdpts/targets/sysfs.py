"""Reading block-device facts from sysfs and /proc. Roots are parameters so tests can use fake trees."""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
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


def char_device_name(dev_path: str, roots: SysRoots) -> str:
    """Kernel name (e.g. 'ng0n1') of a character device node, via its major:minor (/sys/dev/char)."""
    st = os.stat(dev_path)
    link = roots.sys / "dev" / "char" / f"{os.major(st.st_rdev)}:{os.minor(st.st_rdev)}"
    return Path(os.path.realpath(link)).name if link.exists() else Path(os.path.realpath(dev_path)).name


def _generic_dir(ng: str, roots: SysRoots) -> Path:
    return roots.sys / "class" / "nvme-generic" / ng


def is_nvme_generic(ng: str, roots: SysRoots) -> bool:
    """Whether `ng` is an NVMe generic character device (Linux 5.13+: one per namespace, /dev/ngXnY)."""
    return _generic_dir(ng, roots).exists()


def _same_parent(ng: str, disk: str, roots: SysRoots) -> bool:
    """The generic device and the disk hang off one controller (one subsystem with native multipath)."""
    a, b = _generic_dir(ng, roots) / "device", block_dir(disk, roots) / "device"
    return a.exists() and b.exists() and os.path.realpath(a) == os.path.realpath(b)


def nvme_generic_block(ng: str, roots: SysRoots) -> str | None:
    """The namespace block device ('nvme0n1') of generic device 'ng0n1', or None where the kernel made none (a
    format its block layer does not take). The kernel names both after the same controller (or subsystem) and
    namespace head instances; sysfs confirms they hang off the same controller."""
    m = re.fullmatch(r"ng(\d+n\d+)", ng)
    disk = f"nvme{m.group(1)}" if m else None
    return disk if disk and _same_parent(ng, disk, roots) else None


def nvme_generic_node(disk: str, roots: SysRoots) -> str | None:
    """The generic device ('ng0n1') of namespace block device 'nvme0n1' (a partition's: its disk's), or None."""
    disk = whole_disk(disk, roots)
    m = re.fullmatch(r"nvme(\d+n\d+)", disk)
    ng = f"ng{m.group(1)}" if m else None
    return ng if ng and is_nvme_generic(ng, roots) and _same_parent(ng, disk, roots) else None


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


# ------------------------------------------------------------------------------------------------
# the drive's PCI function (controller) and its link

_PCI_ADDRESS = re.compile(r"^[0-9a-f]{4}:[0-9a-f]{2}:[0-9a-f]{2}\.[0-7]$")
# PCIe per-lane rate after line encoding, MB/s: 2.5 and 5 GT/s use 8b/10b, 8 GT/s and later 128b/130b
_ENCODING = {2.5: 8 / 10, 5.0: 8 / 10, 8.0: 128 / 130, 16.0: 128 / 130, 32.0: 128 / 130, 64.0: 242 / 256}
PCI_IDS = (Path("/usr/share/misc/pci.ids"), Path("/usr/share/hwdata/pci.ids"))


@dataclass(frozen=True)
class PciLink:
    """A PCIe link as sysfs reports it: speed in GT/s, width in lanes."""

    speed_gt_s: float | None
    width: int | None

    @property
    def mb_s(self) -> float | None:
        """The raw link limit in MB/s (10^6 B/s) after line encoding, before protocol (TLP/DLLP) overhead."""
        enc = _ENCODING.get(self.speed_gt_s or 0.0)
        return None if enc is None or not self.width else self.speed_gt_s * enc * 1000 / 8 * self.width

    def rate(self) -> str:
        """'8 GT/s x4', or "not available" when sysfs gave no speed or width."""
        return "not available" if self.speed_gt_s is None or not self.width else f"{self.speed_gt_s:g} GT/s x{self.width}"

    def label(self) -> str:
        mb = self.mb_s
        return self.rate() + (f" ({mb:,.0f} MB/s raw link limit)" if mb else "")


@dataclass(frozen=True)
class PciFunction:
    """The PCI device the block device hangs off (NVMe controller, AHCI/SAS HBA, virtio...)."""

    address: str
    vendor_id: str
    device_id: str
    vendor: str | None          # names from pci.ids, None when it is not installed or lacks the ids
    device: str | None
    driver: str | None
    link: PciLink | None        # None: not a PCIe function with link attributes (e.g. a virtual device)
    max_link: PciLink | None
    upstream: list[str] = field(default_factory=list)   # bridges above it, nearest first (a PCIe switch's ports)

    def label(self) -> str:
        name = _pci_name(self.vendor, self.device, self.vendor_id, self.device_id)
        behind = f"; behind {' ← '.join(self.upstream)}" if self.upstream else ""
        return f"{name} at {self.address}, driver {self.driver or 'none bound'}{behind}"


def _pci_name(vendor: str | None, device: str | None, vendor_id: str, device_id: str) -> str:
    return " ".join(x for x in (vendor, device) if x) or f"[{vendor_id}:{device_id}]"


def _gt_s(text: str) -> float | None:
    m = re.match(r"^\s*(\d+(?:\.\d+)?)\s*GT/s", text or "")
    return float(m.group(1)) if m else None


def _link(d: Path, prefix: str) -> PciLink | None:
    speed, width = _read(d / f"{prefix}_link_speed"), _read(d / f"{prefix}_link_width")
    if not speed and not width:
        return None
    return PciLink(_gt_s(speed), int(width) if width.isdigit() else None)


def pci_names(vendor_id: str, device_id: str, ids_files=PCI_IDS) -> tuple[str | None, str | None]:
    """(vendor, device) names from the pci.ids database (hex ids without 0x)."""
    for f in ids_files:
        try:
            lines = Path(f).read_text(errors="replace").splitlines()
        except OSError:
            continue
        vendor = device = None
        for line in lines:
            if vendor is None:
                if line[:4].lower() == vendor_id and line[4:6] == "  ":
                    vendor = line[6:].strip()
            elif line.startswith("\t\t") or line.startswith("#") or not line.strip():
                continue
            elif line.startswith("\t"):
                if line[1:5].lower() == device_id:
                    device = line[6:].strip()
                    break
            else:
                break
        if vendor:
            return vendor, device
    return None, None


def pci_function(name: str, roots: SysRoots, ids_files=PCI_IDS) -> PciFunction | None:
    """The nearest PCI function above the disk's device in sysfs, or None (loop, zram: no hardware)."""
    d = Path(os.path.realpath(block_dir(whole_disk(name, roots), roots) / "device"))
    sys_root = os.path.realpath(roots.sys)
    while str(d).startswith(sys_root) and d != d.parent:
        if _PCI_ADDRESS.match(d.name) and (d / "vendor").exists():
            vid, did = _read(d / "vendor").lower().removeprefix("0x"), _read(d / "device").lower().removeprefix("0x")
            vendor, device = pci_names(vid, did, ids_files)
            drv = d / "driver"
            return PciFunction(d.name, vid, did, vendor, device,
                               Path(os.path.realpath(drv)).name if drv.exists() else None,
                               _link(d, "current"), _link(d, "max"), _bridges(d.parent, sys_root, ids_files))
        d = d.parent
    return None


def _bridges(d: Path, sys_root: str, ids_files) -> list[str]:
    """'ADDRESS NAME' of every PCI bridge from `d` up to the root complex, with its own link where it has one
    (a root or switch port: what the slot could carry, beside what the drive negotiated)."""
    out = []
    while str(d).startswith(sys_root) and d != d.parent:
        if _PCI_ADDRESS.match(d.name) and (d / "vendor").exists():
            vid, did = _read(d / "vendor").lower().removeprefix("0x"), _read(d / "device").lower().removeprefix("0x")
            now, top = _link(d, "current"), _link(d, "max")
            link = f" (port link {now.rate() if now else 'not available'} now, {top.rate() if top else 'not available'} " \
                   "maximum)" if now or top else ""
            out.append(f"{d.name} {_pci_name(*pci_names(vid, did, ids_files), vid, did)}{link}")
        d = d.parent
    return out
