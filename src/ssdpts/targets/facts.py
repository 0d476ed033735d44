"""What the bench records about the drive beyond its identity: the controller it hangs off and that link,
NVMe power states, LBA formats with protection information, TRIM/DSM, the spare area its capacity implies.

Stored with the run in `Target.info["facts"]` (`DeviceFacts.to_dict`), decoded with `DeviceFacts.from_dict`;
`rows()` is what `ssdpts info` and the report header print. Sources: docs/bench.md.
"""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass, field

from .identify import (LbaFormat, PowerState, ata_trim, current_power_state, format_nvm, lba_formats, nvme_dsm,
                       power_states, protection_place, protection_type, protection_types_supported, sata_link)
from .sysfs import PciFunction, PciLink, SysRoots, pci_function

NA = "not available"
SATA_ENCODING = 8 / 10     # SATA (1.5, 3 and 6 Gb/s) sends 10 line bits per data byte's 8


@dataclass
class DeviceFacts:
    controller: PciFunction | None = None
    controller_note: str = ""            # why `controller` is None
    sata_link: str = ""                  # "" when the drive is not SATA
    power_states: list[PowerState] = field(default_factory=list)
    current_power_state: int | None = None
    power_note: str = ""                 # why power states are missing
    lba_formats: list[LbaFormat] = field(default_factory=list)
    protection: str = ""                 # T10 PI: enabled type and the types the namespace supports
    format_nvm: str = ""                 # what NVMe Format NVM offers (erase settings, scope); "" when not NVMe
    trim: str = ""
    implied_spare: str = ""
    modelled_controller: str = ""        # a simulated drive's controller, from its preset's parameters
    modelled_link: str = ""              # a simulated drive's host link, from its preset's parameters

    def to_dict(self) -> dict:
        return asdict(self)

    @classmethod
    def from_dict(cls, d: dict | None) -> "DeviceFacts | None":
        if not d:
            return None
        ctl = d.get("controller")
        if ctl:
            ctl = PciFunction(**{**ctl, "link": PciLink(**ctl["link"]) if ctl.get("link") else None,
                                 "max_link": PciLink(**ctl["max_link"]) if ctl.get("max_link") else None})
        return cls(**{**d, "controller": ctl, "power_states": [PowerState(**p) for p in d.get("power_states") or []],
                      "lba_formats": [LbaFormat(**f) for f in d.get("lba_formats") or []]})

    @property
    def link_mb_s(self) -> float | None:
        """The raw PCIe link limit as negotiated, MB/s (None: not a PCIe link, or not readable)."""
        return self.controller.link.mb_s if self.controller and self.controller.link else None

    @property
    def sata_link_mb_s(self) -> float | None:
        """The negotiated SATA link's data rate, MB/s: the line rate less 8b/10b encoding (6.0 Gb/s → 600 MB/s);
        None when the drive is not SATA or smartctl gave no speed."""
        m = re.match(r"\s*(\d+(?:\.\d+)?)\s*Gb/s", self.sata_link)
        return float(m.group(1)) * 1000 * SATA_ENCODING / 8 if m else None

    def rows(self) -> list[tuple[str, str]]:
        c = self.controller
        rows = [("Controller", c.label() if c else self.modelled_controller or f"{NA} ({self.controller_note})")]
        if self.modelled_link:
            rows.append(("Link", self.modelled_link))
        if c:
            link = (f"{c.link.label()} now, {c.max_link.label() if c.max_link else NA} maximum; MB/s = raw "
                    "link limit after line encoding, before protocol overhead") if c.link else \
                f"{NA} ({c.address} reports no PCIe link: a virtual or non-PCIe-endpoint device)"
            rows.append(("PCIe link", link))
        if self.sata_link:
            rows.append(("SATA link", self.sata_link))
        if self.power_states:
            ps = "; ".join(f"PS{p.index}{'*' if p.index == self.current_power_state else ''} {p.max_power_w:g} W"
                           f"{'' if p.operational else ' (non-operational)'}, entry {p.entry_latency_us} µs, exit "
                           f"{p.exit_latency_us} µs" for p in self.power_states)
            cur = (f"current PS{self.current_power_state}" if self.current_power_state is not None
                   else "current state not available")
            rows.append(("Power states", f"{ps} ({cur}; W = maximum power the descriptor allows)"))
        else:
            rows.append(("Power states", f"{NA} ({self.power_note})"))
        if self.lba_formats:
            rows.append(("LBA formats", ", ".join(f.label() for f in self.lba_formats) + " (data+metadata bytes)"))
        if self.protection:
            rows.append(("Protection (T10 PI)", self.protection))
        if self.format_nvm:
            rows.append(("Format NVM", self.format_nvm))
        rows += [("TRIM / deallocate", self.trim), ("Spare area", self.implied_spare)]
        return rows


def implied_spare(size_bytes: int, kind: str) -> str:
    """The spare area a decimal user capacity implies if the NAND is the binary size of the advertised
    capacity (160 GB user, 160 GiB NAND: ~11 GiB). An assumption, never a measurement."""
    if kind not in ("block", "sim") or size_bytes <= 0:
        return f"not applicable ({kind}: no NAND of its own)"
    if size_bytes % 2**30 == 0:
        return (f"none implied: the user capacity is exactly {size_bytes // 2**30} GiB, so the advertised size is "
                "likely binary already")
    advertised_gb = round(size_bytes / 1e9)
    spare = advertised_gb * 2**30 - size_bytes
    if spare <= 0:
        return f"none implied ({size_bytes / 1e9:,.1f} GB user capacity)"
    return (f"{spare / 2**30:,.1f} GiB ({spare / size_bytes * 100:.1f} % of the user capacity) implied, assuming "
            f"raw NAND = the binary size of the advertised capacity ({advertised_gb} GB user → {advertised_gb} GiB "
            "NAND); not measured")


def _trim(transport: str, id_ctrl: dict | None, smartctl: dict | None, discard_max_bytes: int) -> str:
    kernel = (f"kernel discards up to {discard_max_bytes:,} B per request" if discard_max_bytes
              else "kernel: discard_max_bytes = 0 (no discard through this device)")
    if transport == "nvme":
        dsm = nvme_dsm(id_ctrl)
        drive = {True: "supported (NVMe ONCS bit 2: Dataset Management)", False: "NOT supported (NVMe ONCS bit 2 "
                 "clear)", None: f"{NA} (no nvme id-ctrl answer)"}[dsm]
    elif transport == "sata":
        t = ata_trim(smartctl)
        drive = {True: "supported (ATA DSM TRIM, IDENTIFY word 169)", False: "NOT supported (ATA DSM TRIM bit "
                 "clear)", None: f"{NA} (smartctl gave no trim field)"}[t]
    else:
        drive = f"drive capability {NA} ({transport}: no NVMe/ATA identify data)"
    return f"{drive}; {kernel}"


def block_facts(name: str, roots: SysRoots, info: dict, id_ctrl: dict | None, id_ns: dict | None,
                smartctl: dict | None, power_feature: str | None, size_bytes: int) -> DeviceFacts:
    """The facts of a local block device from what the probes returned (None: the tool gave nothing)."""
    transport = info.get("transport") or ""
    ctl = pci_function(name, roots)
    facts = DeviceFacts(controller=ctl, controller_note="" if ctl else f"{name} is not on a PCI device "
                        "(virtual, or sysfs hides it)", trim=_trim(transport, id_ctrl, smartctl,
                                                                   info.get("discard_max_bytes") or 0),
                        implied_spare=implied_spare(size_bytes, "block" if transport not in ("loop", "zram")
                                                    else transport))
    link = sata_link(smartctl)
    if link:
        facts.sata_link = f"{link[0]} negotiated, {link[1]} maximum (ATA IDENTIFY via smartctl)"
    if transport == "nvme":
        facts.power_states = power_states(id_ctrl)
        facts.current_power_state = current_power_state(power_feature)
        facts.power_note = "" if facts.power_states else "nvme id-ctrl gave no power state descriptors"
        facts.lba_formats = lba_formats(id_ns)
        if id_ns:
            on, can = protection_type(id_ns), protection_types_supported(id_ns)
            facts.protection = (f"{f'type {on} enabled ({protection_place(id_ns)})' if on else 'not enabled'}; "
                                f"supported: {', '.join(f'type {t}' for t in can) or 'none'}")
        facts.format_nvm = format_nvm(id_ctrl)
    else:
        facts.power_note = f"NVMe power state descriptors only ({transport or 'this device'} is not NVMe)"
    return facts


def sim_facts(params: dict) -> DeviceFacts:
    """A simulated drive's facts from its preset's parameters (`simdrive.load_params`, bytes and ns): what the
    model has (controller, link, TRIM, spare), and what it does not model (power states)."""
    write_ns = params["ctrl_write_cmd_ns"] or params["ctrl_cmd_ns"]
    controller = (f"modelled (preset parameters): {params['ctrl_cmd_ns']:,} ns per command (at most "
                  f"{1e9 / params['ctrl_cmd_ns']:,.0f} commands/s), {write_ns:,} ns per write command (at most "
                  f"{1e9 / write_ns:,.0f} writes/s), {params['host_overhead_ns'] / 1000:g} µs host overhead per "
                  f"command; {params['channels']} channels x {params['dies_per_channel']} dies, "
                  f"{params['channel_mb_s']:,} MB/s per channel" if params["ctrl_cmd_ns"] else
                  "modelled (preset parameters): no per-command controller time")
    idle = params["idle_delay_ns"] / 1e6
    return DeviceFacts(
        controller_note="simulated drive", modelled_controller=controller,
        modelled_link=f"modelled (preset parameters): {params['link_mb_s']:,} MB/s (link_mb_s), no PCIe or SATA "
                      "link of its own",
        power_note=f"the simulated drive models none; after {idle:g} ms idle it runs background GC",
        trim="supported: the model unmaps the LBAs a TRIM names (SimDrive.trim; ssdpts's trim purge and TRIM "
             "studies use it)",
        implied_spare=f"{params['op_percent']:g} % of the user capacity (the preset's effective spare, op_percent; "
                      "GC reserve blocks on top), a model parameter, not implied from the capacity")


def unreachable_facts(kind: str, why: str) -> DeviceFacts:
    """A file or a drive behind a fio server: its hardware is not visible from here."""
    return DeviceFacts(controller_note=why, power_note=why, trim=f"{NA} ({why})", implied_spare=f"{NA} ({why})")
