#!/usr/bin/env python3
"""Simulator speed: simulated host I/Os per wall-clock second.

    python bench/sim.py [--scale 1.0] [--preset client]

Cases (4 KiB, numjobs 4 x iodepth 32):
  fresh randwrite   purged drive, writes land in SLC / free blocks (no GC)
  steady randwrite  full drive in steady state, greedy GC at WA ~7.8
                    (7 % OP, SLC cache disabled so WA is the textbook value)
  randread          full drive, mapped data
"""
from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time

from ssdpts._sim import SimDrive
from ssdpts.simdrive import load_params

TARGETS = {"fresh randwrite": 10e6, "steady randwrite": 5e6, "randread": 10e6}


def timed(d: SimDrive, job: dict) -> tuple[float, dict]:
    t = time.perf_counter()
    r = d.run_job(job)
    el = time.perf_counter() - t
    ios = r["read"]["total_ios"] + r["write"]["total_ios"]
    return ios / el, r


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--scale", type=float, default=1.0, help="preset scale (1.0 = 16 GiB client)")
    ap.add_argument("--preset", default="client")
    ap.add_argument("--repeat", type=int, default=3, help="best of N measurements")
    a = ap.parse_args()
    job = dict(bs=4096, iodepth=32, numjobs=4)
    rows = []

    # fresh random write
    best = 0.0
    for _ in range(a.repeat):
        d = SimDrive(load_params(a.preset, scale=a.scale))
        rate, r = timed(d, dict(job, rw="randwrite", io_size=d.capacity_bytes // 32))
        best = max(best, rate)
    rows.append(("fresh randwrite", best, f"{r['write']['iops']:,.0f} sim IOPS, WAF {r['sim']['waf']:.2f}"))

    # steady state random write (SLC off -> WA ~7.8 at 7 % OP)
    d = SimDrive(load_params(a.preset, scale=a.scale,
                             overrides={"slc_cache.static_mib": 0, "slc_cache.dynamic_max_mib": 0}))
    cap = d.capacity_bytes
    d.run_job(dict(rw="write", bs=131072, iodepth=8, io_size=cap))
    d.run_job(dict(job, rw="randwrite", io_size=cap // 2))
    best = 0.0
    for i in range(a.repeat):
        c0 = d.counters()
        rate, r = timed(d, dict(job, rw="randwrite", io_size=cap // 16, seed=100 + i))
        c1 = d.counters()
        wa = (c1["nand_write_bytes"] - c0["nand_write_bytes"]) / (c1["host_write_bytes"] - c0["host_write_bytes"])
        best = max(best, rate)
    rows.append(("steady randwrite", best, f"{r['write']['iops']:,.0f} sim IOPS, WA {wa:.2f}"))

    # random read of mapped data
    best = 0.0
    for i in range(a.repeat):
        rate, r = timed(d, dict(job, rw="randread", io_size=cap // 16, seed=200 + i))
        best = max(best, rate)
    rows.append(("randread", best, f"{r['read']['iops']:,.0f} sim IOPS"))

    print(f"ssdpts simulator speed — preset {a.preset}, scale {a.scale} "
          f"({d.capacity_bytes / 2**30:.1f} GiB), 4 KiB, 4 jobs x QD32, best of {a.repeat}")
    print(f"{'case':18} {'sim IO/s (wall)':>16} {'target':>10}  {'ok':3} detail")
    for name, rate, detail in rows:
        tgt = TARGETS[name]
        print(f"{name:18} {rate / 1e6:13.2f} M/s {tgt / 1e6:7.1f} M/s  {'yes' if rate >= tgt else 'NO ':3} {detail}")

    # the wall time of `make demo`'s suite: `ssdpts run` with no target (quick profile on sim:client,
    # every test and study, report included)
    with tempfile.TemporaryDirectory() as tmp:
        t = time.perf_counter()
        subprocess.run([sys.executable, "-m", "ssdpts", "run", "--results", tmp, "-q"], check=True,
                       capture_output=True)
        demo = time.perf_counter() - t
    print(f"make demo suite (ssdpts run: quick profile, all tests, sim:client, report): {demo:.1f} s wall "
          "(target: well under a minute)")


if __name__ == "__main__":
    main()
