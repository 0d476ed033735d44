"""The tests: one module per test, each with NAME, TITLE, run(ctx) -> summary dict.

Add a test by writing its module and listing it here; the runner, store and report find it by name.
"""

from __future__ import annotations

from types import ModuleType

from . import cbw, dirth, hir, iops, latency, throughput, wsat, xsr
from . import bs_sweep, fresh_peak, op_study, rw_over_time, slc_cache, variants
from . import endurance

TESTS: dict[str, ModuleType] = {m.NAME: m for m in (iops, throughput, latency, wsat, hir, xsr, dirth, cbw,
                                                   slc_cache, bs_sweep, rw_over_time, op_study, variants, fresh_peak,
                                                   endurance)}
DEFAULT_TESTS = ["iops", "throughput", "latency"]


def get(name: str) -> ModuleType:
    from ..errors import SsdptsError

    if name not in TESTS:
        raise SsdptsError(f"unknown test {name!r}; available: {', '.join(TESTS)}")
    return TESTS[name]
