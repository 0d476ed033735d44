"""Figures that cannot be trusted say so: three rules over a test's stored cells, each a deviation with its
evidence (docs/conformance.md, "Plausibility").

* `implausible-cell`: a cell far below the other cells of the same workload in its test, one that completed no
  I/O, or one whose mean latency is beyond LAT_MEAN_BOUND_S.
* `above-interface`: a cell faster than the drive's recorded link (PCIe, SATA) or than a simulated preset's link
  and controller allow. Where no maximum is known the verdict says so (`interface_notes`) and nothing is judged.
* `host-limited`: the host's CPU (fio's submitting threads, or the whole host) saturated while the device queue
  was not full: the figure is the host's, not the drive's.

Every threshold is declared once, here, with the reason for its value.
"""

from __future__ import annotations

import dataclasses
import statistics
from dataclasses import dataclass

from .deviations import ABOVE_INTERFACE_SOURCE, HOST_LIMITED_SOURCE, IMPLAUSIBLE_CELL_SOURCE, Deviation
from .engines.results import CellResult
from .realtime.timing import LAT_MEAN_BOUND_S
from .store import Store
from .store.idle import CELL_KINDS
from .targets.record import TargetRecord
from .workload import Workload

# A cell below 1/100 of the median of the same workload's cells in its test is implausible. The deepest honest
# drop of one workload on one drive that reviews show is ~45× (X25-M 4 KiB random writes, 90 → 2 MB/s, the
# sim:sata-mlc seed; a QLC drive past its SLC cache ~20-30×): 100 leaves a margin of two.
FAR_BELOW_FACTOR = 100.0
# A figure up to 3 % above a maximum is rounding, not a violation: fio's runtime is whole milliseconds (1 % of a
# 100 ms cell), the simulator's link time per page is truncated to whole ns (+0.03 %).
ABOVE_TOLERANCE = 0.03
# fio's usr_cpu + sys_cpu of a job is its threads' mean share of one CPU (group_reporting sums CPU time and
# runtime over the clones); a thread at 90 % never waited for the device (ssdpts never polls: no hipri).
THREAD_SATURATED_PCT = 90.0
# /proc/stat's busy share (100 − idle − iowait) of all CPUs: at 95 % a thread ready to submit waits for a CPU.
HOST_SATURATED_PCT = 95.0
# The device queue is full when its time-weighted depth is at least 90 % of the outstanding I/Os the cell asked
# (threads × iodepth): the ramp at a cell's start and the drain at its end cost a few percent.
QUEUE_FULL_SHARE = 0.90
MAX_LISTED = 5          # cells named in one deviation's evidence; the count says how many in all


@dataclass(frozen=True)
class StoredCell:
    """One stored cell with what it asked for and where it ran."""

    phase: str
    kind: str              # precondition | round
    round: int
    asked: Workload
    result: CellResult

    def where(self) -> str:
        return f"{self.result.name} ({self.phase + ' ' if self.phase else ''}{self.kind} {self.round})"


def cells_of(rounds) -> list[StoredCell]:
    """The cells of stored rounds (read with their cells), each with the workload it asked for."""
    return [StoredCell(r.phase, r.kind, r.round, Workload.from_dict(w), c)
            for r in rounds for c, w in zip(r.cells, r.workloads)]


def stored_cells(store: Store, run_id: str, test: str) -> list[StoredCell]:
    return cells_of([r for kind in CELL_KINDS for r in store.rounds(run_id, test, kind=kind)])


def _listed(items: list[str]) -> str:
    more = len(items) - MAX_LISTED
    return "; ".join(items[:MAX_LISTED]) + (f"; and {more} more" if more > 0 else "")


# --- implausible-cell -----------------------------------------------------------------------------------

def _same_workload(w: Workload) -> Workload:
    """What makes two cells the same workload: everything the I/O does, not where (the raw device's span or a
    file's), how long, with which seed, or after how much idle (HIR's wait states ask the same writes)."""
    return dataclasses.replace(w, name="", range_start=0.0, range_size=1.0, runtime_s=1.0, io_size=None, ramp_s=0.0,
                               seed=None, log_interval_ms=0, idle_before_s=0.0,
                               percentiles=())


def implausible_cells(cells: list[StoredCell]) -> list[Deviation]:
    groups: dict[Workload, list[float]] = {}
    for c in cells:
        groups.setdefault(_same_workload(c.asked), []).append(c.result.iops)
    found = []
    for c in cells:
        r, why = c.result, []
        peers = groups[_same_workload(c.asked)]
        median = statistics.median(peers) if len(peers) > 1 else None
        if r.read.ios + r.write.ios == 0 and r.runtime_ms > 0:
            why.append(f"no I/O completed in {r.runtime_ms / 1000:.1f} s")
        elif median and r.iops < median / FAR_BELOW_FACTOR:
            why.append(f"{r.iops:,.2f} IOPS, {median / r.iops if r.iops else float('inf'):,.0f}× below the median "
                       f"{median:,.0f} IOPS of the same workload's {len(peers)} cells in this test (bound "
                       f"{FAR_BELOW_FACTOR:g}×)")
        if r.lat_mean_ns / 1e9 > LAT_MEAN_BOUND_S:
            why.append(f"mean latency {r.lat_mean_ns / 1e9:,.1f} s > {LAT_MEAN_BOUND_S:g} s "
                       f"({r.iops:,.2f} IOPS)")
        if why:
            found.append(f"{c.where()}: {', '.join(why)}")
    if not found:
        return []
    return [Deviation("implausible-cell", f"{len(found)} cells are not plausible drive figures: {_listed(found)}",
                      IMPLAUSIBLE_CELL_SOURCE)]


# --- above-interface ------------------------------------------------------------------------------------

@dataclass(frozen=True)
class InterfaceMax:
    """The most a drive can move, as recorded for the run's target."""

    what: str                      # where the figure comes from, in words
    mb_s: float                    # data, MB/s (10^6 B/s)
    per_direction: bool            # True: reads and writes each up to mb_s (PCIe is full duplex); else shared
    command_ns: tuple[float, float] | None = None   # the simulated controller's serial time per read, per write

    def excess(self, r: CellResult) -> str | None:
        """What in `r` goes beyond this maximum (beyond ABOVE_TOLERANCE), in words, or None."""
        read, write = r.read.bw_bytes / 1e6, r.write.bw_bytes / 1e6
        bw = max(read, write) if self.per_direction else read + write
        over = []
        if bw > self.mb_s * (1 + ABOVE_TOLERANCE):
            how = "in one direction" if self.per_direction else "reads + writes"
            over.append(f"{bw:,.0f} MB/s {how} > {self.mb_s:,.0f} MB/s ({self.what})")
        if self.command_ns:
            busy = (r.read.iops * self.command_ns[0] + r.write.iops * self.command_ns[1]) / 1e9
            if busy > 1 + ABOVE_TOLERANCE:
                over.append(f"{r.iops:,.0f} IOPS need the controller {busy:.2f} s per second ({self.command_ns[0]:g}"
                            f"/{self.command_ns[1]:g} ns per read/write command, preset)")
        return "; ".join(over) or None


def _drive_max(target: TargetRecord) -> InterfaceMax | str:
    """One drive's recorded maximum, or why none is known."""
    kind, info = target.kind, target.info
    label = target.path or target.spec or "the target"
    if target.host:
        return f"{label} is behind the fio server {target.host}: its link is not visible from here"
    if kind == "file":
        return f"{label} is a file: its link is its file system's device's, not recorded"
    if kind == "sim":
        p = info.get("params") or {}
        if not p.get("link_mb_s"):
            return f"{label}: the simulated drive's stored parameters have no link_mb_s"
        cmd = p.get("ctrl_cmd_ns")
        write_cmd = p.get("ctrl_write_cmd_ns") or cmd
        return InterfaceMax(f"preset {info.get('preset', label)}: link_mb_s = {p['link_mb_s']}, one link for "
                            "reads and writes", float(p["link_mb_s"]), False,
                            (float(cmd), float(write_cmd)) if cmd else None)
    from .targets.facts import DeviceFacts      # here: a simulated drive's run (the common case) needs none

    facts = DeviceFacts.from_dict(info.get("facts"))
    transport = info.get("transport") or "?"
    if transport in ("loop", "zram"):
        return f"{label} is a {transport} device: it has no link of its own"
    if facts is None:
        return f"{label}: no link was recorded with this run (stored by an older ssdpts)"
    if facts.link_mb_s:
        return InterfaceMax(f"PCIe {facts.controller.link.label()}, per direction", facts.link_mb_s, True)
    if facts.sata_link_mb_s:
        return InterfaceMax(f"SATA {facts.sata_link.split(' negotiated')[0]} negotiated = "
                            f"{facts.sata_link_mb_s:,.0f} MB/s after 8b/10b, half duplex", facts.sata_link_mb_s, False)
    return f"{label}: no PCIe or SATA link recorded ({facts.controller_note or 'the controller reports none'})"


def interface_max(target: TargetRecord) -> InterfaceMax | str:
    """The run target's maximum (a set's: its drives' summed, when every one is known), or why none is known."""
    found = [_drive_max(m) for m in target.drives()]
    unknown = [f for f in found if isinstance(f, str)]
    if unknown:
        return "; ".join(unknown)
    if len(found) == 1:
        return found[0]
    duplex = {f.per_direction for f in found}
    if len(duplex) > 1:
        return "the set mixes full-duplex (PCIe) and shared links: no one maximum"
    return InterfaceMax(f"{len(found)} links summed: " + ", ".join(f.what for f in found),
                        sum(f.mb_s for f in found), duplex.pop())


def above_interface(cells: list[StoredCell], limit: InterfaceMax | str) -> list[Deviation]:
    if isinstance(limit, str):
        return []
    found = [f"{c.where()}: {x}" for c in cells if (x := limit.excess(c.result))]
    if not found:
        return []
    return [Deviation("above-interface", f"{len(found)} cells measured more than the drive's interface can "
                      f"carry: {_listed(found)}", ABOVE_INTERFACE_SOURCE)]


def interface_notes(target: TargetRecord) -> list[str]:
    """What the verdict says when the above-interface rule cannot judge."""
    limit = interface_max(target)
    return [] if isinstance(limit, InterfaceMax) else [f"above-interface not judged: no interface maximum is "
                                                       f"known ({limit})"]


# --- host-limited ---------------------------------------------------------------------------------------

def _thread_cpu_pct(r: CellResult) -> float:
    """fio's submitting threads' mean CPU share; of several targets at once, the busiest target's (their
    aggregate sums the parts)."""
    if r.parts:
        return max(p.usr_cpu + p.sys_cpu for p in r.parts.values())
    return r.usr_cpu + r.sys_cpu


def device_queue_depth(r: CellResult) -> tuple[float, str] | None:
    """The cell's time-weighted device queue depth and where it comes from: the block layer's record of the cell
    when there is one, else fio's own I/Os in flight by Little's law (IOPS × mean latency, per direction): fio's
    latency runs from submission until fio sees the completion, so this is an upper bound of the device's."""
    depth = r.stimulus.queue_depth if r.stimulus is not None else None   # the block layer's record of the cell
    if depth is not None:
        return float(depth), "block layer"
    if not r.read.ios + r.write.ios:
        return None
    return (r.read.iops * r.read.lat_mean_ns + r.write.iops * r.write.lat_mean_ns) / 1e9, "fio, IOPS × mean latency"


def host_limited(cells: list[StoredCell]) -> list[Deviation]:
    found = []
    for c in cells:
        r, w = c.result, c.asked
        if w.thinktime_us or (not r.usr_cpu and not r.sys_cpu and r.host_cpu is None):
            continue      # idle asked for (think time), or no CPU measured (the simulator)
        thread = _thread_cpu_pct(r)
        host = r.host_cpu.busy_pct if r.host_cpu else None
        thread_full, host_full = thread >= THREAD_SATURATED_PCT, host is not None and host >= HOST_SATURATED_PCT
        if not thread_full and not host_full:
            continue
        asked = w.threads * w.iodepth * max(1, len(r.parts))
        queue = device_queue_depth(r)
        if queue is None:
            continue
        depth, source = queue
        # with no block-layer record, a saturated thread is the evidence itself: it never waited for the device
        not_full = depth < QUEUE_FULL_SHARE * asked or (thread_full and source != "block layer")
        if not not_full:
            continue
        cpu = " and ".join(x for x in (f"fio's threads at {thread:.0f} % CPU" if thread_full else "",
                                       f"whole host {host:.0f} % busy" if host_full else "") if x)
        found.append(f"{c.where()}: {r.iops:,.0f} IOPS with {cpu}; device queue {depth:.2f} of {asked} asked "
                     f"({source})")
    if not found:
        return []
    return [Deviation("host-limited", f"{len(found)} cells measured the host, not the drive (CPU saturated, device "
                      f"queue not full; thresholds: threads ≥ {THREAD_SATURATED_PCT:g} % or host ≥ "
                      f"{HOST_SATURATED_PCT:g} %, queue < {QUEUE_FULL_SHARE:.0%} of threads × iodepth): "
                      f"{_listed(found)}", HOST_LIMITED_SOURCE)]


def judge(cells: list[StoredCell], target: TargetRecord) -> list[Deviation]:
    """Every plausibility deviation of one test's cells."""
    return implausible_cells(cells) + above_interface(cells, interface_max(target)) + host_limited(cells)



