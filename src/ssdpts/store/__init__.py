"""The results database: SQLite in WAL mode; every round is committed atomically when it ends."""

from .db import Store, RoundRecord, default_results_dir

__all__ = ["Store", "RoundRecord", "default_results_dir"]
