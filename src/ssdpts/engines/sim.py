"""The simulated-SSD engine: the same workload descriptions as fio, executed in simulated time.

Results come back shaped like fio's JSON jobs, so they go through the same parser as fio output
and every test, steady-state decision and report works unchanged. Rounds are chained with no idle
time, as the fio engine chains them with gates.
"""

from __future__ import annotations

import json
import time
import zlib
from typing import Sequence

from ..workload import Workload
from .fiojson import parse_job
from .results import RoundOutput


def sim_job(w: Workload, capacity: int, lbs: int, seed: int) -> dict:
    offset, size = w.region(capacity, lbs)
    job = {
        "name": w.name, "rw": w.rw, "rwmixread": w.reads, "bs": w.bs, "numjobs": w.threads, "iodepth": w.iodepth,
        "offset": offset, "size": size,
        "runtime_ns": int((w.runtime_s or 0) * 1e9), "io_size": int(w.io_size or 0),
        "thinktime_ns": int(w.thinktime_us * 1000), "thinktime_iotime_ns": int(w.thinktime_iotime_s * 1e9),
        "seed": w.seed if w.seed is not None else seed, "log_interval_ns": int(w.log_interval_ms * 1e6),
        "percentiles": list(w.percentiles),
    }
    if w.bssplit:
        job["bssplit"] = [list(x) for x in w.bssplit]
    if w.distribution.startswith("zoned:"):
        job["zones"] = [[float(a), float(b)] for a, b in (z.split("/") for z in w.distribution[6:].split(":"))]
    return job


class SimRound:
    def __init__(self, session: "SimSession", cells: Sequence[Workload], tag: str):
        self.session = session
        self.cells = list(cells)
        self.tag = tag
        self.cancelled = False
        self._result: RoundOutput | None = None

    def cancel(self) -> None:
        if self._result is None:
            self.cancelled = True

    def _execute(self) -> RoundOutput:
        s = self.session
        drive, t = s.target.drive, s.target
        jobs, raw, cells = [], [], []
        started = time.time()
        for w in self.cells:
            s.counter += 1
            job = sim_job(w, t.size_bytes, t.logical_block_size, seed=zlib.crc32(f"{w.name}/{s.counter}".encode()))
            res = drive.run_job(job)
            jobs.append(job)
            raw.append(res)
            cells.append(parse_job(res))
        return RoundOutput(cells=cells, engine="sim", job_text=json.dumps(jobs, indent=1),
                           command=["ssdsim", "run_job", t.path], raw_output=json.dumps({"jobs": raw}),
                           started_at=started, ended_at=time.time(), gap_before_ms=0.0,
                           gaps_inside_ms=[0.0] * (len(cells) - 1), fio_version=s.engine.version)

    def result(self) -> RoundOutput:
        if self._result is None:
            # rounds run in submission order, like the gated fio chain
            for r in self.session.queue:
                if r is self:
                    break
                if r._result is None and not r.cancelled:
                    r._result = r._execute()
            self._result = self._execute()
        return self._result


class SimSession:
    def __init__(self, engine: "SimEngine", target):
        self.engine = engine
        self.target = target
        self.queue: list[SimRound] = []
        self.counter = 0

    def submit(self, cells: Sequence[Workload], tag: str = "") -> SimRound:
        r = SimRound(self, cells, tag)
        self.queue.append(r)
        return r

    def close(self) -> None:
        self.queue.clear()

    def __enter__(self) -> "SimSession":
        return self

    def __exit__(self, *exc) -> None:
        self.close()


class SimEngine:
    name = "sim"

    def __init__(self):
        from .._sim import version

        self.version = f"ssdsim-{version()}"

    def session(self, target) -> SimSession:
        return SimSession(self, target)
