#!/usr/bin/env python3
"""bench/gaps: idle time between consecutive WSAT rounds and HIR bursts, and HIR burst-length error.

WSAT rounds are slices of one continuous fio job (cut from fio's periodic status); the idle between
them is read from fio's own 1 ms IOPS log: the longest stretch without I/O. HIR bursts are separate
fio jobs chained by ssdpts's gates; the engine measures every gap (target <= 10 ms for continuous
bursts) and the idle it inserts between AB bursts; each burst's length comes from fio's JSON
(target: error <= 1 %). Run as root on zram: `python3 bench/gaps.py`.
"""

from __future__ import annotations

import json
import statistics
import sys

from ssdpts.engines.fio import FioEngine
from zram import zram
from ssdpts.targets import open_target
from ssdpts.workload import Workload



def longest_quiet_ms(logs: dict[str, str]) -> tuple[float, int]:
    """Longest time between consecutive 1 ms log samples that carry I/O, and the sample count."""
    times = sorted(int(l.split(",")[0]) for text in logs.values() for l in text.splitlines()
                   if l.strip() and int(l.split(",")[1]) > 0)
    gaps = [b - a for a, b in zip(times, times[1:])]
    return (max(gaps) if gaps else 0.0), len(times)


def main() -> int:
    with zram(2 << 30):
        target = open_target("/dev/zram0", probe=False)
        engine = FioEngine()
        # WSAT: one continuous 6 s job, 1 s rounds, with a 1 ms IOPS log
        wsat = Workload("wsat", "randwrite", bs=4096, threads=2, iodepth=16, runtime_s=6, log_interval_ms=1)
        with engine.session(target) as s:
            r = s.submit([wsat], interval_s=1.0)
            rounds = list(r.intervals())
            out = r.result()
        quiet_ms, samples = longest_quiet_ms(out.logs)
        slice_ms = [iv.duration_ms for iv in rounds]
        # HIR: 5 bursts of 2 s with 1 s idle between them, then 5 continuous 2 s bursts (baseline)
        burst, idle = 2.0, 1.0
        ab = [Workload(f"ab{i}", "randwrite", bs=4096, threads=2, iodepth=16, runtime_s=burst,
                       idle_before_s=idle if i else 0.0) for i in range(5)]
        c = [Workload(f"c{i}", "randwrite", bs=4096, threads=2, iodepth=16, runtime_s=burst,
                      idle_before_s=idle if i == 0 else 0.0) for i in range(5)]
        with engine.session(target) as s:
            ra, rc = s.submit(ab), s.submit(c)
            oa, oc = ra.result(), rc.result()
        idle_err = [g - idle * 1000 for g in oa.gaps_inside_ms]
        c_gaps = oc.gaps_inside_ms
        lengths = [cell.runtime_ms for cell in oa.cells + oc.cells]
        len_err = [abs(ms - burst * 1000) / (burst * 1000) * 100 for ms in lengths]
        result = {
            "wsat_rounds": len(rounds), "wsat_round_ms": [round(x, 1) for x in slice_ms],
            "wsat_longest_idle_ms_from_fio_1ms_log": quiet_ms, "wsat_log_samples": samples,
            "hir_baseline_gap_ms_median": round(statistics.median(c_gaps), 2),
            "hir_baseline_gap_ms_max": round(max(c_gaps), 2),
            "hir_idle_error_ms_median": round(statistics.median(idle_err), 2),
            "hir_idle_error_ms_max": round(max(idle_err, key=abs), 2),
            "hir_burst_length_error_pct_max": round(max(len_err), 3),
            "targets": {"gap_ms": "<= 10", "burst_length_error_pct": "<= 1"},
        }
        print(json.dumps(result, indent=2))
        print(f"gaps: WSAT longest idle between rounds {quiet_ms:.0f} ms (1 ms log resolution); HIR continuous "
              f"bursts median gap {statistics.median(c_gaps):.2f} ms (max {max(c_gaps):.2f}); idle accuracy "
              f"median {statistics.median(idle_err):+.2f} ms; burst length error max {max(len_err):.3f} % "
              f"(targets <= 10 ms, <= 1 %)")
        return 0


if __name__ == "__main__":
    sys.exit(main())
