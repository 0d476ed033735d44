"""The results database: SQLite in WAL mode; every round is committed atomically when it ends."""

from .db import Store, RoundRecord, default_results_dir
from .idle import DeviceIdleSummary, device_idle_summary

__all__ = ["Store", "RoundRecord", "default_results_dir", "DeviceIdleSummary", "device_idle_summary"]
