"""Run-time sampling around a test: the drive's temperature every `temperature_interval` seconds.

The runner wraps every test in `temperature_trace(target, interval_s)` and stores what it gives as the
test's step "temperature" (`TemperatureTrace.to_dict` per drive); `traces(store, run, test)` decodes them.
Where a drive's temperature cannot be read the trace says why (`note`) and holds no samples.
Sources, cheapest first: the kernel's hwmon sensor of the drive (nvme driver, drivetemp for SATA; m°C),
else the health snapshot (smartctl / nvme-cli, °C). See docs/bench.md.
"""

from __future__ import annotations

import threading
import time
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Callable

from .health import snapshot
from .targets.sysfs import SysRoots, block_dir, nvme_controller, whole_disk, device_name

STEP = "temperature"


@dataclass
class TemperatureTrace:
    """One drive's composite temperature during one test: (seconds since the test started, °C) pairs."""

    drive: str
    interval_s: float
    source: str = ""                 # where the values came from; "" when none could be read
    note: str = ""                   # why there are no samples
    started: float = 0.0             # epoch seconds of the first sample
    seconds: list[float] = field(default_factory=list)
    celsius: list[float] = field(default_factory=list)

    @property
    def max_c(self) -> float | None:
        return max(self.celsius) if self.celsius else None

    def to_dict(self) -> dict:
        return asdict(self)


def _hwmon_file(target, roots: SysRoots) -> Path | None:
    """temp1_input of the drive's hwmon device (NVMe: under the controller; SATA with drivetemp: the disk)."""
    name = whole_disk(device_name(target.path, roots), roots)
    places = [block_dir(name, roots) / "device"]
    ctrl = nvme_controller(name, roots)
    if ctrl:
        places.insert(0, roots.sys / "class" / "nvme" / ctrl)
    for p in places:
        found = sorted(p.glob("hwmon*/temp1_input")) + sorted(p.glob("hwmon/hwmon*/temp1_input"))
        if found:
            return found[0]
    return None


def reader(target, roots: SysRoots | None = None) -> tuple[Callable[[], float | None] | None, str, str]:
    """(read °C, source, why not): how this drive's temperature is read, tried once up front."""
    if target.kind == "block" and target.host is None:
        f = _hwmon_file(target, roots or SysRoots())
        if f is not None:
            def from_hwmon() -> float | None:
                try:
                    return int(f.read_text()) / 1000
                except (OSError, ValueError):
                    return None
            if from_hwmon() is not None:
                return from_hwmon, f"kernel hwmon ({f})", ""
    first = snapshot(target)
    if first.get("temperature_c") is None:
        why = (first.get("missing") or {}).get("temperature_c") or first.get("reason") or "not reported"
        return None, "", f"temperature not available: {why}"
    return (lambda: snapshot(target).get("temperature_c")), f"health snapshot ({first.get('source')})", ""


class _Sampler(threading.Thread):
    def __init__(self, trace: TemperatureTrace, read: Callable[[], float | None]):
        super().__init__(daemon=True, name=f"temperature {trace.drive}")
        self.trace, self.read, self.stop = trace, read, threading.Event()

    def sample(self) -> None:
        try:
            v = self.read()
        except Exception:        # a failed read is a gap in the trace, never a failed test
            v = None
        if v is not None:
            now = time.time()
            self.trace.started = self.trace.started or now
            self.trace.seconds.append(round(now - self.trace.started, 3))
            self.trace.celsius.append(float(v))

    def run(self) -> None:
        self.sample()
        while not self.stop.wait(self.trace.interval_s):
            self.sample()


@contextmanager
def temperature_trace(target, interval_s: float):
    """Sample every drive of `target` while the block runs; yields the list of traces (complete on exit,
    with a last sample at the end)."""
    traces, samplers = [], []
    for drive in target.drives():
        read, source, why = reader(drive)
        trace = TemperatureTrace(drive=drive.label_id, interval_s=interval_s, source=source, note=why)
        traces.append(trace)
        if read is not None:
            samplers.append(_Sampler(trace, read))
    for s in samplers:
        s.start()
    try:
        yield traces
    finally:
        for s in samplers:
            s.stop.set()
            s.join()
            s.sample()


def traces(store, run_id: str, test: str) -> list[TemperatureTrace]:
    """The stored traces of a test (empty: none recorded, e.g. a run older than this recording)."""
    data = store.step(run_id, test, STEP) or {}
    return [TemperatureTrace(**t) for t in data.get("drives") or []]


def record(store, run_id: str, test: str, got: list[TemperatureTrace]) -> None:
    store.record_step(run_id, test, STEP, STEP, {"drives": [t.to_dict() for t in got]})
