"""The profile keys of `rwsw`: declared apart from how it runs, so that validating a profile
(plan, check, show) imports no round loop."""

from __future__ import annotations

from dataclasses import dataclass

from ...settings import PCT, POSITIVE, BOOL, Setting, integer, key
from ..demand_settings import DemandSettings


MAX_STREAMS = 64


@dataclass(frozen=True)
class RwswSettings(DemandSettings):
    workload: str = key(Setting("a workload file (ssdpts capture --out) or a shipped workload's name",
                                lambda v: isinstance(v, str)), "",
                        "the captured workload: a *.workload.json path, or a name under ssdpts/workloads/")
    top: int = key(integer(1, MAX_STREAMS, "IO streams"), 8, "IO streams applied: the capture's N with most I/Os")
    coverage: int = key(PCT, 0, "fewer streams when these many % of the capture's I/Os are covered (0: `top`)")
    replay: bool = key(BOOL, True, "replay every captured time step after the sweep")
    replay_time_scale: float = key(POSITIVE, 1.0, "each replayed step runs its captured length times this")
    allow_lossy_capture: bool = key(BOOL, False, "apply a capture that lost trace events (its counts are low)")
    replay_trace: bool = key(BOOL, False, "replay the capture's kept trace (capture --keep-trace) I/O for I/O with "
                             "fio read_iolog instead of modelling each step (needs replay = true)")
