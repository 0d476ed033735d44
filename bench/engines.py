#!/usr/bin/env python3
"""bench/engines: is ssdpts ever the limit? Per fio I/O engine, a cell through ssdpts against raw fio, on zram.

On a zram device of its own (CPU-bound: every I/O is the CPU's work, the worst case for the harness), per engine
(libaio, io_uring), in alternated pairs:
1. a 4 KiB random-read cell through ssdpts (its job file, gates and device-idle sampler: one FioSession round)
   against raw fio running the same job text without gates: IOPS as fio counted them, and IOPS per CPU second
   (ssdpts: its own process and every child it waited for — fio, the gatekeeper, the sampler; raw: fio).
   Target: median harness/raw IOPS >= 0.97.
2. the device-idle sampler's cost: IOPS of 4 chained cells with and without it (overhead.sampler_pair).
   Target: it costs at most 3 % (median on/off >= 0.97).
Medians over the pairs. Exits 1 when a target is missed or an engine cannot run here (the line says why).
Needs root, fio and the zram module; nothing is compiled or downloaded.

    nice -n -5 .venv/bin/python bench/engines.py [--threads 2] [--iodepth 16] [--pairs 5] [--seconds 3]
    nice -n -5 .venv/bin/python bench/engines.py --threads 16 --iodepth 32      # a 16-core lab host
"""

from __future__ import annotations

import argparse
import json
import resource
import statistics
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

from overhead import chained, raw_job, random_reads, sampler_pair
from zram import fill, fresh_zram, loop_device

from ssdpts.engines.fio import FioEngine
from ssdpts.engines.fiojson import parse_output
from ssdpts.engines.ioengine import choose
from ssdpts.errors import SsdptsError
from ssdpts.targets import open_target
from ssdpts.workload.ioengine import IoRequest

HARNESS_RAW_MIN = 0.97
SAMPLER_COST_MAX = 0.03
ENGINES = ("libaio", "io_uring")


def cpu_s(who: int) -> float:
    r = resource.getrusage(who)
    return r.ru_utime + r.ru_stime


def all_cpu_s() -> float:
    """CPU seconds of this process and of every child it has waited for."""
    return cpu_s(resource.RUSAGE_SELF) + cpu_s(resource.RUSAGE_CHILDREN)


@dataclass(frozen=True)
class Measure:
    iops: float
    ios_per_cpu_s: float


def through_ssdpts(target, cell, io: IoRequest) -> Measure:
    engine = FioEngine(io_request=io)     # its `fio --version` is not the round's cost
    c0 = all_cpu_s()
    with engine.session(target) as session:
        out = session.submit([cell]).result()
    cpu = all_cpu_s() - c0
    c = out.cells[0]
    return Measure(c.iops, (c.read.ios + c.write.ios) / cpu)


def raw_fio(binary: str, job: Path) -> Measure:
    c0 = cpu_s(resource.RUSAGE_CHILDREN)
    p = subprocess.run([binary, "--output-format=json", str(job)], capture_output=True, text=True, check=True)
    cpu = cpu_s(resource.RUSAGE_CHILDREN) - c0
    c = parse_output(p.stdout)[1][0]
    return Measure(c.iops, (c.read.ios + c.write.ios) / cpu)


@dataclass(frozen=True)
class EngineResult:
    engine: str
    harness_iops: float
    raw_iops: float
    harness_raw: float              # median of the pairs' ratios
    harness_ios_per_cpu_s: float
    raw_ios_per_cpu_s: float
    sampler_cost: float             # 1 - median(IOPS with sampler / without)
    sampler_cpu_s: float            # per round of 4 cells

    def missed(self) -> list[str]:
        return [what for what, bad in ((f"{self.engine} harness/raw", self.harness_raw < HARNESS_RAW_MIN),
                                       (f"{self.engine} sampler", self.sampler_cost > SAMPLER_COST_MAX)) if bad]

    def row(self) -> str:
        return (f"| {self.engine} | {self.harness_iops:,.0f} | {self.raw_iops:,.0f} | {self.harness_raw:.3f} | "
                f"{self.harness_ios_per_cpu_s:,.0f} | {self.raw_ios_per_cpu_s:,.0f} | "
                f"{self.sampler_cost * 100:.1f} % |")


def measure(engine: str, target, tmp: Path, args) -> EngineResult:
    io = IoRequest(engine)
    probe = FioEngine()
    binary = probe.binary
    choice = choose(io, [target], binary, probe.version)     # refuses an engine this bench lacks
    cell = random_reads("rnd_4K_100-0", args.seconds, args.threads, args.iodepth)
    job = tmp / f"raw-{engine}.fio"
    job.write_text(raw_job(target, [cell], choice))
    cells = chained(args.seconds, args.threads, args.iodepth)
    harness, raw, sampler_on_off, sampler_cpu = [], [], [], []
    for i in range(args.pairs):
        for through in (True, False) if i % 2 == 0 else (False, True):
            (harness if through else raw).append(through_ssdpts(target, cell, io) if through else raw_fio(binary, job))
        by_sampler, cpu = sampler_pair(target, cells, i, io)
        sampler_on_off.append(by_sampler[True] / by_sampler[False])
        sampler_cpu.append(cpu)
    med = statistics.median
    return EngineResult(engine, med(m.iops for m in harness), med(m.iops for m in raw),
                        med(h.iops / r.iops for h, r in zip(harness, raw)),
                        med(m.ios_per_cpu_s for m in harness), med(m.ios_per_cpu_s for m in raw),
                        1 - med(sampler_on_off), med(sampler_cpu))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--threads", type=int, default=2, help="fio numjobs (TC)")
    ap.add_argument("--iodepth", type=int, default=16, help="fio iodepth (QD)")
    ap.add_argument("--pairs", type=int, default=5)
    ap.add_argument("--seconds", type=float, default=3.0, help="a cell's length (a sampler round: 4 quarter cells)")
    ap.add_argument("--engines", default=",".join(ENGINES))
    ap.add_argument("--size", type=int, default=1 << 30, help="device bytes")
    ap.add_argument("--device", choices=("zram", "loop"), default="zram",
                    help="zram (CPU-bound, the worst case) or a direct-I/O loop device on /dev/shm (a kernel without zram)")
    args = ap.parse_args()
    device = fresh_zram if args.device == "zram" else loop_device
    results, missed = [], []
    with device(args.size) as dev, tempfile.TemporaryDirectory() as tmp:
        fill(dev)
        target = open_target(dev, probe=False)
        for engine in args.engines.split(","):
            try:
                results.append(measure(engine, target, Path(tmp), args))
            except SsdptsError as e:
                print(f"engines: {engine} not measured: {e}", file=sys.stderr)
                missed.append(f"{engine} not measured")
    print(json.dumps({"threads": args.threads, "iodepth": args.iodepth, "pairs": args.pairs, "seconds": args.seconds,
                      "results": [r.__dict__ for r in results]}, indent=2))
    print(f"\nTC{args.threads}/QD{args.iodepth}, 4 KiB random reads on {args.device}, {args.pairs} alternated pairs (medians)\n")
    print("| engine | IOPS ssdpts | IOPS raw fio | ssdpts / raw | I/Os per CPU s, ssdpts | I/Os per CPU s, raw | "
          "sampler cost |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    for r in results:
        print(r.row())
        missed += r.missed()
    print(f"\nengines: targets ssdpts/raw >= {HARNESS_RAW_MIN}, sampler cost <= {SAMPLER_COST_MAX * 100:g} %: "
          + (f"MISSED: {', '.join(missed)}" if missed else "all met"))
    return 1 if missed else 0


if __name__ == "__main__":
    sys.exit(main())
