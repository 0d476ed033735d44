"""Runs in the test-bed guest (tests/vm/test_vm_faults.py): an ssdpts run on TARGETS, a fault injected once
ROUNDS rounds are stored, then what ssdpts stored and printed, as one JSON line.

    python fault_run.py RESULTS ROUNDS 'INJECT SHELL' TARGET [TARGET...]
"""

import json
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

results, rounds, inject, targets = Path(sys.argv[1]), int(sys.argv[2]), sys.argv[3], sys.argv[4:]
profile = Path(__file__).with_name("faults.toml")
run = subprocess.Popen(["ssdpts", "run", *targets, "--profile", str(profile), "--destroy-data", "--purge", "none",
                        "--ignore-doctor", "all", "-q", "--results", str(results)],
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env={**__import__("os").environ,
                                                                                       "SSDPTS_REPORT": "0"})
db = results / "ssdpts.db"
stored = 0
while run.poll() is None and stored < rounds:
    time.sleep(0.3)
    try:
        with sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=5) as c:
            stored = c.execute("SELECT count(*) FROM rounds WHERE kind='round'").fetchone()[0]
    except sqlite3.Error:
        pass
injected = subprocess.run(["bash", "-c", inject], capture_output=True, text=True) if run.poll() is None else None
out, err = run.communicate(timeout=600)


def ssdpts(*args):
    p = subprocess.run(["ssdpts", *args, "--results", str(results)], capture_output=True, text=True)
    return {"rc": p.returncode, "out": p.stdout, "err": p.stderr}


run_id = json.loads(ssdpts("list", "--json")["out"])[-1]["id"]
with sqlite3.connect(db) as c:
    cells = c.execute("SELECT r.phase, r.round, c.name, c.lat_max_ns FROM rounds r JOIN cells c ON c.round_id = r.id "
                      "WHERE r.kind='round' ORDER BY r.id").fetchall()
print(json.dumps({"rc": run.returncode, "out": out, "err": err, "run_id": run_id, "rounds_before": stored,
                  "injected": injected and {"rc": injected.returncode, "err": injected.stderr},
                  "show": ssdpts("show", run_id), "check": ssdpts("check", run_id),
                  "doc": json.loads(ssdpts("show", run_id, "--json")["out"]),
                  "cells": cells}))
