"""What `ssdpts run` was asked, stored with the run (runs.options_json): resume, the report and the exports
read it back through `RunOptions.from_json`, so a key an older run did not store takes the default here."""

from __future__ import annotations

from dataclasses import dataclass, field

from .records import from_data, to_data
from .workload.ioengine import IoChoice


@dataclass(frozen=True)
class SeedChoice:
    """The run's base seed and where it came from (pts.cells.choose_seed)."""

    value: int
    source: str                          # "command line (--seed)" | "profile" | "drawn for this run"


@dataclass(frozen=True)
class WriteCacheCheck:
    """The drives' volatile write cache against the profile's when the run started (runner.checks.write_cache_check)."""

    profile: str                         # what the profile asks: enabled | disabled | (anything else: no demand)
    device: dict[str, str | None] = field(default_factory=dict)   # each drive's label_id -> its sysfs state
    matches: bool = True
    note: str = ""                       # the mismatch, in words, with its fix ("" when it matches)


@dataclass(frozen=True)
class RunOptions:
    destroy_data: bool = False
    purge: str = "auto"                  # the --purge method (targets.purge.METHODS)
    size: str | None = None              # --size of a file target, created if missing
    results_dir: str | None = None
    write_cache: WriteCacheCheck | None = None
    seed: SeedChoice | None = None
    set_write_cache: bool = False
    notes: list[str] = field(default_factory=list)      # --note: set-up facts shown in the report
    label: str | None = None             # --label: the run's name in comparisons ("partition", "27 % spare")
    trace_stimulus: bool = False
    io_engine: IoChoice | None = None   # fio's engine and why (runs before the setting have none)

    def to_json(self) -> dict:
        return to_data(self)

    @classmethod
    def from_json(cls, data: dict | None) -> RunOptions:
        return from_data(cls, data or {})
