"""Runs in the test-bed guest (tests/vm/test_vm_faults.py): several ssdpts runs at once, each on its own drives
with its own fault, injected once the runs it waits for have ROUNDS rounds stored; then what ssdpts stored and
printed for each, as one JSON line {name: outcome}.

    python fault_run.py RESULTS_ROOT ROUNDS FAULTS_JSON [LOG]

FAULTS_JSON: [{"name", "targets": [...], "inject": "SHELL", "wait_for": [names], "rounds": N}]; "rounds" (default
ROUNDS) 0 starts the injection with the run, for one that finds its own moment. An injection that prints
"injected at NS" (the guest's epoch ns) on stderr is judged by what fio did: its rounds_before counts the
measured rounds (not healthy/) whose stored end, when fio wrote its output (its `timestamp_ms`), is before NS; otherwise the rounds stored when the
injection started. Faults run together to save
guest time (under TCG a run's start-up alone is half a minute); runs that share one injection (a scsi_debug
module option acts on all its disks) wait for each other. show and check run in this process (click's test
runner, through the same `main` as the command line): a fresh interpreter costs that half minute again.
"""

import json
import os
import re
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

root, rounds, faults = Path(sys.argv[1]), int(sys.argv[2]), json.loads(sys.argv[3])
log_file = open(sys.argv[4], "a", buffering=1) if len(sys.argv) > 4 else sys.stderr   # LOG: progress, as it goes
profile = Path(__file__).with_name("faults.toml")
env = {**os.environ, "SSDPTS_REPORT": "0"}


def results(name: str) -> Path:
    return root / name


def start(fault: dict) -> subprocess.Popen:
    name = fault["name"]
    root.mkdir(parents=True, exist_ok=True)
    # files, not pipes: nobody reads a pipe while the runs go
    return subprocess.Popen(["ssdpts", "run", *fault["targets"], "--profile", str(profile), "--destroy-data",
                             "--purge", "none", "--ignore-doctor", "all", "-q", "--results", str(results(name))],
                            stdout=open(root / f"{name}.stdout", "w"), stderr=open(root / f"{name}.stderr", "w"),
                            env=env)


def stored_rounds(name: str) -> int:
    try:
        with sqlite3.connect(f"file:{results(name) / 'ssdpts.db'}?mode=ro", uri=True, timeout=5) as c:
            return c.execute("SELECT count(*) FROM rounds WHERE kind='round'").fetchone()[0]
    except sqlite3.Error:
        return 0


t0 = time.monotonic()


def log(what: str) -> None:
    print(f"{time.monotonic() - t0:6.1f} s: {what}", file=log_file)


runs = {f["name"]: start(f) for f in faults}
before: dict[str, int] = {}
injections: dict[str, subprocess.Popen | None] = {}
report_at = 0.0
while any(run.poll() is None for run in runs.values()):
    for f in faults:
        if f["name"] in injections:
            continue
        waited = f.get("wait_for") or [f["name"]]
        if any(runs[n].poll() is not None for n in waited):
            injections[f["name"]] = None          # a run ended before its fault: the test says so
            continue
        counts = {n: stored_rounds(n) for n in waited}
        if all(c >= f.get("rounds", rounds) for c in counts.values()):
            before[f["name"]] = counts[f["name"]]
            injections[f["name"]] = subprocess.Popen(["bash", "-c", f["inject"]], stdout=subprocess.PIPE,
                                                     stderr=subprocess.PIPE, text=True)
            log(f"injected {f['name']} after {counts} rounds: {f['inject']}")
    if time.monotonic() > report_at:
        report_at = time.monotonic() + 30
        log("rounds stored, exit status: " + ", ".join(f"{n} {stored_rounds(n)} {runs[n].poll()}" for n in runs)
            + "; " + " ".join(open("/proc/meminfo").read().split()[6:8]) + " kB")
    time.sleep(1)      # a round lasts a minute of guest time: polling faster takes CPU from the runs
ended = {}
for name, run in runs.items():
    ended[name] = (run.returncode, *((root / f"{name}.{s}").read_text() for s in ("stdout", "stderr")))
log("runs ended")
injected = {}
for name, p in injections.items():
    if p is not None:
        try:
            out, err = p.communicate(timeout=60)
            injected[name] = {"rc": p.returncode, "err": err}
        except subprocess.TimeoutExpired:       # it waited for I/O that never came: the test says so
            p.kill()
            injected[name] = {"rc": None, "err": "killed: still waiting 60 s after the runs ended"}

from click.testing import CliRunner  # noqa: E402  (after the runs: the guest's memory is theirs until then)

from ssdpts.cli import main  # noqa: E402


def ssdpts(name: str, *args: str) -> dict:
    r = CliRunner().invoke(main, [*args, "--results", str(results(name))], prog_name="ssdpts")
    if r.exception is not None and not isinstance(r.exception, SystemExit):
        raise r.exception
    return {"rc": r.exit_code, "out": r.stdout, "err": r.stderr}


def injected_at_ns(name: str) -> int | None:
    """When the injection says it injected (guest epoch ns), where it says so."""
    said = re.search(r"injected at (\d+)", (injected.get(name) or {}).get("err") or "")
    return int(said.group(1)) if said else None


outcomes = {}
for f in faults:
    name = f["name"]
    rc, out, err = ended[name]
    run_id = json.loads(ssdpts(name, "list", "--json")["out"])[-1]["id"]
    with sqlite3.connect(results(name) / "ssdpts.db") as c:
        cells = c.execute("SELECT r.phase, r.round, c.name, c.lat_max_ns FROM rounds r JOIN cells c "
                          "ON c.round_id = r.id WHERE r.kind='round' ORDER BY r.id").fetchall()
        # each round's transitions as the block layer showed them (device idle before it and inside it)
        idle = c.execute("SELECT phase, kind, round, started, ended, gap_before_ms, device_idle_json FROM rounds "
                         "ORDER BY id").fetchall()
    at_ns = injected_at_ns(name)
    if at_ns is not None:     # the measured rounds fio had completed before the fault (a round's stored end is fio's)
        before[name] = sum(1 for p, k, _, _, e, _, _ in idle
                           if k == "round" and not p.startswith("healthy/") and e * 1e9 < at_ns)
    outcomes[name] = {"targets": f["targets"], "rc": rc, "out": out, "err": err, "run_id": run_id, "rounds_before": before.get(name, 0),
                      "injected_at_ns": at_ns,
                      "injected": injected.get(name), "show": ssdpts(name, "show", run_id),
                      "check": ssdpts(name, "check", run_id),
                      "doc": json.loads(ssdpts(name, "show", run_id, "--json")["out"]), "cells": cells,
                      "rounds": [{"phase": p, "kind": k, "round": n, "started": s, "ended": e, "gap_before_ms": g,
                                  "device_idle": json.loads(d or "{}")} for p, k, n, s, e, g, d in idle]}
log("done")
print(json.dumps(outcomes))
