"""The profile keys of `hir`: declared apart from how it runs, so that validating a profile
(plan, check, show) imports no round loop."""

from __future__ import annotations

from dataclasses import dataclass

from ...settings import BLOCK_SIZE, BOOL, DURATION, DURATIONS, MULTIPLE, POS_INT, Setting, TestSettings, key


MULTIPLE_OR_NONE = Setting(f"0 (none) or {MULTIPLE.what}", lambda v: (v == 0 and not isinstance(v, bool))
                           or MULTIPLE.check(v), float, MULTIPLE.unit)


@dataclass(frozen=True)
class HirSettings(TestSettings):
    precondition_time: float = key(DURATION, "30m", "one preconditioning round of RND 4K writes (cut into cells)")
    burst: float = key(DURATION, "5s", "one write burst")
    wait_states: tuple[float, ...] = key(DURATIONS, ["5s", "10s", "15s", "25s", "50s"], "idle times between bursts")
    repetitions: int = key(POS_INT, 360, "bursts per wait state and per segment")
    fixed_preconditioning: bool = key(BOOL, False, "one round of precondition_time (the reviews' 120/360/600 min) "
                                                   "instead of rounds to steady state: non-conformant")
    wipc_multiple: float = key(MULTIPLE_OR_NONE, 0.0, "SEQ writes of this many times the capacity before the "
                                                      "preconditioning (seed 004: 2); 0: none, as PTS runs HIR")
    wipc_block_size: int = key(BLOCK_SIZE, "128k", "block size of the WIPC writes (wipc_multiple > 0)")
