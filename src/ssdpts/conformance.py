"""The conformance verdict of a run (`ssdpts check`): every deviation from the spec its profile claims,
each with its evidence and the source of the rule. It heads `show` and the report.

A run is conformant when no rule finds a deviation. The rules read only stored data (the run record,
each test's purge steps, rounds and typed summary), so a verdict can be given for any stored run.
Sources are cited as in docs/conformance.md.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field, fields, is_dataclass
from typing import TYPE_CHECKING, Callable

from .deviations import RUN_WIDE, Deviation
from .runresult.coverage import coverage_rule
from .plausibility import cells_of, interface_notes, judge
from .pts.spec import Summary
from .runresult.model import RunResult, TestResult
from .results import CellWindow, SteadyResult
from .store import Store
from .store.idle import GAP_LIMIT_MS, JUDGED_KINDS, judged_transitions
from .workload.ioengine import NOT_APPLICABLE

if TYPE_CHECKING:
    from .engines.drivefault import DriveFailure

IDLE_LIMIT_MS = GAP_LIMIT_MS   # ssdpts's bound for "no pause" between phases and rounds (store/idle.py)
SPEC_CELL_S = 60.0        # PTS 2.0.2 / PTS-E 1.1: one-minute cells
SPEC_WINDOW = 5
SPEC_MAX_ROUNDS = 25
SPEC_MAX_RANGE = 0.20
SPEC_MAX_SLOPE = 0.10
DRIVE_FAILED_SOURCE = "the drive failed I/O: fio's error report and the kernel log (docs/faults.md)"
PERCENTILE_MIN_IOS = {"99": 100, "99.9": 1_000, "99.99": 10_000, "99.999": 100_000}   # 1 / (1 - q)


@dataclass
class Finding:
    """A deviation and the test it belongs to ("" for the whole run)."""

    test: str
    deviation: Deviation


@dataclass
class Verdict:
    run_id: str
    profile: str
    spec: str
    findings: list[Finding] = field(default_factory=list)
    drive_failures: list[DriveFailure] = field(default_factory=list)   # they head every verdict
    notes: list[str] = field(default_factory=list)    # what a rule could not judge, and why (not deviations)

    @property
    def conformant(self) -> bool:
        return not self.findings

    def lines(self) -> list[str]:
        failed = [f"DRIVE FAILED: {f.line()}" for f in self.drive_failures]
        return failed + self._conformance_lines()

    def _conformance_lines(self) -> list[str]:
        head = (f"conformance: {'CONFORMANT' if self.conformant else 'NOT CONFORMANT'} to {self.spec or 'the spec'}"
                f" (profile {self.profile})" + ("" if self.conformant else f", {len(self.findings)} deviations"))
        return [head] + [f"  - [{f.deviation.rule}] {f.test + ': ' if f.test else ''}{f.deviation.evidence} "
                         f"({f.deviation.source})" for f in self.findings] + [f"  note: {n}" for n in self.notes]

    def test_line(self, t: TestResult) -> str:
        """One test's verdict as the console ends it: steady state (which trackers), its deviations."""
        own = [f.deviation.rule for f in self.findings if f.test == t.name]
        loops = steady_loops(t.summary)
        if not loops:
            steady = "no steady-state loop"
        elif all(loop.reached for loop in loops):
            steady = "steady state reached (" + ", ".join(
                dict.fromkeys(k.key.label for loop in loops for k in loop.aggregate_trackers)) + ")"
        else:
            missed = [loop for loop in loops if not loop.reached]
            steady = (f"steady state NOT reached in {len(missed)} of {len(loops)} loop(s) (not steady: "
                      + ", ".join(dict.fromkeys(k.key.label for loop in missed for k in loop.aggregate_trackers
                                                if not k.state.reached)) + ")")
        rules = f" ({', '.join(r + (f' ×{n}' if n > 1 else '') for r, n in Counter(own).items())})" if own else ""
        return (f"verdict {t.name}: {steady}; {len(own)} deviation(s){rules} — "
                f"{'conformant' if not own else 'NOT CONFORMANT'}")


def steady_loops(summary: object) -> list[SteadyResult]:
    """Every steady-state loop in a test's typed summary (one, or one per block size, ...)."""
    if isinstance(summary, SteadyResult):
        return [summary]
    if is_dataclass(summary) and not isinstance(summary, type):
        return [s for f in fields(summary) for s in steady_loops(getattr(summary, f.name))]
    if isinstance(summary, (list, tuple)):
        return [s for x in summary for s in steady_loops(x)]
    if isinstance(summary, dict):
        return [s for x in summary.values() for s in steady_loops(x)]
    return []


def _steady(run: RunResult, t: TestResult, store: Store) -> list[Deviation]:
    steady = getattr(t.summary, "steady", None)
    if isinstance(steady, SteadyResult) and not steady.reached:
        return [Deviation("steady-state", f"steady state not reached in {steady.rounds} rounds: "
                          + ("; ".join(steady.reasons) or "window incomplete"),
                          "PTS 2.0.2 §2.1.24; IOPS 3.2: until steady state or 25 rounds")]
    return []


def _gaps(run: RunResult, t: TestResult, store: Store) -> list[Deviation]:
    """Unintended idle: every transition (before a round, between its cells, across a resume) idling beyond the
    idle its next cell asks for (HIR's wait states); the same transitions `show` counts (judged_transitions).
    The device's own idle (block layer) where it was measured, else the engine's gate-side figure (a lower
    bound of the device's idle); the evidence says which."""
    rounds = [r for kind in JUDGED_KINDS for r in store.rounds(run.id, t.name, kind=kind, with_cells=False)]
    over = [x for x in judged_transitions(rounds, store.round_workloads) if x.over_limit]
    if not over:
        return []
    worst = max(over, key=lambda x: x.excess_ms)
    by_device = sum(1 for o in over if o.source == "device")
    how = ("device idle measured at the block layer" if by_device == len(over) else
           "gate-side figure (device idle not measured)" if not by_device else
           f"{by_device} by device idle measured at the block layer, {len(over) - by_device} by gate-side figure "
           "(device idle not measured)")
    measured = "device idle" if worst.source == "device" else "gate-side figure"
    resumed = [o for o in over if o.across_resume]
    across = (f"; {len(resumed)} across a stop and its resume (longest {max(o.excess_ms for o in resumed) / 1000:.1f} s"
              f", {resumed[0].where})" if resumed else "")
    return [Deviation("idle-gap", f"{len(over)} transitions left the device idle for more than "
                      f"{IDLE_LIMIT_MS:g} ms ({how}): longest {worst.excess_ms:.1f} ms ({measured}, beyond any "
                      f"requested idle) {worst.where}{across}", "PTS 2.0.2 IOPS step 3: no pause "
                      f"between WIPC and WDPC or between rounds; ssdpts bound {IDLE_LIMIT_MS:g} ms")]


def _percentiles(run: RunResult, t: TestResult, store: Store) -> list[Deviation]:
    cells = getattr(t.summary, "cells", None)
    steady = getattr(t.summary, "steady", None)
    if not isinstance(cells, dict) or not isinstance(steady, SteadyResult) or not steady.window_rounds:
        return []
    window = set(steady.window_rounds)
    ios: dict[tuple[str, str], int] = {}
    for r in t.cell_rounds:     # the rounds load_run read with their cells (decoding them again cost `check` a third)
        if r.kind == "round" and (steady.phase is None or r.phase == steady.phase) and r.round in window:
            for c in r.cells:
                ios[(c.name, "read")] = ios.get((c.name, "read"), 0) + c.read.ios
                ios[(c.name, "write")] = ios.get((c.name, "write"), 0) + c.write.ios
    short = []      # (I/Os, cell direction, lowest percentile beyond its samples)
    for name, c in cells.items():
        if not isinstance(c, CellWindow):
            continue
        for direction, lat in (("read", c.read_lat), ("write", c.write_lat)):
            n = ios.get((name, direction), 0)
            beyond = [q for q in (lat.percentiles_us if lat else {}) if n < PERCENTILE_MIN_IOS.get(q, 0)]
            if beyond:
                short.append((n, f"{name} {direction}", min(beyond, key=float)))
    if not short:
        return []
    n, where, q = min(short)
    return [Deviation("percentiles", f"{len(short)} cell directions report percentiles from fewer I/Os than "
                      f"they need, e.g. {where}: {n:,} I/Os in the measurement window, p{q} and above need "
                      f"≥ {PERCENTILE_MIN_IOS[q]:,}", "a percentile q needs at least 1/(1−q) samples")]


def _durations(run: RunResult, t: TestResult, store: Store) -> list[Deviation]:
    if t.spec is None or t.spec.kind != "pts":
        return []
    s = run.settings.of(t.name)
    out = []
    if s.cell_runtime < SPEC_CELL_S:
        out.append(Deviation("duration", f"cells of {s.cell_runtime:g} s instead of 1 minute: "
                             f"profile {run.profile_name} cell_runtime = {s.cell_runtime:g} s",
                             "PTS 2.0.2 / PTS-E 1.1: 1-minute cells"))
    steady = getattr(t.summary, "steady", None)
    st = s.steady
    window, rounds, rule = st.window, st.max_rounds, st.rule
    if isinstance(steady, SteadyResult) and (window != SPEC_WINDOW or rule != "snia" or st.max_range != SPEC_MAX_RANGE
                                             or st.max_slope != SPEC_MAX_SLOPE):
        out.append(Deviation("steady-rule", "steady state judged by other criteria than SNIA's: "
                             f"rule {rule}, window {window}, range {st.max_range}, "
                             f"slope {st.max_slope}", "PTS 2.0.2 §2.1.24: 5 rounds, 20 % range, 10 % slope"))
    if rounds < SPEC_MAX_ROUNDS and isinstance(steady, SteadyResult) and not steady.reached:
        out.append(Deviation("duration", f"round limit {rounds} instead of 25 and steady state not reached: "
                             f"profile {run.profile_name} max_rounds = {rounds}", "PTS 2.0.2 IOPS 3.2: up to 25 rounds"))
    # stopped before the spec's stop (WSAT: 4x the capacity or 24 h), whatever the profile asked: the test's summary
    # holds the figures (written, elapsed) and says so itself
    out += t.summary.stopped_short() if isinstance(t.summary, Summary) else []
    return out


IO_MODE_SOURCE = ("PTS measures the device, not the host: its fio implementations (py-sss-pts, cloudharmony) run "
                  "direct=1 without sync (docs/conformance.md, 'I/O mode: sync and direct')")


def _io_mode(run: RunResult, t: TestResult, store: Store) -> list[Deviation]:
    """SNIA measures the drive with direct, unsynchronised I/O: the common keys `direct` and `sync` set off
    that are the profile's choice (an O_DSYNC series, a page-cache comparison), not PTS results."""
    if t.spec is None or t.spec.kind != "pts":
        return []
    s = run.settings.of(t.name)
    out = []
    if not s.direct:
        out.append(Deviation("io-mode", f"direct = false (profile {run.profile_name}): the cells went through the "
                             "host's page cache; the results measure it, not the drive", IO_MODE_SOURCE))
    if s.sync != "none":
        out.append(Deviation("io-mode", f"sync = {s.sync} (profile {run.profile_name}): every write waited for "
                             f"O_{s.sync.upper()}", IO_MODE_SOURCE))
    return out


def _stimulus(run: RunResult, t: TestResult, store: Store) -> list[Deviation]:
    """Cells whose I/O reached the device otherwise than asked (runresult/stimulus.py)."""
    return t.stimulus.deviations() if t.stimulus is not None else []


def _plausibility(run: RunResult, t: TestResult, store: Store) -> list[Deviation]:
    """Figures that cannot be trusted: implausible cells, above the interface, host-limited (plausibility.py)."""
    return judge(cells_of(t.cell_rounds), run.target)


TEST_RULES: list[Callable[[RunResult, TestResult, Store], list[Deviation]]] = [_steady, _gaps, _percentiles, _durations,
                                                                              _io_mode, coverage_rule, _plausibility,
                                                                              _stimulus]


def check(run: RunResult, store: Store) -> Verdict:
    """Deviations recorded where they happened (purge, write cache, health) plus those read from the results."""
    verdict = Verdict(run.id, run.profile_name, run.settings.spec)
    recorded = store.deviations(run.id)
    verdict.drive_failures = store.drive_failures(run.id)
    verdict.findings += [Finding(f.test, Deviation("drive-failed", f.evidence(), DRIVE_FAILED_SOURCE))
                         for f in verdict.drive_failures]
    verdict.findings += [Finding("", d) for d in recorded.get(RUN_WIDE, [])]
    verdict.notes += interface_notes(run.target)
    if (io := run.options.io_engine) is not None and io.ioengine != NOT_APPLICABLE:
        verdict.notes.append(f"fio ioengine {io.ioengine}: the spec fixes no I/O engine (not a deviation)")
    for t in run.tests:
        verdict.findings += [Finding(t.name, d) for d in recorded.get(t.name, [])]
        if t.status == "drive-failed":
            continue          # its finding is the drive's, above
        if t.status != "completed":
            verdict.findings.append(Finding(t.name, Deviation("incomplete", f"test {t.status}: no summary stored",
                                                              "a result needs the whole procedure")))
            continue
        for rule in TEST_RULES:
            verdict.findings += [Finding(t.name, d) for d in rule(run, t, store)]
    return verdict
