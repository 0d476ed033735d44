"""A health snapshot as a run stores it (steps `health:before` / `health:after`, kind "health", written by the
runner around every test from `health.snapshot`'s normalised record; the endurance test's polls, kind
"health-poll"): what the report's health table, its throttling line, the endurance test and its projection,
and the exports read back. Decoded once, by the store
(`Store.step`, `Store.steps`); encoded back to exactly the stored data (`to_dict`: every key, in its order), so
an export shows the snapshot as it was stored. Keys this ssdpts does not declare (a newer record, a field a
tool added) are kept in `extra`, never dropped. Field names and units: docs/endurance.md."""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from typing import Any

from ..records import KeepsStoredForm

RECORD_KIND = "health"      # the runner's snapshots around each test (steps health:before / health:after)
POLL_KIND = "health-poll"   # the endurance test's polls (steps health:poll:NNNNNN), each with `t` and `round`
KINDS = (RECORD_KIND, POLL_KIND)   # the steps' kinds the store decodes as a HealthSnapshot


@dataclass(frozen=True)
class HealthSnapshot(KeepsStoredForm):
    available: bool = False
    source: str = ""                 # smartctl | nvme-cli | smartctl+nvme-cli | sim | set | none | error
    reason: str | None = None        # why nothing (or not everything) is available
    timestamp: float | None = None   # when ssdpts took it (s since the epoch)
    record_version: int = 1
    device: str | None = None
    protocol: str | None = None      # ATA | NVMe | sim
    model: str | None = None
    serial: str | None = None
    firmware: str | None = None
    family: str | None = None        # the attribute table's drive family (health/attributes.toml)
    # the normalised counters (health.parse.FIELDS: the unit of each); None: not reported (why: `missing`)
    host_written_bytes: int | None = None
    host_read_bytes: int | None = None
    media_written_bytes: int | None = None
    percentage_used: float | None = None
    lifetime_remaining: float | None = None
    available_spare: float | None = None
    available_spare_threshold: float | None = None
    temperature_c: float | None = None
    media_errors: int | None = None
    power_on_hours: float | None = None
    erase_count_avg: float | None = None
    critical_warning: int | None = None
    unsafe_shutdowns: int | None = None
    thermal_t1_transitions: int | None = None
    thermal_t2_transitions: int | None = None
    thermal_t1_seconds: int | None = None
    thermal_t2_seconds: int | None = None
    # the WAF counters, in the drive's own unit (`waf_unit`): Δ media units / Δ host units
    waf_host_units: int | None = None
    waf_media_units: int | None = None
    waf_unit: str | None = None
    waf_formula: str | None = None            # the family's formula (health/attributes.toml), when it has one
    capacity_bytes: int | None = None         # the drive's capacity as it reports it (nvme id-ctrl, smartctl user_capacity)
    rotation_rate: int | None = None          # smartctl: rpm of a hard disk, 0 for a solid-state drive
    smartctl_version: str | None = None
    # the simulated drive's own figures
    clock_s: float | None = None              # simulated time
    free_blocks_percent: float | None = None
    rated_pe_cycles: int | None = None
    attributes: dict[str, Any] = field(default_factory=dict)   # every attribute read, by name
    missing: dict[str, str] = field(default_factory=dict)      # field -> why it is not there
    sources: dict[str, str] = field(default_factory=dict)      # field -> where its value came from
    raw: dict[str, Any] = field(default_factory=dict)          # the tools' own output, trimmed
    failures: tuple[str, ...] = ()    # what the tool or drive says is wrong now (recorded as deviations)
    warnings: tuple[str, ...] = ()    # what it says went wrong in the past
    notes: tuple[str, ...] = ()
    members: dict[str, HealthSnapshot] = field(default_factory=dict)   # a set's drives by their label
    t: float | None = None              # a poll (and `analyze endurance`): seconds on the series' clock
    round: int | None = None            # an endurance poll: the round it closed (0: the baseline)
    file_placement: str | None = None   # a file target: where its file system puts it
    file: str | None = None             # `analyze endurance`: the saved document it was read from
    timestamp_source: str | None = None   # ... and where its time came from (local_time, file mtime)
    extra: dict[str, Any] = field(default_factory=dict)        # stored keys not declared above
    stored: dict[str, Any] = field(default_factory=dict, repr=False, compare=False)   # the data as stored

    @classmethod
    def from_dict(cls, data: dict | None) -> HealthSnapshot:
        """The stored snapshot; keys an older ssdpts did not store take the defaults above."""
        data = data or {}
        kwargs: dict[str, Any] = {}
        for name in _DECLARED:
            if name in data and data[name] is not None:
                kwargs[name] = data[name]
        for name in ("failures", "warnings", "notes"):
            kwargs[name] = tuple(data.get(name) or ())
        kwargs["members"] = {label: cls.from_dict(m) for label, m in (data.get("members") or {}).items()}
        return cls(**kwargs, extra={k: v for k, v in data.items() if k not in _KNOWN}, stored=data)

    def to_dict(self) -> dict:
        """The snapshot as stored (a record made here, not decoded: its declared fields that hold a value)."""
        if self.stored:
            return self.stored
        out = {f.name: getattr(self, f.name) for f in fields(self) if f.name not in ("extra", "stored")}
        out["members"] = {label: m.to_dict() for label, m in self.members.items()}
        out.update(failures=list(self.failures), warnings=list(self.warnings), notes=list(self.notes))
        return {**{k: v for k, v in out.items() if v not in (None, (), [], {})}, **self.extra}


# fields read as they are stored (the rest: tuples, decoded members, and the record's own bookkeeping)
_DECLARED = tuple(f.name for f in fields(HealthSnapshot)
                  if f.name not in ("failures", "warnings", "notes", "members", "extra", "stored"))
_KNOWN = frozenset(f.name for f in fields(HealthSnapshot)) - {"extra", "stored"}
