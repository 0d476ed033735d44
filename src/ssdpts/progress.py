"""Live progress on the terminal (rich) and in the run's log file; `--quiet` keeps only the log.

Where the run is: test k of n, round r of ≤ max, the running cell, the preconditioning's bytes, and ETAs for
the test and the whole run from the plans' bounds (`ssdpts plan`) and the time already spent. A bound is
printed as "≤": a steady-state loop ends anywhere between its window and its round limit. Each round's line
gives the device idle measured at the block layer before it (docs/device-idle.md), never the gate-side figure.
"""

from __future__ import annotations

import logging
import sys
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING

from .metrics import IOPS, METRICS, metric_of
from .units import format_duration

if TYPE_CHECKING:
    from .engines.results import IoProgress, RoundOutput
    from .health.record import HealthSnapshot
    from .livemetrics import LiveMetrics
    from .pts.plan import TestPlan
    from .pts.resume import WorkDone

log = logging.getLogger("ssdpts")

PRINT_EVERY_S = 30.0    # a line of preconditioning progress at most this often without a terminal


@dataclass(frozen=True)
class PlanBounds:
    """A test's planned duration: its time-bound phases take seconds_min..seconds_max, its size-bound ones
    (preconditioning) write size_bound_bytes at the drive's speed."""

    test: str
    seconds_min: float
    seconds_max: float
    size_bound_bytes: int

    @classmethod
    def of(cls, plan: "TestPlan") -> "PlanBounds":
        return cls(plan.test, plan.seconds_min, plan.seconds_max, plan.size_bound_bytes)


def span(lo: float, hi: float) -> str:
    """A duration known exactly, or only as a bound ("≤ 2h10m")."""
    return format_duration(hi) if hi - lo < 0.5 else f"≤ {format_duration(hi)}"


def mb(n: float) -> str:
    """Bytes in decimal units, as a drive's data sheet gives them."""
    return f"{n / 1e9:.2f} GB" if n >= 1e9 else f"{n / 1e6:.1f} MB"


def idle_text(out: "RoundOutput") -> str:
    """The device's idle before a round, as the block layer measured it, or why it was not measured."""
    idle = out.device_idle_before
    if (idle is None or idle.ms is None) and out.device_idle_note:
        return f"device idle before it {out.device_idle_note}"
    if idle is None:
        return ""                        # no transition before it (the session's first I/O)
    if idle.ms is None:
        return f"device idle before it not measured ({out.device_idle_note or 'no block-layer sample'})"
    return f"device idle before it {idle.ms:.1f} ms"


class Progress:
    """Receives events from the runner and the tests; prints where the run is and when it will end."""

    def __init__(self, quiet: bool = False, simulated: bool = False, live: "LiveMetrics | None" = None):
        self.quiet = quiet
        self._metrics = live       # the run's live metrics (--metrics-port, --metrics-textfile), if asked
        # a simulated drive's durations and the plans' bounds are simulated time, not the wall clock: every
        # duration and ETA says so, with the wall time beside it
        self.simulated = simulated
        self._wall_started = time.monotonic()
        self._live = None
        self._status = ""
        self._desc = ""
        self._round_started = 0.0
        self._round_seconds: float | None = None
        self._max_rounds = 0
        self._round_no = 0
        self._cells: list[tuple[str, float]] = []
        self._bounds: dict[str, PlanBounds] = {}
        self._tests: list[str] = []
        self._test = ""
        self._spent = 0.0          # time-bound seconds of the running test already done
        self._mark = time.monotonic()
        self._written = 0          # size-bound bytes of the running test already written
        self._rate: float | None = None           # bytes/s of the last preconditioning
        self._io: IoProgress | None = None
        self._io_printed = 0.0
        if not quiet and sys.stderr.isatty():
            from rich.console import Console
            from rich.live import Live

            self._console = Console(stderr=True)
            self._live = Live("", console=self._console, refresh_per_second=4, transient=True,
                              get_renderable=self._render)
            self._live.start()
        else:
            self._console = None

    # what the terminal shows between lines ---------------------------------------------------------
    def status_line(self) -> str:
        """The live line: where the run is and the ETAs (a terminal redraws it 4 times a second)."""
        if not self._desc:
            return ""
        now = time.monotonic()
        if self._io is not None:
            return f"{self._desc}: {self._io_text(self._io)}; {self.eta()}"
        elapsed = now - self._round_started
        cell = ""
        if self._cells:   # cells are time based and back to back: the running one follows from the clock
            t = 0.0
            for i, (name, secs) in enumerate(self._cells, start=1):
                t += secs
                if elapsed < t or i == len(self._cells):
                    cell = f" cell {i}/{len(self._cells)} {name}"
                    break
        if self._round_seconds:
            frac = min(elapsed / self._round_seconds, 1.0)
            bar = "█" * int(frac * 20) + "·" * (20 - int(frac * 20))
            clock = f" {bar} round {format_duration(max(self._round_seconds - elapsed, 0))} left"
        else:
            clock = f" {format_duration(elapsed)} elapsed"
        lost = self.stop_cost()
        return f"{self._desc}{cell}{clock}; {self.eta()}{'; a stop now loses ' + lost if lost else ''}  {self._status}"

    def stop_cost(self) -> str:
        """What a stop now would lose: the round in flight ('round 3: 34m of 56m measured'), or the running
        preconditioning's bytes; "" between rounds. A resume runs it again from its start."""
        if not self._desc:
            return ""
        if self._io is not None:
            total = f" of {mb(self._io.bytes_total)}" if self._io.bytes_total else ""
            return f"the preconditioning in flight: {mb(self._io.bytes_done)}{total} written"
        if not self._round_seconds:
            return ""
        elapsed = min(time.monotonic() - self._round_started, self._round_seconds)
        what = f"round {self._round_no}" if self._round_no else "the preconditioning in flight"
        return f"{what}: {format_duration(elapsed)} of {format_duration(self._round_seconds)} measured"

    def _render(self):
        from rich.text import Text

        return Text(self.status_line(), style="bold")

    def eta(self) -> str:
        """'ETA test ≤ 1m10s, run ≤ 5m20s', from the plans' bounds less the time the test has spent."""
        test, run, writes = self._eta_bounds()
        if test is None:
            return "ETA unknown (no plan for this test)"
        if run is None:
            return self._clock(f"ETA test {span(*test)}, run unknown")
        return self._clock(f"ETA test {span(*test)}, run {span(*run)}{writes}")

    def _eta_bounds(self) -> tuple[tuple[float, float] | None, tuple[float, float] | None, str]:
        """The test's and the run's time left (lower, upper), None where unknown, and what the run's bound
        leaves out or assumes of the preconditioning still to write."""
        test = self._test_left()
        if test is None:
            return None, None, ""
        lo, hi = test
        later = [self._bounds.get(t) for t in self._tests[self._tests.index(self._test) + 1:]] \
            if self._test in self._tests else []
        if any(b is None for b in later):
            return test, None, ""
        run_lo, run_hi = lo + sum(b.seconds_min for b in later), hi + sum(b.seconds_max for b in later)
        unwritten = sum(b.size_bound_bytes for b in later)
        if self._bounds.get(self._test):   # the running preconditioning is in the test's own ETA
            in_flight = self._io.bytes_total or 0 if self._io is not None else 0
            unwritten += max(self._bounds[self._test].size_bound_bytes - self._written - in_flight, 0)
        writes = ""
        if unwritten and self._rate:
            run_lo, run_hi = run_lo + unwritten / self._rate, run_hi + unwritten / self._rate
            writes = f" (preconditioning at the measured {self._rate / 1e6:,.0f} MB/s)"
        elif unwritten:
            writes = f" + writing {mb(unwritten)} at the drive's speed"
        return test, (run_lo, run_hi), writes

    def _publish(self, **values) -> None:
        """Hands the event's figures to the live metrics (docs/metrics.md), with the ETAs as of now."""
        if self._metrics is None:
            return
        test, run, writes = self._eta_bounds()
        eta = []
        if test is not None:
            eta += [("test", "lower", test[0]), ("test", "upper", test[1])]
        if run is not None:   # bytes still to write at an unknown speed: the run's upper bound is unknown
            eta += [("run", "lower", run[0]), ("run", "upper", None if "drive's speed" in writes else run[1])]
        self._metrics.publish(**{"eta": eta, "eta_at": time.time(), **values})

    def _clock(self, eta: str) -> str:
        """A simulated drive's ETA is simulated time: said, with the wall time spent so far beside it."""
        if not self.simulated:
            return eta
        return (f"{eta.replace('ETA ', 'ETA in simulated time: ', 1)} (wall so far "
                f"{format_duration(time.monotonic() - self._wall_started)})")

    def _test_left(self) -> tuple[float, float] | None:
        bounds = self._bounds.get(self._test)
        if bounds is None:
            return None
        if self._io is not None and self._io.fraction is not None and self._io.bytes_per_s:
            pc = (self._io.bytes_total - self._io.bytes_done) / self._io.bytes_per_s
            return bounds.seconds_min - self._spent + pc, bounds.seconds_max - self._spent + pc
        running = 0.0
        if self._round_seconds:
            running = min(time.monotonic() - self._round_started, self._round_seconds)
        spent = self._spent + running
        lo, hi = max(bounds.seconds_min - spent, 0.0), max(bounds.seconds_max - spent, 0.0)
        return min(lo, hi), hi

    @staticmethod
    def _io_text(p: "IoProgress") -> str:
        rate = f", {p.bytes_per_s / 1e6:,.0f} MB/s" if p.bytes_per_s else ""
        if p.fraction is None:
            return f"{mb(p.bytes_done)} moved{rate} (MB = 10^6 bytes)"
        return f"{mb(p.bytes_done)} of {mb(p.bytes_total)} ({100 * p.fraction:.0f} %){rate} (MB = 10^6 bytes)"

    # lines ---------------------------------------------------------------------------------------
    def _print(self, text: str) -> None:
        log.info(text)
        if self.quiet:
            return
        if self._console is not None:
            self._console.print(text, highlight=False)
        else:
            print(text, file=sys.stderr, flush=True)

    def message(self, text: str) -> None:
        self._print(text)

    def run_started(self, run_id: str, target: str, profile: str, tests: list[str], results: str) -> None:
        self._print(f"run {run_id}: {target}, profile {profile}, tests {', '.join(tests)} — results in {results}")
        self._publish(run_id=run_id, target=target, profile=profile, simulated=self.simulated, tests=len(tests),
                      status="running")

    def run_ended(self, status: str) -> None:
        """The run's status as the runner stored it (completed, partial, interrupted, failed)."""
        self._publish(status=status, round_seconds=None, eta=[])     # nothing left: no ETA

    def planned(self, tests: list[str], bounds: list[PlanBounds]) -> None:
        """The run's tests in order and the bounds of those that have a plan."""
        self._tests = list(tests)
        self._bounds = {b.test: b for b in bounds}
        self._publish(tests=len(tests))

    def health(self, test: str, snap: "HealthSnapshot") -> None:
        """A health reading (around each test, and the endurance test's polls): temperature, wear, errors."""
        if self._metrics is None:
            return
        if snap.failures:
            self._metrics.count("health_failures", len(snap.failures))
        if snap.available:
            self._publish(health={k: getattr(snap, k) for k in (
                "temperature_c", "percentage_used", "available_spare", "host_written_bytes", "media_errors",
                "critical_warning", "timestamp")})

    def test_started(self, test: str, title: str, index: int, count: int, done: "WorkDone | None" = None) -> None:
        """`done`: what a resumed test stored before (its finished preconditioning and rounds leave the ETA)."""
        self._test, self._io = test, None
        self._spent, self._written = (done.seconds, done.size_bound_bytes) if done is not None else (0.0, 0)
        self._mark = time.monotonic()
        self._desc = ""
        b = self._bounds.get(test)
        planned = ""
        if b is not None:
            planned = f" (planned {span(b.seconds_min, b.seconds_max)}" + (
                f" + writing {mb(b.size_bound_bytes)}" if b.size_bound_bytes else "") + ")"
        self._print(f"== test {index}/{count}: {title}{planned}")
        self._publish(test=test, title=title, phase="", test_index=index, tests=count, round=None,
                      round_limit=None, round_seconds=None, pc_done=None, pc_total=None)
        if done is not None and (done.seconds or done.size_bound_bytes):
            self._print(f"   resumed: {format_duration(done.seconds)} of rounds" + (
                f" and {mb(done.size_bound_bytes)} of preconditioning" if done.size_bound_bytes else "")
                + f" already stored, left out of the ETA; {self.eta()}")

    def round_started(self, test: str, phase: str, round_no: int, max_rounds: int, seconds: float | None,
                      what: str, cells: list[tuple[str, float]] | None = None, window: int | None = None) -> None:
        where = f"{test}{' ' + phase if phase else ''}"
        counter = f"round {round_no}/≤{max_rounds}" if max_rounds else f"round {round_no}"
        self._desc = f"{where}: {what}" if what else f"{where}: {counter}"
        self._round_started = time.monotonic()
        self._round_seconds = seconds
        self._cells = list(cells or [])
        self._max_rounds = max_rounds
        self._round_no = round_no
        self._io = None
        if round_no:
            self._mark = self._round_started
        log.info("%s started", self._desc)
        self._publish(test=test, phase=phase, round=round_no, round_limit=max_rounds, round_seconds=seconds,
                      round_started_at=time.time(), pc_done=None, pc_total=None)

    def io_progress(self, test: str, phase: str, p: "IoProgress") -> None:
        """A running size-bound round's status (preconditioning), from the engine's thread."""
        self._io = p
        self._publish(pc_done=p.bytes_done, pc_total=p.bytes_total)
        now = time.monotonic()
        if self._console is None and (now - self._io_printed >= PRINT_EVERY_S):
            self._io_printed = now
            self._print(f"   {test}{' ' + phase if phase else ''} preconditioning: {self._io_text(p)}; {self.eta()}")

    def precondition_done(self, test: str, phase: str, p: "IoProgress") -> None:
        self._io, self._io_printed = None, 0.0     # the next preconditioning prints its first report
        self._written += p.bytes_done
        self._rate = p.bytes_per_s or self._rate
        took = f" in {format_duration(p.io_seconds)}" if p.io_seconds >= 60 else f" in {p.io_seconds:.1f} s"
        if self.simulated:    # the drive's own clock ran the I/O: the wall clock beside it
            took += f" simulated (wall {time.monotonic() - self._round_started:.1f} s)"
        rate = f", {p.bytes_per_s / 1e6:,.0f} MB/s" if p.bytes_per_s else ""
        self._print(f"   {test}{' ' + phase if phase else ''} preconditioning done: {mb(p.bytes_done)} "
                    f"written{took}{rate} (MB = 10^6 bytes)")
        self._mark = time.monotonic()
        self._publish(pc_done=p.bytes_done, pc_total=p.bytes_total)

    def round_done(self, test: str, phase: str, round_no: int, tracking: dict, reached: bool,
                   out: "RoundOutput | None") -> None:
        now = time.monotonic()
        self._spent += self._round_seconds if self._round_seconds else now - self._mark
        self._mark, self._round_seconds = now, None
        values = ", ".join(f"{k}={_fmt(v, k)}" for k, v in tracking.items() if isinstance(v, (int, float)))
        if not values:
            values = ", ".join(f"{k}=[{', '.join(_fmt(x, k) for x in v)}]" for k, v in tracking.items()
                               if isinstance(v, list))
        idle = idle_text(out) if out is not None else ""
        counter = f"round {round_no}/≤{self._max_rounds}" if 0 < round_no <= self._max_rounds else f"round {round_no}"
        state = "steady state reached" if reached else "not steady yet"
        self._status = values
        self._print(f"   {test}{' ' + phase if phase else ''} {counter}: {values}{'; ' + idle if idle else ''}"
                    f" — {state}; {self.eta()}")
        if self._metrics is not None:
            measured = out.device_idle_before if out is not None else None
            self._metrics.count("rounds")
            self._publish(round=round_no, last_round=round_no, last_round_test=test, last_round_phase=phase, reached=reached,
                          tracking={k: v for k, v in tracking.items()
                                    if isinstance(v, (int, float)) and not isinstance(v, bool)},
                          device_idle_ms=measured.ms if measured is not None else None, round_seconds=None)

    def close(self) -> None:
        if self._live is not None:
            self._live.stop()
            self._live = None


def _fmt(v: float, key: str) -> str:
    if key.endswith("burst_iops"):
        return f"{v:,.0f}"
    if key.endswith("mib_s"):
        return f"{v:.1f} MiB/s"
    # the metric before a parallel run's " @drive"; a bare cell name tracks its IOPS
    return METRICS.get(metric_of(key), IOPS).show(v)
