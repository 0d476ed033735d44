"""The results database: SQLite in WAL mode; every round is committed atomically when it ends."""

from .db import RUN_STATUSES, Store, RoundRecord, RunFilter, default_results_dir
from .idle import DeviceIdleSummary, device_idle_summary

__all__ = ["RUN_STATUSES", "Store", "RoundRecord", "RunFilter", "default_results_dir", "DeviceIdleSummary",
           "device_idle_summary"]
