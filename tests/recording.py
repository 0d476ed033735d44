"""A recording engine for procedure tests: every submitted cell in order, with instant flat results.

Real profiles run for hours (PTS-E IOPS up to ~24 h), so their *procedure* (cell order, TC/QD, durations,
pre-writes) is checked by recording what a test submits; the results are flat, so every steady-state
loop ends at its fifth round. Measurements themselves are tested on real fio elsewhere.
"""

from __future__ import annotations

from contextlib import contextmanager
from dataclasses import dataclass, field

from ssdpts.capabilities import Capability
from ssdpts.engines.results import CellResult, DirStats, Interval, RoundOutput
from typing import Any

from ssdpts.profiles import load_profile
from ssdpts.pts import registry
from ssdpts.pts.context import TestContext
from ssdpts.store import Store
from ssdpts.targets import Target


@dataclass
class Submitted:
    tag: str
    cells: list
    interval_s: float | None = None


def _flat(w) -> CellResult:
    secs = w.runtime_s or 1.0
    reads = w.reads / 100

    def d(share: float) -> DirStats:
        ios = int(1000 * secs * share)
        return DirStats(ios=ios, bytes=ios * w.bs, iops=ios / secs, bw_bytes=ios * w.bs / secs,
                        lat_mean_ns=100_000.0, lat_max_ns=900_000.0, bins={100_000: max(ios, 1)})

    return CellResult(name=w.name, read=d(reads), write=d(1 - reads), runtime_ms=secs * 1000)


class _Round:
    def __init__(self, cells, interval_s):
        self.cells, self.interval_s = list(cells), interval_s

    def result(self) -> RoundOutput:
        return RoundOutput(cells=[_flat(w) for w in self.cells], engine="recording", job_text="", gap_before_ms=0.0)

    def cancel(self) -> None:
        pass

    def intervals(self):
        for i, w in enumerate(self.cells):
            n = max(1, int((w.runtime_s or self.interval_s) / self.interval_s))
            for k in range(n):
                yield Interval(i, w.name, k + 1, k * self.interval_s * 1000, self.interval_s * 1000,
                               _flat(w.with_(runtime_s=self.interval_s)), {})

    def interval_output(self, iv) -> RoundOutput:
        return RoundOutput(cells=[iv.result], engine="recording", gap_before_ms=0.0)


class RecordingEngine:
    """An engine as engines/interface.py declares it (tests/test_engine_interface.py checks it), whose sessions
    record what they are given."""
    name = "recording"
    version = "recording"
    binary = None
    capabilities = frozenset(Capability)
    keep_dir = None
    last_io_at = None
    trace_stimulus = False
    io = None

    def __init__(self):
        self.submitted: list[Submitted] = []
        self.failed: dict[str, str] = {}

    def purge(self, drive, method: str) -> None:
        return None         # the fake drive purges itself (targets/purge.py)

    @contextmanager
    def session(self, target):
        yield self

    def submit(self, cells, tag: str = "", interval_s: float | None = None, on_progress=None) -> _Round:
        self.submitted.append(Submitted(tag, list(cells), interval_s))
        return _Round(cells, interval_s)


class _Quiet:
    def __getattr__(self, name):
        return lambda *a, **k: None


class _FakeDrive:
    def purge(self) -> None:
        pass


def fake_target(size: int = 64 * 2**30, logical: int = 512, physical: int = 4096) -> Target:
    t = Target(kind="sim", spec="fake", path="fake", size_bytes=size, logical_block_size=logical,
               physical_block_size=physical)
    t.drive = _FakeDrive()
    return t


@dataclass
class Recorded:
    summary: Any                 # the test's typed summary
    engine: RecordingEngine
    store: Store
    ctx: TestContext
    rounds_by_tag: dict = field(default_factory=dict)


def record(tmp_path, profile: str, test: str, target: Target | None = None, **overrides) -> Recorded:
    """Run `test` of `profile` against the recording engine; what it submitted, in order."""
    prof = load_profile(profile)
    spec = registry.get(test)
    for k, v in overrides.items():   # a test's own key in [tests.TEST], a run-wide one (seed) in [defaults]
        table = prof.setdefault("tests", {}).setdefault(test, {}) if k in spec.all_settings else prof.setdefault("defaults", {})
        table[k] = v
    settings = registry.settings_for(prof, [spec.name]).of(spec.name)
    store = Store.in_dir(tmp_path)
    target = target or fake_target()
    rid = store.create_run(target_spec="fake", target=target.to_dict(), host={}, profile_name=profile,
                           profile=prof, tests=[test], options={}, engine="recording")
    engine = RecordingEngine()
    ctx = TestContext(run_id=rid, test=test, store=store, target=target, engine=engine, settings=settings,
                      progress=_Quiet(), purge_method="auto")
    summary = registry.get(test).run(ctx)
    return Recorded(summary, engine, store, ctx)
