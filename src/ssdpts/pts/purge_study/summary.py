"""The purge-method study's typed summary."""

from __future__ import annotations

from dataclasses import dataclass, field

from ..spec import Summary


@dataclass
class MethodResult:
    method: str                        # as asked: purge | trim | zero-fill | none
    applied: str                       # what ran: the purge's own method (nvme-format, sim-purge, ...), trim, ...
    snia_purge: bool
    label: str                         # e.g. "TRIM of every LBA — not a SNIA purge"
    note: str
    supported: bool                    # False: the target cannot do it here (no bursts ran)
    method_s: float | None             # seconds the method took (None: not measured)
    burst_iops: list[float] = field(default_factory=list)    # RND 4K write IOPS of each burst, in order
    mean_iops: float | None = None
    percent_of_reference: float | None = None               # mean IOPS / the reference's, %


@dataclass
class PurgeStudySummary(Summary):
    reference: str | None              # the method the others are compared with: the first SNIA purge measured
    reference_iops: float | None
    dirty_bytes: int                   # SEQ bytes written before every method (the used state)
    dirty_rnd_s: float                 # then RND 4K writes for this long
    burst_cells: int
    burst_s: float
    threads: int
    iodepth: int
    methods: list[MethodResult] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
