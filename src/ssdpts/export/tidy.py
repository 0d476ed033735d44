"""The long ("tidy") table of a run: one record per round, cell, drive and metric (docs/results.md).

For pandas, a dashboard or a database: every stored figure of every cell of every round (preconditioning
passes too) with its unit, in the units the engine measured (IOPS, B/s, ns: nothing rounded). The CSV and
JSON Lines writers (`export/csv.py`, `export/json.py`) write these same records.
"""

from __future__ import annotations

import dataclasses
import time
from dataclasses import dataclass
from typing import Iterator

from ..engines.results import CellResult, DirStats
from ..metrics import BANDWIDTH, IOPS, LATENCY
from ..runresult.coverage import coverage_metrics
from ..runresult.model import RunResult
from ..runresult.stimulus import tidy_metrics
from ..targets.record import TargetRecord


@dataclass(frozen=True)
class TidyRecord:
    run: str
    drive_serial: str | None   # None: the drive reports no serial (simulated drive, file, some loop devices)
    drive: str                 # "" for the whole target; a parallel run's drive (its results name) otherwise
    test: str
    phase: str
    kind: str                  # precondition | round
    round: int
    timestamp: str             # the round's end, ISO 8601 UTC
    cell: str
    metric: str
    value: float
    unit: str
    clock: str                 # "wall" or "simulated": the clock the unit's seconds (IOPS, B/s, ms, ns) are on


FIELDS = [f.name for f in dataclasses.fields(TidyRecord)]

IOS, BYTES, MS, PERCENT = "I/Os", "B", "ms", "%"


def _percentile_name(q: str) -> str:
    """fio's '99.900000' or the stored '99.9' -> 'p99.9' (text, never through float: 99.99999 stays)."""
    return "p" + (q.rstrip("0").rstrip(".") if "." in q else q)


def _direction_metrics(direction: str, d: DirStats) -> Iterator[tuple[str, float, str]]:
    if not d.ios:   # a direction without I/O has no figures (not zeros that read as measured)
        return
    yield f"{direction}_iops", d.iops, IOPS.stored
    yield f"{direction}_bw", d.bw_bytes, BANDWIDTH.stored
    yield f"{direction}_ios", d.ios, IOS
    yield f"{direction}_bytes", d.bytes, BYTES
    for stat in ("mean", "min", "max", "stddev"):
        yield f"{direction}_lat_{stat}", getattr(d, f"lat_{stat}_ns"), LATENCY.stored
    for q, ns in sorted(d.percentiles.items(), key=lambda kv: float(kv[0])):
        yield f"{direction}_lat_{_percentile_name(q)}", ns, LATENCY.stored


def cell_metrics(cell: CellResult) -> Iterator[tuple[str, float, str]]:
    """(metric, value, unit) of one cell: totals (IOPS read + write), then each direction that did I/O."""
    yield "iops", cell.iops, IOPS.stored
    yield "bw", cell.bw_bytes, BANDWIDTH.stored
    yield "lat_mean", cell.lat_mean_ns, LATENCY.stored
    yield "lat_max", cell.lat_max_ns, LATENCY.stored
    yield "runtime", cell.runtime_ms, MS
    yield "usr_cpu", cell.usr_cpu, PERCENT
    yield "sys_cpu", cell.sys_cpu, PERCENT
    yield from _direction_metrics("read", cell.read)
    yield from _direction_metrics("write", cell.write)
    yield from tidy_metrics(cell.stimulus)      # what the device saw of it (runresult/stimulus.py)
    yield from coverage_metrics(cell.coverage)


def _serials(target: TargetRecord) -> tuple[str | None, dict[str, str | None]]:
    """The target's serial, and each member's by the name results give it (host:path or path)."""
    return target.serial, {m.label_id: m.serial for m in target.members}


def tidy_records(run: RunResult) -> list[TidyRecord]:
    """Every round's cells (preconditioning passes, then rounds) of every test of the run, as stored."""
    return list(_records(run))


def _records(run: RunResult) -> Iterator[TidyRecord]:
    serial, member_serials = _serials(run.target)
    clock = run.clock.name
    for test in run.tests:
        for r in test.cell_rounds:
            stamp = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(r.ended)) + f".{int(r.ended % 1 * 1000):03d}Z"
            for cell in r.cells:
                drives = [("", serial, cell)] + [(label, member_serials.get(label), part)
                                                 for label, part in cell.parts.items()]
                for drive, drive_serial, result in drives:
                    for metric, value, unit in cell_metrics(result):
                        yield TidyRecord(run.id, drive_serial, drive, test.name, r.phase, r.kind, r.round,
                                         stamp, cell.name, metric, float(value), unit, clock)
