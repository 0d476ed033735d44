"""The run's log file under the results directory."""

from __future__ import annotations

import logging
import sys
from pathlib import Path

from .files import log_path

log = logging.getLogger("ssdpts")


class _RunLog(logging.FileHandler):
    """The run's log file. A write its file system refuses (full, read-only) is dropped without Python's
    traceback on the console: the run stops at its next database write, with the reason in one line."""

    def handleError(self, record):
        if not isinstance(sys.exc_info()[1], OSError):
            super().handleError(record)

    def close(self):
        try:
            super().close()
        except OSError:
            pass


def setup_log(results_dir: Path, run_id: str) -> logging.Handler:
    (results_dir / "logs").mkdir(parents=True, exist_ok=True)
    handler = _RunLog(log_path(results_dir, run_id))
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(message)s"))
    log.addHandler(handler)
    log.setLevel(logging.INFO)
    return handler
