#!/usr/bin/env python3
"""bench/hosts: wall time of the same quick test on 1 host and on 3 hosts at once (target ratio <= 1.1).

The hosts are network namespaces on this machine, each with `fio --server` on its own address and its
own loop device (tests/netns.py). Rounds are fixed (max_rounds = window) so both runs do the same work.
Run as root: `python3 bench/hosts.py`.
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "tests"))
from netns import FioHosts  # noqa: E402

PROFILE = """[profile]
extends = "quick"
[defaults]
threads = 1
iodepth = 8
[steady_state]
window = 5
max_rounds = 5
[wipc]
multiple = 1.0
[tests.iops]
cell_runtime = "500ms"
mixes = [65, 0]
block_sizes = ["64k", "4k"]
"""


def timed_run(hosts_file: Path, profile: Path, results: Path) -> float:
    t0 = time.monotonic()
    subprocess.run([sys.executable, "-m", "ssdpts", "run", "--hosts", str(hosts_file), "--profile", str(profile),
                    "--tests", "iops", "--purge", "none", "--destroy-data", "--results", str(results), "-q"],
                   check=True, capture_output=True, text=True)
    return time.monotonic() - t0


def main() -> int:
    hosts = FioHosts(3)
    try:
        with tempfile.TemporaryDirectory() as tmp:
            tmp = Path(tmp)
            profile = tmp / "bench.toml"
            profile.write_text(PROFILE)
            all3 = hosts.hosts_toml(tmp / "hosts3.toml")
            one = tmp / "hosts1.toml"
            one.write_text(all3.read_text().split("\n\n")[0] + "\n")
            times = {"1": [], "3": []}
            for i in range(2):                       # alternate so neither always runs first
                times["1"].append(timed_run(one, profile, tmp / f"r1-{i}"))
                times["3"].append(timed_run(all3, profile, tmp / f"r3-{i}"))
        t1, t3 = min(times["1"]), min(times["3"])
        print(json.dumps({"wall_s_1_host": [round(x, 2) for x in times["1"]],
                          "wall_s_3_hosts": [round(x, 2) for x in times["3"]],
                          "ratio_3_to_1": round(t3 / t1, 3), "target": "<= 1.1"}, indent=2))
        print(f"hosts: 3 hosts took {t3:.2f} s vs {t1:.2f} s for 1 host: ratio {t3 / t1:.3f} (target <= 1.1)")
        return 0
    finally:
        hosts.close()


if __name__ == "__main__":
    sys.exit(main())
