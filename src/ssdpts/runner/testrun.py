"""One test on a target: its context, the health snapshots around it, its temperature trace."""

from __future__ import annotations

from .. import sampling
from ..deviations import Deviation
from ..engines.interface import Engine
from ..health import snapshot
from ..health.record import RECORD_KIND, HealthSnapshot
from ..progress import Progress
from ..pts import registry
from ..pts.context import TestContext
from ..settings import RunSettings
from ..store import Store
from ..targets import Target


def run_test(store: Store, run_id: str, name: str, target: Target, engine: Engine, settings: RunSettings, progress: Progress,
              purge_method: str, scope: str = "") -> dict:
    """One test on `target`, its health snapshots around it; its encoded summary."""
    spec = registry.get(name)
    ctx = TestContext(run_id=run_id, test=name, store=store, target=target, engine=engine,
                      settings=settings.of(name), progress=progress, purge_method=purge_method,
                      scope=scope, decode_summary=registry.decode_stored)
    _health(store, run_id, name, "before", target, progress)
    with sampling.temperature_trace(target, ctx.settings.temperature_interval) as temperatures:
        summary = spec.encode(spec.run(ctx))
    sampling.record(store, run_id, name, temperatures)
    _health(store, run_id, name, "after", target, progress)
    return summary


def _health(store: Store, run_id: str, test: str, when: str, target: Target, progress: Progress) -> None:
    """SMART / NVMe / simulator health snapshot around every test (kept once per test and moment)."""
    key = f"health:{when}"
    if store.step(run_id, test, key) is not None:
        return
    try:
        data = snapshot(target)
    except Exception as e:  # health data is informative: never fail a run for it
        data = {"available": False, "reason": f"{type(e).__name__}: {e}",
                "failures": [f"health snapshot failed: {type(e).__name__}: {e}"]}
    record = HealthSnapshot.from_dict(data)
    store.record_step(run_id, test, key, RECORD_KIND, record)
    progress.health(test, record)
    for failure in record.failures:   # recorded as failures with the tool's message, never dropped
        store.record_deviation(run_id, test, Deviation("health-failure", f"{when} the test: {failure}",
                                                       "smartctl(8) RETURN VALUES; NVMe SMART/health log"))
