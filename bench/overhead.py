#!/usr/bin/env python3
"""bench/overhead: what ssdpts's fio engine costs, measured from outside on a zram device of its own.

1. Wall clock of a whole ssdpts round (submit -> fio -> parse -> committed in the database) against raw
   fio running the same workload from the same job text without gates (process start -> exit), in
   alternated pairs. Target: median ratio <= 1.10.
2. CPU time of the ssdpts process per round (getrusage of this process: engine threads, parsing,
   SQLite) and of its block-layer idle sampler (child process). Target: ssdpts process <= 10 % of a core
   over the round.
3. The sampler's cost to the drive: IOPS of the same round with and without device-idle sampling,
   alternated pairs, 4 KiB random reads (CPU-bound on zram: the worst case), as fio measured them. The
   round is 4 chained cells (3 transitions), because the sampler looks closely around transitions
   (realtime/window.py) and every 2 ms in between. Target: median ratio >= 0.97.
Exits 1 when a target is missed.

    nice -n -5 python3 bench/overhead.py [--pairs 6] [--seconds 2]
"""

from __future__ import annotations

import argparse
import json
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from zram import fill, fresh_zram

from ssdpts.engines.fio import FioEngine
from ssdpts.engines.ioengine import choose
from ssdpts.store import Store
from ssdpts.targets import open_target
from ssdpts.workload import Workload
from ssdpts.workload.fio import render_chosen
from ssdpts.workload.ioengine import IoChoice, IoRequest

WALL_RATIO_MAX = 1.10
CPU_SHARE_MAX = 0.10
SAMPLER_IOPS_RATIO_MIN = 0.97


def cpu_s() -> float:
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def proc_cpu_s(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / 100.0   # utime + stime, clock ticks (USER_HZ = 100)


def random_reads(name: str, seconds: float, threads: int, iodepth: int) -> Workload:
    """The bench's cell: 4 KiB random reads (CPU-bound on zram: the worst case for the harness)."""
    return Workload(name, "randrw", bs=4096, read_pct=100, threads=threads, iodepth=iodepth, runtime_s=seconds)


def chained(seconds: float, threads: int, iodepth: int) -> list[Workload]:
    """A round of 4 chained cells (3 transitions: the sampler looks closely around them) lasting `seconds`."""
    return [random_reads(f"rnd_4K_100-0_{k}", seconds / 4, threads, iodepth) for k in range(4)]


def raw_job(target, cells: list[Workload], io: IoChoice) -> str:
    """The job text ssdpts renders for `cells` with the engine it chose, without gates: what raw fio runs."""
    return render_chosen(cells, [target], io).text()


def sampler_pair(target, cells: list[Workload], pair: int, io: IoRequest = IoRequest()) -> tuple[dict, float]:
    """The same round with and without the device-idle sampler, in the order the pair's parity says: mean cell
    IOPS by sampler on/off (as fio measured them) and the sampler's CPU seconds."""
    engines = {True: FioEngine(io_request=io), False: FioEngine(measure_idle=False, io_request=io)}
    iops, sampler_cpu = {}, 0.0
    for measured in (True, False) if pair % 2 == 0 else (False, True):
        with engines[measured].session(target) as session:
            s0 = [proc_cpu_s(sp.proc.pid) for sp in session.samplers]
            out = session.submit(cells).result()
            if measured:
                sampler_cpu = sum(proc_cpu_s(sp.proc.pid) for sp in session.samplers) - sum(s0)
        iops[measured] = statistics.mean(c.iops for c in out.cells)
    return iops, sampler_cpu


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--pairs", type=int, default=6)
    ap.add_argument("--seconds", type=float, default=2.0)
    args = ap.parse_args()
    with fresh_zram(1 << 30) as dev, tempfile.TemporaryDirectory() as tmp:
        fill(dev)
        target = open_target(dev, probe=False)
        w = random_reads("rnd_4K_100-0", args.seconds, 2, 16)
        job = Path(tmp) / "raw.fio"
        engine = FioEngine()
        job.write_text(raw_job(target, [w], choose(engine.io_request, [target], engine.binary, engine.version)))
        store = Store(Path(tmp) / "bench.db")
        rid = store.create_run(target_spec=dev, target=target.to_dict(), host={}, profile_name="bench", profile={},
                               tests=["bench"], options={}, engine="fio")
        cells = chained(args.seconds, 2, 16)
        walls, raws, cpus, sampler_cpus, iops = [], [], [], [], {True: [], False: []}
        for i in range(args.pairs):
            with engine.session(target) as session:
                c0, t0 = cpu_s(), time.perf_counter()
                out = session.submit([w]).result()
                store.save_round(rid, "bench", "wall", "round", i + 1, out, [w.to_dict()])
                walls.append(time.perf_counter() - t0)
                cpus.append(cpu_s() - c0)
            by_sampler, sampler_cpu = sampler_pair(target, cells, i)
            sampler_cpus.append(sampler_cpu)
            for measured, value in by_sampler.items():
                iops[measured].append(value)
            t0 = time.perf_counter()
            subprocess.run(["fio", "--output-format=json+", str(job)], capture_output=True, check=True)
            raws.append(time.perf_counter() - t0)
        store.close()
    wall_ratio = statistics.median(a / b for a, b in zip(walls, raws))
    cpu_share = statistics.median(c / wl for c, wl in zip(cpus, walls))
    iops_ratio = statistics.median(a / b for a, b in zip(iops[True], iops[False]))
    result = {
        "round_wall_s_median": round(statistics.median(walls), 3), "raw_fio_wall_s_median": round(statistics.median(raws), 3),
        "wall_ratio": round(wall_ratio, 4), "wall_ratio_target": f"<= {WALL_RATIO_MAX}",
        "ssdpts_cpu_s_per_round_median": round(statistics.median(cpus), 3),
        "ssdpts_cpu_share_of_a_core": round(cpu_share, 4), "cpu_share_target": f"<= {CPU_SHARE_MAX}",
        "sampler_cpu_s_per_round_median": round(statistics.median(sampler_cpus), 3),
        "iops_sampler_on_median": round(statistics.median(iops[True])),
        "iops_sampler_off_median": round(statistics.median(iops[False])),
        "iops_ratio_on_off": round(iops_ratio, 4), "iops_ratio_target": f">= {SAMPLER_IOPS_RATIO_MIN}",
        "pairs": args.pairs, "round_seconds": args.seconds,
    }
    print(json.dumps(result, indent=2))
    missed = [name for name, bad in (("wall ratio", wall_ratio > WALL_RATIO_MAX), ("cpu", cpu_share > CPU_SHARE_MAX),
                                     ("sampler iops", iops_ratio < SAMPLER_IOPS_RATIO_MIN)) if bad]
    print(f"overhead: ssdpts round / raw fio wall clock {wall_ratio:.3f} (target <= {WALL_RATIO_MAX}); ssdpts CPU "
          f"{cpu_share * 100:.1f} % of a core per round (target <= {CPU_SHARE_MAX * 100:g} %); IOPS with/without the "
          f"idle sampler {iops_ratio:.4f} (target >= {SAMPLER_IOPS_RATIO_MIN}); "
          + (f"MISSED: {', '.join(missed)}" if missed else "all met"))
    return 1 if missed else 0


if __name__ == "__main__":
    sys.exit(main())
