"""A synthetic results database: every report section with known numbers, without running fio.

Fabricated data, so it lives with the tests, never in the package. Used by the report tests and bench/report.py. Rounds go through `Store.save_round` with real
`RoundOutput`/`CellResult` objects, and the summaries are computed by the same functions the test
modules use (`window_summary`, `evaluate`), so the report sees exactly what a real run stores.
"""

from __future__ import annotations

import math
import random
import time
from pathlib import Path

from ssdpts.engines.results import CellResult, DirStats, RoundOutput
from ssdpts.profiles import load_profile
from ssdpts.settings import TestSettings
from ssdpts.pts import registry
from ssdpts.pts.cells import cell_name
from ssdpts.pts.windows import window_summary
from ssdpts.pts.iops.summary import IopsSummary
from ssdpts.pts.latency.summary import LatencySummary
from ssdpts.results import CellWindow, SteadyResult, TrackerKey, TrackerResult
from ssdpts.pts.throughput.summary import BlockSizeResult, ThroughputSummary
from ssdpts.pts.wsat import TEST as WSAT
from ssdpts.pts.wsat.summary import WsatInterval, WsatSummary, WsatWorkload
from ssdpts.steady import evaluate
from ssdpts.store import Store
from ssdpts.targets.purge import PurgeRecord
from ssdpts.workload import Workload
from ssdpts.units import bs_label

PCTS = ("99", "99.9", "99.99", "99.999")


def _dir(rng: random.Random, iops: float, bs: int, runtime_s: float, lat_us: float, bins: bool) -> DirStats:
    if iops <= 0:
        return DirStats()
    ios = int(iops * runtime_s)
    mean = lat_us * 1000
    pct = {p: mean * f for p, f in zip(PCTS, (2.5, 5.0, 12.0, 30.0))}
    hist = None
    if bins:
        # a log-spaced histogram whose percentiles are near `pct` (the report merges these)
        hist = {}
        edges = [mean * 0.3 * 1.25 ** i for i in range(30)]
        weights = [math.exp(-((i - 9) / 3.0) ** 2) + 0.002 * math.exp(-(i - 9) / 6.0) for i in range(30)]
        tot = sum(weights)
        for e, w in zip(edges, weights):
            n = int(round(ios * w / tot))
            if n:
                hist[int(e)] = n
    return DirStats(ios=ios, bytes=ios * bs, iops=iops, bw_bytes=iops * bs, lat_mean_ns=mean,
                    lat_min_ns=mean * 0.3, lat_max_ns=mean * rng.uniform(200, 300), lat_stddev_ns=mean * 0.4,
                    percentiles=pct, bins=hist)


def _cell(rng, wl: dict, total_iops: float, lat_us: float, runtime_s: float, bins: bool) -> CellResult:
    rp = wl["read_pct"] if wl.get("read_pct") is not None else (100 if wl["rw"] in ("read", "randread") else 0)
    r_iops, w_iops = total_iops * rp / 100, total_iops * (100 - rp) / 100
    return CellResult(name=wl["name"], read=_dir(rng, r_iops, wl["bs"], runtime_s, lat_us * 0.8, bins),
                      write=_dir(rng, w_iops, wl["bs"], runtime_s, lat_us * 1.3, bins),
                      runtime_ms=runtime_s * 1000, usr_cpu=5.0, sys_cpu=20.0)


def _wl(name: str, rw: str, bs: int, read_pct: int | None, threads: int, iodepth: int, runtime_s: float) -> dict:
    return Workload(name=name, rw=rw, bs=bs, read_pct=read_pct, threads=threads, iodepth=iodepth,
                    runtime_s=runtime_s).to_dict()


def _decay(rnd: int, fob: float, steady: float, tau: float, rng: random.Random, noise: float) -> float:
    return (steady + (fob - steady) * math.exp(-(rnd - 1) / tau)) * (1 + rng.uniform(-noise, noise))


class _Loop:
    """Saves rounds like ctx.rounds.run_to_steady_state and returns the summary pieces it would."""

    def __init__(self, store: Store, run_id: str, test: str, settings: TestSettings, t0: float):
        self.store, self.run_id, self.test, self.settings = store, run_id, test, settings
        self.kw = settings.steady.evaluate_kw()
        self.t = t0

    def _out(self, cells: list[CellResult], seconds: float) -> RoundOutput:
        start = self.t
        self.t += seconds + 0.05
        return RoundOutput(cells=cells, engine="fio", job_text="[global]\n; synthetic\n", command=["fio", "synthetic"],
                           raw_output="{}", started_at=start, ended_at=start + seconds, gap_before_ms=0.4,
                           fio_version="fio-3.33")

    def precondition(self, phase: str, wl: dict, rng) -> None:
        out = self._out([_cell(rng, wl, 20000, 500, 60, False)], 60)
        self.store.save_round(self.run_id, self.test, phase, "precondition", 0, out, [wl])

    def run(self, phase: str, wls: list[dict], make, trackers: list[TrackerKey], max_rounds: int,
            stop_at_steady: bool = True) -> tuple[SteadyResult, dict[str, CellWindow]]:
        series: dict[TrackerKey, list[float]] = {t: [] for t in trackers}
        nums = []
        for rnd in range(1, max_rounds + 1):
            cells = make(rnd)
            by = {c.name: c for c in cells}
            for t in trackers:
                series[t].append(by[t.cell].metric(t.metric))
            nums.append(rnd)
            states = {k: evaluate(v, **self.kw) for k, v in series.items()}
            self.store.save_round(self.run_id, self.test, phase, "round", rnd,
                                  self._out(cells, sum(w["runtime_s"] for w in wls)), wls,
                                  {k.label: v[-1] for k, v in series.items()},
                                  {k.label: s.to_dict() for k, s in states.items()})
            if stop_at_steady and all(s.reached for s in states.values()):
                break
        states = {k: evaluate(v, rounds=nums, **self.kw) for k, v in series.items()}
        window = nums[-self.kw["window"]:]
        rounds = self.store.rounds(self.run_id, self.test, phase)
        steady = SteadyResult(phase, all(s.reached for s in states.values()), len(nums), window,
                              [TrackerResult(k, v) for k, v in states.items()])
        return steady, window_summary(rounds, window)


def build(results_dir: str | Path, *, model: str = "Synthetic NVMe 1.6TB", profile: str = "pts-enterprise",
          iops_rounds: int = 25, wsat_rounds: int = 600, seed: int = 1, speed: float = 1.0,
          tests: tuple[str, ...] = ("iops", "throughput", "latency", "wsat"), reach_steady: bool = False,
          bins: bool = True) -> tuple[Store, str]:
    """Fill a Store in `results_dir` with one completed run; returns (store, run_id).

    PTS-E shape by default: IOPS 8 block sizes x 7 mixes for `iops_rounds` rounds (not steady unless
    reach_steady), Throughput 128K and 1024K, Latency 3 x 3 with histograms, and `wsat_rounds`
    intervals of WSAT (one workload, rnd4k-write).
    `speed` scales every throughput/IOPS number (two drives for `compare`).
    """
    rng = random.Random(seed)
    store = Store.in_dir(results_dir)
    prof = load_profile(profile)
    size = 1_600_321_314_816
    run_id = store.create_run(
        target_spec="/dev/nvme9n1",
        target={"kind": "block", "spec": "/dev/nvme9n1", "path": "/dev/nvme9n1", "size_bytes": size,
                "logical_block_size": 512, "physical_block_size": 4096,
                "info": {"model": model, "serial": f"SYN{seed:05d}", "firmware": "8DV10171", "transport": "nvme",
                         "write_cache": "write back", "size_bytes": size}},
        host={"hostname": "bench-host", "cpu_model": "Synthetic CPU @ 3.0GHz", "cpu_cores": 16,
              "memory_bytes": 64 * 2**30, "kernel": "6.1.0", "os": "Debian GNU/Linux 12 (bookworm)",
              "python": "3.11", "fio_version": "fio-3.33", "ssdpts_version": "0.1.0"},
        profile_name=prof["profile"]["name"], profile=prof, tests=list(tests),
        options={"destroy_data": True, "purge": "nvme-format", "results_dir": str(results_dir)}, engine="fio")
    # unique run ids even when two runs are built within the same second
    t0 = time.time()
    purge = PurgeRecord(method="nvme-format", snia_purge=True, command="nvme format -s1 /dev/nvme9n1", seconds=4.0,
                        note="")

    if "iops" in tests:
        st = registry.settings_for(prof, ["iops"]).of("iops")
        store.set_test(run_id, "iops", "running")
        store.record_step(run_id, "iops", "purge:", "purge", purge.to_dict())
        sizes, mixes = list(st.block_sizes), list(st.mixes)
        th, qd = st.threads, st.iodepth
        wls = [_wl(cell_name("rnd", bs, m), "randrw", bs, m, th, qd, 60.0) for m in mixes for bs in sizes]
        loop = _Loop(store, run_id, "iops", st, t0)
        loop.precondition("", _wl("wipc_seq_128K_write", "write", 131072, None, 1, 32, 60.0), rng)

        def base(bs: int, m: int) -> float:
            cap = 900_000 * speed * (0.25 + 0.75 * m / 100)          # small-block limit
            bw = 3.2e9 * speed * (0.45 + 0.55 * m / 100) / bs          # bandwidth limit
            return 1 / (1 / cap + 1 / bw)

        def make(rnd: int) -> list[CellResult]:
            tau = 1.0 if reach_steady else 9.0
            out = []
            for w in wls:
                steady = base(w["bs"], w["read_pct"])
                v = _decay(rnd, steady * 2.2, steady, tau, rng, 0.01 if reach_steady else 0.03)
                if not reach_steady and w["read_pct"] <= 5:    # garbage collection: write IOPS swing ±12 %
                    v *= 1 + 0.12 * (-1) ** rnd
                out.append(_cell(rng, w, v, th * qd / v * 1e6, 60.0, bins))
            return out

        trackers = [TrackerKey(cell_name("rnd", b, m), "iops") for b, m in st.tracking]
        steady, cells = loop.run("", wls, make, trackers, iops_rounds, stop_at_steady=reach_steady)
        store.set_test(run_id, "iops", "completed", registry.get("iops").encode(IopsSummary(
            purge=purge, steady=steady, cells=cells, block_sizes=sizes, mixes=mixes,
            notes=["0.5K cells: synthetic data"])))

    if "throughput" in tests:
        st = registry.settings_for(prof, ["throughput"]).of("throughput")
        store.set_test(run_id, "throughput", "running")
        results = []
        for bs in st.block_sizes:
            phase = f"bs={bs_label(bs)}"
            store.record_step(run_id, "throughput", f"purge:{phase}", "purge", purge.to_dict())
            rd = _wl(cell_name("seq", bs, 100), "read", bs, 100, 1, 32, 60.0)
            wr = _wl(cell_name("seq", bs, 0), "write", bs, 0, 1, 32, 60.0)
            loop = _Loop(store, run_id, "throughput", st, t0 + 5000)
            loop.precondition(phase, _wl(f"wipc_seq_{bs_label(bs)}_write", "write", bs, None, 1, 32, 60.0), rng)
            rbw, wbw = 5.09e9 * speed, 2.07e9 * speed

            def make(rnd: int, bs=bs, rd=rd, wr=wr, rbw=rbw, wbw=wbw) -> list[CellResult]:
                return [_cell(rng, rd, _decay(rnd, rbw, rbw, 1, rng, 0.01) / bs, 80, 60.0, False),
                        _cell(rng, wr, _decay(rnd, wbw * 1.6, wbw, 1.5, rng, 0.01) / bs, 200, 60.0, False)]

            steady, cells = loop.run(phase, [rd, wr], make, [TrackerKey(rd["name"], "read_bw"),
                                                             TrackerKey(wr["name"], "write_bw")], 25)
            results.append(BlockSizeResult(block_size=bs, purge=purge, steady=steady, read_cell=rd["name"],
                                           write_cell=wr["name"], cells=cells))
        store.set_test(run_id, "throughput", "completed",
                       registry.get("throughput").encode(ThroughputSummary(block_sizes=results)))

    if "latency" in tests:
        st = registry.settings_for(prof, ["latency"]).of("latency")
        store.set_test(run_id, "latency", "running")
        store.record_step(run_id, "latency", "purge:", "purge", purge.to_dict())
        sizes, mixes = list(st.block_sizes), list(st.mixes)
        wls = [_wl(cell_name("rnd", bs, m), "randrw", bs, m, 1, 1, 60.0) for m in mixes for bs in sizes]
        loop = _Loop(store, run_id, "latency", st, t0 + 9000)
        loop.precondition("", _wl("wipc_seq_128K_write", "write", 131072, None, 1, 32, 60.0), rng)

        def make(rnd: int) -> list[CellResult]:
            out = []
            for w in wls:
                lat = (20 + 70 * w["read_pct"] / 100 + w["bs"] / 4096 * 6) / speed
                lat = _decay(rnd, lat * 0.7, lat, 1.5, rng, 0.01)
                out.append(_cell(rng, w, 1e6 / lat, lat, 60.0, bins))
            return out

        steady, cells = loop.run("", wls, make, [TrackerKey(cell_name("rnd", 4096, 0), "lat_mean")], 25)
        store.set_test(run_id, "latency", "completed", registry.get("latency").encode(LatencySummary(
            purge=purge, steady=steady, cells=cells, block_sizes=sizes, mixes=mixes)))

    if "wsat" in tests:
        store.set_test(run_id, "wsat", "running")
        store.record_step(run_id, "wsat", "purge:rnd4k-write", "purge", purge.to_dict())
        wl = _wl("wsat_rnd4k-write", "randwrite", 4096, 0, 4, 32, 60.0)
        loop = _Loop(store, run_id, "wsat", TestSettings(), t0 + 20000)
        written, series = 0, []
        for rnd in range(1, wsat_rounds + 1):   # one continuous job cut into 60 s intervals, as wsat/run.py stores it
            v = _decay(rnd, 400_000 * speed, 160_000 * speed, 60, rng, 0.03)
            cell = _cell(rng, wl, v, 128 / v * 1e6, 60.0, False)
            written += cell.write.bytes
            track = {"iops": cell.iops, "mib_s": cell.bw_bytes / 2**20, "tgbw_gb": written / 1e9,
                     "fills": written / size, "elapsed_s": rnd * 60.0, "lat_mean_us": cell.lat_mean_ns / 1000,
                     "lat_max_us": cell.lat_max_ns / 1000,
                     **{f"p{k}_us": x / 1000 for k, x in cell.write.percentiles.items()}}
            store.save_round(run_id, "wsat", "rnd4k-write", "round", rnd, loop._out([cell], 60.0), [wl], track)
            series.append(WsatInterval.of_tracking(track))
        tail = [x.iops for x in series[-5:]]
        last = series[-1] if series else None
        workload = WsatWorkload(
            purge=purge, rounds=len(series), stop_reason="round limit",
            tgbw_gb=last.tgbw_gb if last else 0.0, fills=last.fills if last else 0.0,
            elapsed_s=last.elapsed_s if last else 0.0, fresh_iops=series[0].iops if series else 0.0,
            final_iops=sum(tail) / len(tail) if tail else 0.0,
            steady_state_of_last_window=evaluate([x.iops for x in series]) if series else None, series=series)
        store.set_test(run_id, "wsat", "completed", WSAT.encode(WsatSummary(
            workloads={"rnd4k-write": workload}, capacity_bytes=size, round_time_s=60.0,
            notes=["synthetic WSAT series"])))

    store.set_run_status(run_id, "completed")
    return store, run_id
