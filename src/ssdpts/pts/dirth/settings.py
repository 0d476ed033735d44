"""The profile keys of `dirth`: declared apart from how it runs, so that validating a profile
(plan, check, show) imports no round loop."""

from __future__ import annotations

from dataclasses import dataclass

from ...settings import BLOCK_SIZE, key
from ..demand_settings import SweepSettings


@dataclass(frozen=True)
class DirthSettings(SweepSettings):
    block_size: int = key(BLOCK_SIZE, "8k", "block size of the sweep's random I/O")
