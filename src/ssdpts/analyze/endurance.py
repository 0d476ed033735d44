"""`ssdpts analyze endurance SNAPSHOT.json ...`: wear / WAF projection from saved health snapshots.

Input files: `smartctl -j -a DEV` output (timestamp from its `local_time`), `nvme smart-log DEV -o json`
output (timestamp from the file's modification time), or ssdpts health records. Nothing is run on a
device. The maths is `ssdpts.health.projection`, the same as the endurance test's.
"""

from __future__ import annotations

import os
from pathlib import Path

from ..inputs import read_json


def load_snapshots(paths) -> list[dict]:
    from ..health.parse import parse_document

    recs = []
    for p in paths:
        path = Path(p)
        doc = read_json(path, "health snapshot", hint="save snapshots with 'smartctl -j -a DEV' or "
                                                      "'nvme smart-log DEV -o json'")
        rec = parse_document(doc, mtime=os.path.getmtime(path), name=str(p))
        rec["t"] = rec.get("timestamp")
        recs.append(rec)
    return sorted(recs, key=lambda r: (r.get("t") or 0))
