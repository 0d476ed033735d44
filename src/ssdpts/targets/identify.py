"""NVMe / ATA identify data -> typed facts about the drive (pure: JSON or text in, records out, never raises).

Sources (field names as nvme-cli 2.x and smartctl 7.x print them in JSON):
  power states   Identify Controller `psds[]` (NVMe base spec 2.0, Figure 281: MP in 0.01 W, or 0.0001 W
                 when MPS is set; ENLAT/EXLAT in µs); the current one: Get Features FID 02h, bits 4:0.
  LBA formats    Identify Namespace `lbafs[]` (LBADS: log2 data size, MS: metadata bytes), `flbas` (bits 3:0
                 and 6:5: the format in use; bit 4: metadata at the end of each LBA, else a separate buffer),
                 `dps` bits 2:0 (protection information type 1-3: T10 PI), bit 3 (PI in the metadata's first
                 eight bytes, else its last eight), `dpc` (the types the namespace can be formatted with).
  Format NVM     Identify Controller `oacs` bit 1 (Format NVM supported), `fna` bit 0 (a format acts on every
                 namespace), bit 2 (cryptographic erase, SES=2, supported) (NVMe base spec 2.0, Figure 275).
  TRIM / DSM     NVMe `oncs` bit 2 (Dataset Management: deallocate); ATA IDENTIFY word 169 bit 0 (smartctl
                 `trim.supported`); the kernel's `discard_max_bytes` (0: the block layer will not discard).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ..exact import to_int


@dataclass(frozen=True)
class PowerState:
    """One NVMe power state descriptor."""

    index: int
    max_power_w: float
    operational: bool
    entry_latency_us: int
    exit_latency_us: int


@dataclass(frozen=True)
class LbaFormat:
    """One NVMe LBA format of the namespace."""

    index: int
    data_bytes: int
    metadata_bytes: int
    relative_performance: int     # 0 best ... 3 degraded (RP field)
    in_use: bool

    def label(self) -> str:
        return f"LBAF {self.index}: {self.data_bytes}+{self.metadata_bytes}" + (" (in use)" if self.in_use else "")


def power_states(id_ctrl: dict | None) -> list[PowerState]:
    out = []
    for i, ps in enumerate((id_ctrl or {}).get("psds") or []):
        if not isinstance(ps, dict):
            continue
        flags = to_int(ps.get("flags")) or 0
        mps = to_int(ps.get("max_power_scale")) if "max_power_scale" in ps else flags & 1
        nops = to_int(ps.get("non-operational_state")) if "non-operational_state" in ps else (flags >> 1) & 1
        mp = to_int(ps.get("max_power")) or 0
        out.append(PowerState(i, mp * (0.0001 if mps else 0.01), not nops, to_int(ps.get("entry_lat")) or 0,
                              to_int(ps.get("exit_lat")) or 0))
    return out


_FEATURE_VALUE = re.compile(r"(?:Current value|value)\s*:\s*(0x[0-9a-fA-F]+|\d+)")


def current_power_state(get_feature_output: str | dict | None) -> int | None:
    """The power state (bits 4:0 of Get Features FID 02h) from nvme-cli's text or JSON answer."""
    if isinstance(get_feature_output, dict):
        v = to_int(get_feature_output.get("value", get_feature_output.get("result")))
    else:
        m = _FEATURE_VALUE.search(get_feature_output or "")
        v = to_int(m.group(1)) if m else None
    return None if v is None else v & 0x1F


def lba_formats(id_ns: dict | None) -> list[LbaFormat]:
    ns = id_ns or {}
    flbas = to_int(ns.get("flbas")) or 0
    current = (flbas & 0xF) | ((flbas >> 1) & 0x30)    # bits 3:0, and 6:5 as the upper bits (NVMe 2.0)
    count = (to_int(ns.get("nlbaf")) or 0) + 1
    out = []
    for i, f in enumerate((ns.get("lbafs") or [])[:count]):
        if isinstance(f, dict) and to_int(f.get("ds")):
            out.append(LbaFormat(i, 2 ** to_int(f["ds"]), to_int(f.get("ms")) or 0, to_int(f.get("rp")) or 0,
                                 i == current))
    return out


def protection_type(id_ns: dict | None) -> int:
    """T10 PI type enabled on the namespace (0: none, 1-3)."""
    return (to_int((id_ns or {}).get("dps")) or 0) & 0x7


def protection_place(id_ns: dict | None) -> str:
    """Where the namespace's PI sits and how its metadata travels, in words (DPS bit 3, FLBAS bit 4)."""
    ns = id_ns or {}
    first = (to_int(ns.get("dps")) or 0) & 0x8
    extended = (to_int(ns.get("flbas")) or 0) & 0x10
    return (f"PI in the {'first' if first else 'last'} 8 bytes of the metadata, metadata "
            f"{'at the end of each LBA (extended LBA)' if extended else 'in a separate buffer'}")


def format_nvm(id_ctrl: dict | None) -> str:
    """What the controller's Format NVM offers (OACS bit 1, FNA bits 0 and 2), in words; "" without id-ctrl."""
    oacs = to_int((id_ctrl or {}).get("oacs"))
    if oacs is None:
        return ""
    if not oacs & 0x2:
        return "not supported (OACS bit 1 clear)"
    fna = to_int((id_ctrl or {}).get("fna")) or 0
    scope = "every namespace at once (FNA bit 0 set)" if fna & 0x1 else "one namespace at a time (FNA bit 0 clear)"
    crypto = "offered (FNA bit 2 set)" if fna & 0x4 else "not offered (FNA bit 2 clear)"
    return f"supported (OACS bit 1), on {scope}: user-data erase (SES=1); cryptographic erase (SES=2) {crypto}"


def protection_types_supported(id_ns: dict | None) -> list[int]:
    """PI types the namespace can be formatted with (DPC bits 0-2)."""
    dpc = to_int((id_ns or {}).get("dpc")) or 0
    return [t for t in (1, 2, 3) if dpc & (1 << (t - 1))]


def nvme_dsm(id_ctrl: dict | None) -> bool | None:
    oncs = to_int((id_ctrl or {}).get("oncs"))
    return None if oncs is None else bool(oncs & 0x4)


def ata_trim(smartctl: dict | None) -> bool | None:
    trim = (smartctl or {}).get("trim")
    return bool(trim.get("supported")) if isinstance(trim, dict) and "supported" in trim else None


def sata_link(smartctl: dict | None) -> tuple[str, str] | None:
    """(negotiated, maximum) SATA link speed as smartctl reads them from IDENTIFY (e.g. '6.0 Gb/s')."""
    speed = (smartctl or {}).get("interface_speed")
    if not isinstance(speed, dict):
        return None
    cur, top = (speed.get("current") or {}).get("string"), (speed.get("max") or {}).get("string")
    return (cur or "not reported", top or "not reported") if cur or top else None


@dataclass(frozen=True)
class DriveIdentity:
    """Who the drive is, as `smartctl -j -i` (or -a) states it. ATA and NVMe: model_name / firmware_version;
    SCSI/SAS: model_name (7.4+) or scsi_model_name, and the revision as the firmware (scsi_revision / revision)."""

    model: str | None
    serial: str | None
    firmware: str | None
    capacity_bytes: int | None      # user_capacity.bytes
    protocol: str | None            # ATA | NVMe | SCSI (smartctl's device.protocol)
    rotation_rate: int | None       # rpm; 0: a solid-state drive; None: not stated


def smartctl_identity(doc: dict | None) -> DriveIdentity:
    doc = doc if isinstance(doc, dict) else {}

    def text(*keys: str) -> str | None:
        return next((str(doc[k]).strip() for k in keys if isinstance(doc.get(k), (str, int)) and str(doc[k]).strip()),
                    None)

    cap = doc.get("user_capacity")
    rpm = doc.get("rotation_rate")
    dev = doc.get("device")
    return DriveIdentity(model=text("model_name", "scsi_model_name"), serial=text("serial_number"),
                         firmware=text("firmware_version", "scsi_revision", "revision"),
                         capacity_bytes=to_int(cap.get("bytes")) if isinstance(cap, dict) else None,
                         protocol=dev.get("protocol") if isinstance(dev, dict) else None,
                         rotation_rate=rpm if isinstance(rpm, int) and not isinstance(rpm, bool) else None)
