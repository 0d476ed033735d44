"""One typed result of a run, read from the store: what every exporter (text, JSON, CSV, HTML) formats."""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING, Any

from ..clock import Clock
from ..hostinfo import HostRecord
from ..metrics import unit_of
from ..pts.registry import find, settings_for
from ..pts.spec import TestSpec
from ..runoptions import RunOptions
from ..settings import RunSettings
from ..store import DeviceIdleSummary, Store, device_idle_summary
from ..store.idle import CELL_KINDS, JUDGED_KINDS
from ..targets.record import TargetRecord
from .coverage import cell_coverages
from .stimulus import StimulusSummary, summarise

if TYPE_CHECKING:
    from ..health.record import HealthSnapshot


@dataclass
class RoundInfo:
    phase: str
    kind: str                       # precondition | round | resume (a round re-run unmeasured after a resume)
    round: int
    started: float
    ended: float
    idle_gap_before_ms: float | None      # gate-side figure (engine), a lower bound of the device's idle
    device_idle_before_ms: float | None   # the device's own idle (block layer); None: not measured
    device_idle_inside_ms: list[float | None]   # between this round's cells, the same way
    tracking: dict[str, float]
    engine: str
    command: list[str]
    # the stored unit of each tracking value whose label names a cell metric (IOPS, B/s, ns); other labels are
    # a test's own figures, their unit in their name (end_s, written_bytes) or in the test's docs
    tracking_units: dict[str, str] = field(default_factory=dict)


@dataclass
class StepInfo:
    key: str
    kind: str
    at: float
    data: dict | HealthSnapshot     # a health snapshot typed, as the store decodes it


@dataclass
class TestResult:
    name: str
    title: str
    status: str
    started: float | None
    ended: float | None
    spec: TestSpec | None           # None: a test this ssdpts does not know (stored by another version)
    summary: Any                    # the spec's typed summary, None until the test completes
    rounds: list[RoundInfo] = field(default_factory=list)
    steps: list[StepInfo] = field(default_factory=list)
    device_idle: DeviceIdleSummary | None = None   # distribution of the device idle at the test's transitions
    stimulus: StimulusSummary | None = None        # each cell's I/O as the device saw it (runresult/stimulus.py)
    coverage: list = field(default_factory=list)   # runresult/coverage.py CellCoverage: cells' LBA coverage
    # the stored rounds of CELL_KINDS with their cells, read once: the per-cell records and rules use them
    cell_rounds: list = field(default_factory=list)


@dataclass
class RunResult:
    id: str
    status: str
    message: str
    created: float
    updated: float
    target_spec: str
    profile_name: str
    tests_requested: list[str]
    options: RunOptions
    engine: str
    host: HostRecord
    target: TargetRecord
    profile: dict               # the merged profile as stored: exported as data, never read for a setting
    tests: list[TestResult] = field(default_factory=list)

    @property
    def clock(self) -> Clock:
        """Whose clock the run's durations and rates are on, and what did its I/O (clock.py)."""
        return Clock.of_engine(self.engine)

    @cached_property
    def settings(self) -> RunSettings:
        """The run's typed settings, decoded once from the profile it stored (on first use: a stored run whose
        settings no stage reads is shown without them)."""
        names = list(dict.fromkeys([*self.tests_requested, *(t.name for t in self.tests)]))
        return settings_for(self.profile, names)

    def test(self, name: str) -> TestResult | None:
        return next((t for t in self.tests if t.name == name), None)


def load_run(store: Store, run_id: str) -> RunResult:
    run = store.run(run_id)
    result = RunResult(id=run["id"], status=run["status"], message=run["message"], created=run["created"],
                       updated=run["updated"], target_spec=run["target_spec"], profile_name=run["profile_name"],
                       tests_requested=run["tests"], options=run["options"], engine=run["engine"], host=run["host"],
                       target=run["target"], profile=run["profile"])
    for t in store.tests(run["id"]):
        spec = find(t["name"])
        records = [r for kind in JUDGED_KINDS for r in store.rounds(run["id"], t["name"], kind=kind, with_cells=False)]
        rounds = [RoundInfo(r.phase, r.kind, r.round, r.started, r.ended, r.gap_before_ms,
                            r.device_idle_before.ms if r.device_idle_before else None,
                            [d.ms for d in r.device_idle_inside], r.tracking, r.engine, r.command,
                            {label: unit_of(label).stored for label in r.tracking if unit_of(label).stored})
                  for r in records]
        steps = [StepInfo(s["key"], s["kind"], s["at"], s["data"]) for s in store.steps(run["id"], t["name"])]
        cell_rounds = [r for kind in CELL_KINDS for r in store.rounds(run["id"], t["name"], kind=kind)]
        result.tests.append(TestResult(
            name=t["name"], title=spec.title if spec else t["name"], status=t["status"], started=t["started"],
            ended=t["ended"], spec=spec, summary=spec.decode(t["summary"]) if spec else None, rounds=rounds,
            steps=steps, device_idle=device_idle_summary(records, store.round_workloads),
            coverage=cell_coverages(cell_rounds), stimulus=summarise(cell_rounds), cell_rounds=cell_rounds))
    return result
