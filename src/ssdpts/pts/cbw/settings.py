"""The profile keys of `cbw`: declared apart from how it runs, so that validating a profile
(plan, check, show) imports no round loop."""

from __future__ import annotations

from dataclasses import dataclass

from ...settings import declared_default
from ..demand_settings import SweepSettings


@dataclass(frozen=True)
class CbwSettings(SweepSettings):
    read_pct: int = declared_default(SweepSettings, "read_pct", 40)
