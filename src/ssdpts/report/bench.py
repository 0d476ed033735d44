"""The bench in the report: board/BIOS and the drive's controller, link, power states, formats, TRIM and
spare area in the header; per test the drive's temperature beside its IOPS, NVMe thermal-throttle counter
deltas and whole-host CPU per cell. Sources and meanings: docs/bench.md."""

from __future__ import annotations

import logging
from dataclasses import dataclass

from markupsafe import Markup, escape

from .. import sampling
from ..engines.hostcpu import HostCpu
from ..health.record import HealthSnapshot
from ..hostinfo import REMOTE_NOT_AVAILABLE, HostRecord
from ..targets.facts import DeviceFacts, unreachable_facts
from ..targets.record import TargetRecord
from ..render import plots

log = logging.getLogger("ssdpts")
NOT_RECORDED = "not recorded (the run predates this record)"
THERMAL = (("thermal_t1_transitions", "thermal_t1_seconds", "T1 (light throttling)"),
           ("thermal_t2_transitions", "thermal_t2_seconds", "T2 (heavy throttling)"))


def platform_rows(host: HostRecord) -> list[tuple[str, str]]:
    if host.remote_hosts:
        na = host.not_available or REMOTE_NOT_AVAILABLE
        return [("Board", na), ("BIOS", na)]
    if host.board_vendor is None:
        return [("Board", NOT_RECORDED), ("BIOS", NOT_RECORDED)]
    na = (lambda v: v.startswith("not available"))
    return [("Board", host.board_vendor if na(host.board_vendor) else f"{host.board_vendor} {host.board_name}"),
            ("BIOS", host.bios_vendor if na(host.bios_vendor) else
             f"{host.bios_vendor} {host.bios_version} ({host.bios_date})")]


def peak_mb_s(view) -> float | None:
    """The test's highest cell throughput, MB/s (10^6 B/s)."""
    bw = [c.bw_bytes for r in view.rounds() for c in r.cells]
    return max(bw) / 1e6 if bw else None


def drive_facts(target: TargetRecord) -> DeviceFacts | None:
    """The recorded facts of a stored target (None: a run that predates them)."""
    if target.host:
        return unreachable_facts("remote", f"the drive is behind the fio server {target.host}")
    if target.kind == "file":
        return unreachable_facts("file", "a file: its hardware is the filesystem's device")
    return DeviceFacts.from_dict(target.info.get("facts"))


def device_rows(view) -> list[tuple[str, str]]:
    run = view.run
    members = run["target"].drives()
    rows, limit = [], 0.0
    for m in members:
        facts = drive_facts(m)
        prefix = f"{m.path}: " if len(members) > 1 else ""
        rows += [(k, prefix + v) for k, v in (facts.rows() if facts else [("Controller, link, power", NOT_RECORDED)])]
        limit += (facts.link_mb_s if facts else None) or 0.0
    peak = peak_mb_s(view)
    if limit and peak:
        rows.append(("Peak vs link", f"{peak:,.0f} MB/s measured peak (one cell) = {peak / limit * 100:.1f} % of the "
                                     f"{limit:,.0f} MB/s raw link limit" + (" (links summed)" if len(members) > 1 else "")))
    notes = run["options"].notes
    rows.append(("Set-up notes", "; ".join(notes) or "none given (ssdpts run --note)"))
    if run["options"].label:
        rows.append(("Run name", f"{run['options'].label} (ssdpts run --label; its name in comparisons)"))
    return rows


@dataclass(frozen=True)
class CellCpu:
    """Whole-host CPU of one cell over the test's rounds (means), beside fio's own thread CPU."""

    cell: str
    rounds: int
    iops: float
    busy_pct: float
    user_pct: float
    system_pct: float
    iowait_pct: float
    irq_pct: float
    iops_per_busy_core: float | None
    fio_usr_pct: float
    fio_sys_pct: float


def cell_cpu(rounds) -> list[CellCpu]:
    """Per cell name, the means over the rounds that measured host CPU (simulated cells have none)."""
    by: dict[str, list] = {}
    for r in rounds:
        for c in r.cells:
            if isinstance(c.host_cpu, HostCpu):
                by.setdefault(c.name, []).append(c)
    out = []
    for name, cells in by.items():
        n = len(cells)
        mean = (lambda f: sum(f(c) for c in cells) / n)
        busy_cores = mean(lambda c: c.host_cpu.busy_cores)
        iops = mean(lambda c: c.iops)
        out.append(CellCpu(name, n, iops, mean(lambda c: c.host_cpu.busy_pct), mean(lambda c: c.host_cpu.user_pct),
                           mean(lambda c: c.host_cpu.system_pct), mean(lambda c: c.host_cpu.iowait_pct),
                           mean(lambda c: c.host_cpu.irq_pct), iops / busy_cores if busy_cores > 0 else None,
                           mean(lambda c: c.usr_cpu), mean(lambda c: c.sys_cpu)))
    return out


def throttle_text(before: HealthSnapshot | None, after: HealthSnapshot | None) -> str:
    if before is None or after is None:
        return "not available (no health snapshots before and after the test)"
    parts = []
    for count, secs, label in THERMAL:
        a, b, sa, sb = getattr(before, count), getattr(after, count), getattr(before, secs), getattr(after, secs)
        if a is not None and b is not None:
            parts.append(f"{label}: +{b - a} transitions" + (f", +{sb - sa} s" if sa is not None and sb is not None
                                                              else ""))
    if not parts:
        return ("not available (" + (after.reason or "the drive's health data has no NVMe thermal management "
                                     "counters (nvme-cli smart-log thm_temp1/2)") + ")")
    return "; ".join(parts)


def _temperature(ctx) -> Markup:
    got = sampling.traces(ctx.store, ctx.run_id, ctx.name)
    if not got:
        return Markup('<p class="note">Temperature during the test: not recorded (the run predates this '
                      'record).</p>')
    out = []
    t0 = ctx.test.get("started") or 0.0
    rounds = ctx.rounds()
    iops = ([r.started - t0 + (r.ended - r.started) / 2 for r in rounds], [sum(c.iops for c in r.cells) for r in rounds])
    for i, tr in enumerate(got):
        if not tr.celsius:
            out.append(Markup(f'<p class="note">Temperature during the test ({escape(tr.drive)}): '
                              f'{escape(tr.note or "not available: no sample could be read")}.</p>'))
            continue
        fig = ctx.figure()
        xs = [tr.started + s - t0 for s in tr.seconds]
        plots.twin_plot(fig, iops, (xs, tr.celsius), "time since the test started (s)",
                        "IOPS per round (sum of its cells)", "drive temperature (°C)")
        out.append(ctx.plot(fig, f"temperature-{i}", f"Temperature during the test ({tr.drive})",
                            f"{len(tr.celsius)} readings every {tr.interval_s:g} s from {tr.source}; max "
                            f"{tr.max_c:.0f} °C."))
    return Markup("").join(out)


def bench_block(ctx) -> Markup:
    """Per test: temperature, throttle counters, host CPU per cell. Never raises."""
    try:
        steps = {s["key"]: s["data"] for s in ctx.steps("health")}
        out = [_temperature(ctx), Markup(f'<p class="note">Thermal throttling (NVMe thermal management counters, '
                                         f'Δ over the test): {escape(throttle_text(steps.get("health:before"), steps.get("health:after")))}.</p>')]
        rows = cell_cpu(ctx.rounds())
        if rows:
            out.append(ctx.table("host-cpu", ["Cell", "Rounds", "IOPS", "Host busy (%)", "user (%)", "system (%)",
                                              "iowait (%)", "irq+softirq (%)", "IOPS per busy core",
                                              "fio usr_cpu (%)", "fio sys_cpu (%)"],
                                 [[r.cell, r.rounds, r.iops, r.busy_pct, r.user_pct, r.system_pct, r.iowait_pct,
                                   r.irq_pct, r.iops_per_busy_core, r.fio_usr_pct, r.fio_sys_pct] for r in rows],
                                 caption="Whole-host CPU per cell (/proc/stat, all CPUs, everything running on the "
                                         "host; busy = 100 − idle − iowait), means over the rounds; fio's usr/sys_cpu "
                                         "count only fio's own threads"))
        else:
            out.append(Markup('<p class="note">Host CPU per cell: not measured (simulated drive, or a run that '
                              'predates this record).</p>'))
        return Markup("").join(out)
    except Exception as e:   # never lose a report for bench data
        log.warning("bench block for %s failed: %s", getattr(ctx, "name", "?"), e)
        return Markup(f'<p class="warn">Bench block failed: {escape(str(e))}</p>')
