"""The report core: header, one section per test (from the test module's renderer), HTML assembly.

It knows no test: sections come from each registered test's `html` (and `parts`) renderer; stored
tests without a spec or renderer get `generic_section`.
"""

from __future__ import annotations

import logging
import time
import traceback
from pathlib import Path
from typing import Sequence

from jinja2 import Environment, FileSystemLoader, select_autoescape
from markupsafe import Markup, escape

from .. import __version__
from ..conformance import Verdict
from ..doctor import recorded_checks
from ..errors import SsdptsError
from ..health.report import health_block
from ..hostinfo import REMOTE_NOT_AVAILABLE, HostRecord
from ..pts.registry import find
from ..results import SteadyResult
from ..store import Store
from ..pts.resume import resume_lines
from ..targets.purge import PurgeRecord
from ..targets.writecache import spec_words
from ..units import bs_label
from ..workload.ioengine import recorded_text
from ..render import plots
from .coverage import coverage_block
from ..render.context import RunView, SectionContext, device_label, steady_block
from ..render.drives import member_rows
from .headline import SimulatedDrive
from .bench import bench_block, device_rows, platform_rows
from .stimulus import stimulus_block
from ..render.toolkit import Artifacts, Cell, fmt_num
from ..records import from_data
from ..workload import Workload
from ..workload.spec import io_mode_label

log = logging.getLogger("ssdpts")
TEMPLATES = Path(__file__).parent / "templates"


def env() -> Environment:
    e = Environment(loader=FileSystemLoader(str(TEMPLATES)), autoescape=select_autoescape(["html", "j2"]),
                    trim_blocks=True, lstrip_blocks=True)
    e.filters["datetime"] = lambda t: time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(t)) if t else "–"
    return e


def default_out_dir(store: Store, run_id: str) -> Path:
    return store.path.parent / "reports" / run_id


# ---------------------------------------------------------------------------------------------
# SNIA header: test platform, device under test, set-up parameters, test parameters

def _gib(n: float) -> str:
    return f"{n:,.0f} B ({n / 1e9:,.2f} GB, {n / 2**30:,.2f} GiB)"


def _workloads(stored: list[dict]) -> list[Workload]:
    """Stored cells as typed workloads: a key an older run did not store takes Workload's declared default."""
    return [from_data(Workload, w) for w in stored]


def _direction(w: Workload) -> str:
    return "R" if w.rw in ("read", "randread") else "W" if w.rw in ("write", "randwrite") else "R/W"


def _rw_short(w: Workload) -> str:
    kind = "RND" if w.rw.startswith("rand") else "SEQ"
    d = _direction(w)
    if d == "R/W" and w.read_pct is not None:
        d = f"{w.read_pct}/{100 - w.read_pct}"
    return f"{kind} {bs_label(w.bs)} {d}"


def _or(value, unrecorded: str):
    """A recorded value, or what the header shows for one the run did not record."""
    return unrecorded if value is None else value


def _uniq(seq) -> list:
    out = []
    for x in seq:
        if x not in out:
            out.append(x)
    return out


def purge_text(view: RunView) -> str:
    items = []
    for s in view.steps("purge"):
        d = s["data"]
        t = f"{d.get('method')}" + ("" if d.get("snia_purge") else " (not a SNIA purge)")
        items.append(t)
    s = getattr(view.summary, "purge", None)
    if isinstance(s, PurgeRecord) and not items:
        items.append(s.method + ("" if s.snia_purge else " (not a SNIA purge)"))
    return ", ".join(_uniq(items)) or "none recorded"


def write_cache_text(view: RunView) -> str:
    """The state the test ran with, in the spec's words (WCE / WCD), and whether it is what the profile asks."""
    rec = view.store.step(view.run["id"], "", "write-cache")
    if not rec or not rec.get("drives"):
        return str(view.run["target"].info.get("write_cache") or "–")
    parts = []
    for d in rec["drives"]:
        if d.get("during") is None and d.get("note"):   # no cache to speak of (simulated drive) or not readable
            parts.append(f"not applicable: {d['note']}")
            continue
        text = spec_words(d.get("during"))
        if rec.get("required") in ("enabled", "disabled") and d.get("during") != rec["required"]:
            text += f" — NOT as required ({spec_words(rec['required'])})"
        elif d.get("changed"):
            text += " (set for the run" + (", restored after)" if d.get("restored") else ")")
        parts.append(text)
    return "; ".join(_uniq(parts))


def header(view: RunView) -> dict[str, list[tuple[str, str]]]:
    run, host, target = view.run, view.run["host"], view.run["target"]
    t = view.test
    when = f"{time.strftime('%Y-%m-%d %H:%M', time.localtime(t['started']))}" if t.get("started") else "–"
    if t.get("ended"):
        when += f" – {time.strftime('%Y-%m-%d %H:%M', time.localtime(t['ended']))}"
    platform = [
        ("Host", host.hostname or "–"),
        ("CPU", f"{_or(host.cpu_model, '–')} ({_or(host.cpu_cores, '?')} logical CPUs)"),
        ("Memory", f"{(host.memory_bytes or 0) / 2**30:.1f} GiB"),
        ("OS", f"{_or(host.os, '–')}, kernel {_or(host.kernel, '–')}"),
        ("Test software", f"{host.fio_version or run.get('engine')}, ssdpts {_or(host.ssdpts_version, __version__)}"),
        ("Run / date", f"{run['id']}, {when}"),
        ("Bench check", recorded_checks(host)),
        *platform_rows(host),
    ]
    if host.remote_hosts:   # fio servers: their platform is not visible from here, never this machine's
        na = host.not_available or REMOTE_NOT_AVAILABLE
        ctl = host.controller or HostRecord()
        platform[1:4] = [("CPU", na), ("Memory", na), ("OS", na),
                         ("Controller", f"{_or(ctl.hostname, '–')} (runs ssdpts and the fio client)")]
    dut = [
        ("Model", device_label(run)),
        ("Serial / firmware", f"{target.serial or '–'} / {target.firmware or '–'}"),
        ("Capacity", _gib(target.size_bytes)),
        ("Interface", f"{target.transport or target.kind or '–'}, {target.path}"),
        ("LBA size", f"{target.logical_block_size} B logical, {target.physical_block_size} B physical"),
        ("Write cache", write_cache_text(view)),
        ("Purge method", purge_text(view)),
        *device_rows(view),
    ]
    if target.kind == "set":   # several drives at once: name every one of them
        dut[2] = ("Capacity", _gib(target.size_bytes) + " (smallest drive: sets the ranges)")
        dut[1:1] = member_rows(run)
    st = view.settings
    ss = st.steady
    pre = view.rounds(kind="precondition", with_cells=False)
    pre_wl = _workloads([w for p in pre for w in view.store.round_workloads(p.id)])
    pcs = []
    for w in _uniq(pre_wl):
        amount = ""
        if w.io_size and target.size_bytes:
            amount = f", {w.io_size * w.threads / (w.range_size * target.size_bytes):.2g}× AR"
        pcs.append(f"{_rw_short(w)}, TC{w.threads}/QD{w.iodepth}{amount}")
    setup = [
        ("Data pattern", st.data_pattern),
        ("I/O mode", io_mode_label(st.direct, st.sync)),
        ("I/O engine", recorded_text(run["options"].io_engine)),
        ("Active range", f"{st.active_range:g} %"),
        ("Pre-condition", "; ".join(_uniq(pcs)) or "none stored"),
        ("Steady state", f"{ss.rule} rule, {ss.window}-round window, range ≤ {ss.max_range * 100:g} %, "
                         f"slope ≤ {ss.max_slope * 100:g} %, max {ss.max_rounds} rounds"),
        *[("Resume", line) for line in resume_lines(view.steps("resume"))],
    ]
    wls = _workloads(view.store.first_round_workloads(run["id"], view.name))
    rounds = view.rounds(with_cells=False)
    steady = getattr(view.summary, "steady", None)
    steady = steady if isinstance(steady, SteadyResult) else None
    window = steady.window_rounds if steady else []
    tp = [
        ("Stimulus", f"{len(wls)} cells per round: " + ", ".join(_uniq(
            ("RND" if w.rw.startswith("rand") else "SEQ") + " " + _direction(w) for w in wls)) if wls else "–"),
        ("R/W mix (outer loop)", ", ".join(_uniq(f"{w.read_pct}/{100 - w.read_pct}" for w in wls
                                                if w.read_pct is not None)) or "–"),
        ("Block size (inner loop)", ", ".join(_uniq(bs_label(w.bs) for w in wls if w.bs)) or "–"),
        ("TOIO", ", ".join(_uniq(f"TC{w.threads}/QD{w.iodepth}" for w in wls)) or "–"),
        ("Cell runtime", ", ".join(_uniq(f"{w.runtime_s:g} s" for w in wls if w.runtime_s)) or "–"),
        ("Rounds", f"{len(rounds)} stored" + (f"; window {window[0]}–{window[-1]}" if window else "")
         + ("" if not steady else "; steady state " + ("reached" if steady.reached else "NOT reached"))),
    ]
    return {"Test Platform": platform, "Device Under Test": dut, "Set-up Parameters": setup, "Test Parameters": tp}


# ---------------------------------------------------------------------------------------------
# generic section: tests without a renderer (WSAT, HIR... until their modules bring their own)

def generic_section(ctx: SectionContext) -> Markup:
    html: list = []
    for n in getattr(ctx.summary, "notes", None) or []:
        html.append(Markup(f'<p class="note">{escape(n)}</p>'))
    stored = getattr(ctx.summary, "steady", None)
    phases = ctx.phases()
    if not phases:
        return Markup('<p class="warn">No rounds stored for this test.</p>')
    for phase in phases:
        ph = f" ({phase})" if phase else ""
        key = phase.replace("=", "")
        k = (lambda what: f"{key}-{what}" if key else what)
        rounds = ctx.rounds(phase, with_cells=False)
        if not rounds:
            continue
        labels = _uniq(k for r in rounds for k in r.tracking)
        if not labels:  # no tracking variables stored: total IOPS of all cells per round
            rounds = ctx.rounds(phase)
            for r in rounds:
                r.tracking = {"iops": sum(c.iops for c in r.cells)}
            labels = ["iops"]
        steady = stored if isinstance(stored, SteadyResult) and stored.phase == phase else None
        if steady:
            html.append(steady_block(ctx, phase, steady, key=k("steady")))
        else:
            series, units = {}, set()
            for label in labels:
                unit, scale = plots.unit_of(label)
                units.add(unit)
                pts_ = [(r.round, r.tracking[label] * scale) for r in rounds if r.tracking.get(label) is not None]
                series[label] = ([p[0] for p in pts_], [p[1] for p in pts_])
            fig = ctx.figure()
            plots.series_plot(fig, series, "round", " / ".join(sorted(u for u in units if u)) or "value", ylim0=True)
            html.append(ctx.plot(fig, k("tracking"), f"tracking variables per round{ph}"))
        t0 = rounds[0].started
        rows = []
        for r in rounds:
            row = [r.round, Cell(r.started - t0, f"{r.started - t0:,.1f}"), Cell(r.ended - r.started, f"{r.ended - r.started:.2f}"),
                   r.gap_before_ms, r.device_idle_before.ms if r.device_idle_before else None]
            for label in labels:
                unit, scale = plots.unit_of(label)
                v = r.tracking.get(label)
                row.append(None if v is None else v * scale)
            rows.append(row)
        hdr = ["Round", "Start (s)", "Duration (s)", "Idle gap before (ms, gate)", "Device idle before (ms)"] + [
            f"{label} ({plots.unit_of(label)[0] or 'value'})" for label in labels]
        tab = ctx.table(k("rounds"), hdr, rows, caption=f"Rounds{ph}: tracking variables per round")
        html.append(Markup(f"<details><summary>Rounds table{escape(ph)} ({len(rows)} rounds)</summary>{tab}</details>"))
    return Markup("").join(html)


# ---------------------------------------------------------------------------------------------

def render_sections(store: Store, run: dict, art: Artifacts, strict: bool = False) -> list[dict]:
    sections = []
    for t in store.tests(run["id"]):
        spec = find(t["name"])
        ctx = SectionContext(store, run, t, spec, art)
        renderer = spec.html if spec else None
        rounds = ctx.rounds(with_cells=False)
        sec = {"name": t["name"], "title": ctx.title, "status": t["status"], "error": "", "body": Markup(""),
               "header": None, "anchor": f"test-{t['name']}", "model": ctx.model, "run_id": run["id"]}
        try:
            sec["header"] = header(ctx)
            if not rounds and not t.get("summary"):
                sec["body"] = Markup(f'<p class="warn">Not run ({escape(t["status"])}): no rounds stored.</p>')
            elif renderer is not None and t.get("summary"):
                sec["body"] = Markup(renderer(ctx) or "")
                if spec.parts is not None:   # several drives at once: each drive's own tables (else nothing)
                    sec["body"] += Markup(spec.parts(ctx) or "")
            else:
                if renderer is not None:
                    sec["body"] = Markup(f'<p class="warn">Test {escape(t["status"])}: no summary yet; showing the '
                                         f'{len(rounds)} stored rounds.</p>')
                sec["body"] += generic_section(ctx)
            failed = store.step(run["id"], t["name"], "failed-targets")
            if failed and failed.get("targets"):   # a drive dropped out of this test: say so before its results
                what = "; ".join(f"{k} ({v})" for k, v in failed["targets"].items())
                done = " (retried: see Run status)" if failed.get("retried") else ""
                sec["body"] = Markup(f'<p class="ss bad">Drive{"s" if len(failed["targets"]) > 1 else ""} failed '
                                     f'during this test{done}: {escape(what)}. Its results lack '
                                     f'{"them" if len(failed["targets"]) > 1 else "it"} from then on.</p>') + sec["body"]
            sec["body"] += health_block(ctx)   # SMART / NVMe / simulator deltas around every test
            sec["body"] += bench_block(ctx)    # temperature, throttling, host CPU per cell
            sec["body"] += stimulus_block(ctx)   # each cell's I/O at the device
            sec["body"] += coverage_block(ctx)  # LBA coverage per cell (report/coverage.py)
        except Exception as e:  # one broken section must not lose the rest of the report
            if strict:
                raise
            log.exception("report section %s failed", t["name"])
            sec["error"] = f"{type(e).__name__}: {e}"
            sec["body"] += Markup(f'<pre class="error">report section failed: {escape(traceback.format_exc(limit=3))}</pre>')
        sections.append(sec)
    return sections


def drive_rows(run: dict) -> list[tuple[str, str]]:
    """The drive as the headline names it: model, capacity, interface, firmware, and the run."""
    target = run["target"]
    size = target.size_bytes
    rows = [("Model", device_label(run)), ("Capacity", f"{size / 1e9:,.1f} GB ({size / 2**30:,.2f} GiB)"),
            ("Interface", f"{target.transport or target.kind}, {target.path}"),
            ("Firmware / serial", f"{target.firmware or '–'} / {target.serial or '–'}")]
    members = member_rows(run)
    if members:
        rows[0] = ("Drives", f"{len(members)} tested at once: " + "; ".join(v for _, v in members))
    rows.append(("Run", f"{run['id']} ({run['status']}), profile {run.get('profile_name')}"))
    return rows


def simulated_block(sim: SimulatedDrive | None, art: Artifacts) -> Markup:
    """A `sim:` run's evidence: every figure of the imitated drive its preset holds or not, and the two clocks."""
    if sim is None:
        return Markup("")
    head = Markup('<section class="test" id="simulated"><h2>Simulated drive</h2>') + Markup(
        f'<p class="ss bad">This run tested the simulator\'s <b>{escape(sim.preset)}</b> preset'
        + (f", shaped on the {escape(sim.imitates)}" if sim.imitates else "")
        + f". It is not that drive: the figures below say which of the review's numbers the preset reproduces "
          f"(within ±{sim.tolerance * 100:g} %, checked by tests/sim/test_presets.py) and which it does not: "
          f"{sim.held_text}. Cell "
          f"runtimes, rates and preconditioning times are simulated time: the stored rounds ran "
          f"{sim.simulated_s:,.1f} s simulated in {sim.wall_s:,.1f} s wall; run dates and round start times are "
          f"the wall clock.</p>")
    if not sim.figures:
        return head + Markup("<p>This preset has no calibration against a review (a user file, or a preset not "
                             "shaped on one): nothing it shows is known to match a real drive.</p></section>")
    rows = [[f.review_figure, f.what, Cell(f.review_value, f"{fmt_num(f.review_value)} {f.unit}"),
             Cell(f.held, "held" if f.held else "NOT held", "ok" if f.held else "bad"), f.note] for f in sim.figures]
    table = art.table("simulated-calibration", ["Review figure", "Simulated measurement", "Review", "Preset",
                                                "Why not held / how read"], rows,
                      caption=f"The {sim.preset} preset against the review it was shaped on (docs/simulator.md "
                              "carries the simulated values)")
    return head + table + Markup("</section>")


def conformance_block(verdict: Verdict, art: Artifacts) -> Markup:
    """The run's conformance verdict at the head of the report: every deviation with its evidence and source."""
    notes = Markup("").join(Markup(f'<p class="ss">Note: {escape(n)}</p>') for n in verdict.notes)
    if verdict.conformant:
        head = Markup(f'<p class="ss ok">Conformant to {escape(verdict.spec or "the spec")}: no deviation found '
                      f'(<code>ssdpts check {escape(verdict.run_id)}</code>).</p>')
        return (Markup('<section class="test" id="conformance"><h2>Conformance</h2>') + head + notes
                + Markup("</section>"))
    head = Markup(f'<p class="ss bad"><strong>NOT conformant</strong> to {escape(verdict.spec or "the spec")}: '
                  f'{len(verdict.findings)} deviations (<code>ssdpts check {escape(verdict.run_id)}</code>).</p>')
    table = art.table("conformance", ["Rule", "Test", "Deviation and evidence", "Source"],
                      [[f.deviation.rule, f.test or "run", f.deviation.evidence, f.deviation.source]
                       for f in verdict.findings],
                      caption="Every deviation from the spec the profile claims")
    return (Markup('<section class="test" id="conformance"><h2>Conformance</h2>') + head + table + notes
            + Markup("</section>"))


def section_errors(path: Path) -> list[str]:
    """Sections that failed to render in a written report (for the CLI's warning)."""
    text = Path(path).read_text(encoding="utf-8")
    return [line for line in text.splitlines() if "report section failed" in line]


def require_runs(store: Store, run_ids: Sequence[str]) -> list[dict]:
    runs = [store.run(r) for r in run_ids]
    if len({r["id"] for r in runs}) != len(runs):
        raise SsdptsError("the same run is given twice; compare different runs")
    return runs
