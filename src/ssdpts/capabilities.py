"""What a test needs from the engine and the target, declared as flags (as fio's ioengine_ops flags).

Engines and targets declare what they offer (`capabilities`), tests declare what they need
(`TestSpec.needs`); the runner refuses an unsupported combination up front with one line.
"""

from __future__ import annotations

from enum import Enum


class Capability(str, Enum):
    GATED_CHAINING = "gated chaining (no device idle between rounds and cells)"
    TIMED_IDLE = "timed idle between cells (host idle periods)"
    STREAMING = "one continuous job cut into rounds (streaming)"
    BANDWIDTH_LOG = "per-interval bandwidth logs"
    STREAMED_LOG = "per-interval logs inside each streamed round (a round's own finer rows)"
    HEALTH = "SMART / NVMe health readings"
    PURGE = "purge (return to fresh-out-of-box)"
    CHECKPOINT = "drive state saved with every committed round"
    LOCAL_BLOCK_LAYER = "block-layer counters on this machine"
    LOCAL_FILE_SYSTEM = "mkfs, mount and TRIM on this machine (a local device, or the file system under a local file)"
    # an engine's own: no test needs it; it says whether fio's I/O engine choice applies and cells run as written
    FIO_JOBS = "fio job files run as written (fio's I/O engine, each job, rate limits, iolog replay, LBA distributions)"


def missing(needs: frozenset[Capability], offered: frozenset[Capability]) -> list[Capability]:
    return sorted(needs - offered, key=lambda c: c.name)
