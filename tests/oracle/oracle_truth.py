"""Helpers of tests/oracle: read the simulated drive's truth next to what ssdpts stored about it.

The truth comes from the simulator's own state (its counters after every job, carried in each round's raw
output, and the drive's last checkpoint), never from the figures ssdpts computed.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from ssdpts._sim import SimDrive
from ssdpts.simdrive.truth import DriveTruth, truth
from ssdpts.store import Store
from ssdpts.targets.sim import state_files

HERE = Path(__file__).resolve().parent
PROFILES = HERE.parent / "profiles"
ORACLE_PROFILE = PROFILES / "sim-oracle.toml"
SMALL_SIM = f"sim:{PROFILES / 'sim-small.toml'}"
# the pool may move by this many superblocks between the rounds of a steady state: foreground GC holds it at
# its threshold, within a block or two (greedy GC frees a block, then writes eat it)
POOL_BAND_BLOCKS = 2


def final_drive(results: Path, run_id: str) -> DriveTruth:
    """The drive's truth at the run's last checkpoint (its end: a checkpoint is forced after every phase)."""
    return truth(SimDrive.restore(state_files(results, run_id)[-1].read_bytes()))


def pool_after_round(store: Store, round_id: int) -> int:
    """Free native superblocks when the round's last job ended (the simulator's counter in its raw output)."""
    raw = json.loads(store.raw_output(round_id) or "{}")
    jobs = [j for j in raw.get("jobs", [raw]) if "sim" in j]
    return int(jobs[-1]["sim"]["free_native_blocks"])


@dataclass(frozen=True)
class SteadyClaim:
    """A steady state ssdpts declared: the tracker, its window's rounds and the free pool after each."""

    test: str
    phase: str
    tracker: str
    window_rounds: list[int]
    pool: list[int]

    def pool_stable(self) -> bool:
        return max(self.pool) - min(self.pool) <= POOL_BAND_BLOCKS


def steady_claims(store: Store, run_id: str) -> list[SteadyClaim]:
    """Every tracker's first declared steady state in the run, with the free pool the simulator had."""
    claims, seen = [], set()
    for t in store.tests(run_id):
        rounds = store.rounds(run_id, t["name"], with_cells=False)
        by_round = {(r.phase, r.kind, r.round): r for r in rounds}
        for r in rounds:
            for tracker, st in (r.steady or {}).items():
                if not (isinstance(st, dict) and st.get("reached")) or (t["name"], r.phase, tracker) in seen:
                    continue
                seen.add((t["name"], r.phase, tracker))
                window = list(st["window_rounds"])
                pool = [pool_after_round(store, by_round[(r.phase, r.kind, n)].id) for n in window]
                claims.append(SteadyClaim(t["name"], r.phase, tracker, window, pool))
    return claims
