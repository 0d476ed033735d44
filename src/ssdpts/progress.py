"""Live progress on the terminal (rich) and in the run's log file; `--quiet` keeps only the log."""

from __future__ import annotations

import logging
import sys
import time

from .metrics import IOPS, METRICS, metric_of
from .units import format_duration

log = logging.getLogger("ssdpts")


class Progress:
    """Receives events from the tests; prints a status line with the round, tracking values and ETA."""

    def __init__(self, quiet: bool = False):
        self.quiet = quiet
        self._live = None
        self._status = ""
        self._round_started = 0.0
        self._round_seconds: float | None = None
        self._cells: list[tuple[str, float]] = []
        self._left: tuple[float, float] | None = None   # test time left after this round: (at least, at most)
        self._desc = ""
        self._run_started = time.monotonic()
        if not quiet and sys.stderr.isatty():
            from rich.console import Console
            from rich.live import Live

            self._console = Console(stderr=True)
            self._live = Live("", console=self._console, refresh_per_second=4, transient=True,
                              get_renderable=self._render)
            self._live.start()
        else:
            self._console = None

    def _render(self):
        from rich.text import Text

        if not self._desc:
            return Text("")
        elapsed = time.monotonic() - self._round_started
        eta = ""
        if self._round_seconds:
            frac = min(elapsed / self._round_seconds, 1.0)
            bar = "█" * int(frac * 20) + "·" * (20 - int(frac * 20))
            left = max(self._round_seconds - elapsed, 0)
            eta = f" {bar} round ETA {format_duration(left)}"
            if self._left:
                lo, hi = self._left
                eta += (f", test ETA {format_duration(left + lo)}" if lo == hi else
                        f", test ETA {format_duration(left + lo)}–{format_duration(left + hi)} (until steady)")
        else:
            eta = f" {format_duration(elapsed)} elapsed"
        cell = ""
        if self._cells:   # cells are time based and back to back: the running one follows from the clock
            t = 0.0
            for i, (name, secs) in enumerate(self._cells, start=1):
                t += secs
                if elapsed < t or i == len(self._cells):
                    cell = f" cell {i}/{len(self._cells)} {name}"
                    break
        return Text(f"{self._desc}{cell}{eta}  {self._status}", style="bold")

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

    def test_started(self, test: str, title: str, estimate_s: float | None) -> None:
        est = f" (at least {format_duration(estimate_s)})" if estimate_s else ""
        self._print(f"== {title}{est}")

    def round_started(self, test: str, phase: str, round_no: int, max_rounds: int, seconds: float | None,
                      what: str, cells: list[tuple[str, float]] | None = None, window: int | None = None) -> None:
        where = f"{test}{' ' + phase if phase else ''}"
        self._desc = f"{where}: {what}" if what else f"{where}: round {round_no}/≤{max_rounds}"
        self._round_started = time.monotonic()
        self._round_seconds = seconds
        self._cells = list(cells or [])
        self._left = None
        if seconds and window and round_no:
            self._left = (max(window - round_no, 0) * seconds, max(max_rounds - round_no, 0) * seconds)
        log.info("%s started", self._desc)

    def round_done(self, test: str, phase: str, round_no: int, tracking: dict, reached: bool,
                   gap_ms: float | None) -> None:
        values = ", ".join(f"{k}={_fmt(v, k)}" for k, v in tracking.items() if isinstance(v, (int, float)))
        if not values:
            values = ", ".join(f"{k}=[{', '.join(_fmt(x, k) for x in v)}]" for k, v in tracking.items()
                               if isinstance(v, list))
        gap = f", idle gap {gap_ms:.1f} ms" if gap_ms is not None else ""
        state = "steady state reached" if reached else "not steady yet"
        self._status = values
        self._print(f"   {test}{' ' + phase if phase else ''} round {round_no}: {values}{gap} — {state}")

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
