"""What every PTS test shares: purge, preconditioning, the steady-state round loop, window summaries.

A test module describes its matrix and tracking variables and calls these; it never builds fio
command lines and never talks to the database except through its context.
"""

from __future__ import annotations

import logging
import os
import secrets
import zlib
from dataclasses import dataclass, field
from typing import Callable, Sequence

from ..deviations import PURGE_SOURCE, STALL_SOURCE, Deviation
from ..engines.interface import Engine
from ..engines.results import CellResult, DirStats, IoProgress, merge_bins, percentile_from_bins
from ..records import from_data, to_data
from ..runoptions import SeedChoice
from ..steady import SteadyState, evaluate
from ..store import RoundRecord, Store
from ..targets import Target
from ..targets.sim import SimTarget, simulated
from ..targets.purge import PurgeRecord, purge
from ..settings import TestSettings
from ..units import bs_label
from ..workload import Workload
from . import resume
from ..results import CellWindow, Latency, SteadyResult, TrackerKey, TrackerResult

log = logging.getLogger("ssdpts")

STREAM_ENDED = "ended"               # every job of the stream ran until its own runtime or io_size
STREAM_ROUND_LIMIT = "round limit"   # cut after the test's max_rounds


def tracked_series(trackers: Sequence[TrackerKey],
                   rounds_cells: Sequence[dict[str, CellResult]]) -> dict[TrackerKey, list[float]]:
    """Tracking values per round: for the (aggregate) cell, and per target when several run at once."""
    series: dict[TrackerKey, list[float]] = {t: [] for t in trackers}
    for cells in rounds_cells:
        for t in trackers:
            cell = cells[t.cell]
            series[t].append(cell.metric(t.metric))
            for part, pc in cell.parts.items():
                series.setdefault(t.of(part), []).append(pc.metric(t.metric))
    return series


@dataclass
class SteadyOutcome:
    phase: str
    rounds: list[RoundRecord]
    states: dict[TrackerKey, SteadyState]
    reached: bool
    window_rounds: list[int] = field(default_factory=list)

    def record(self) -> SteadyResult:
        return SteadyResult(self.phase, self.reached, len(self.rounds), list(self.window_rounds),
                            [TrackerResult(k, v) for k, v in self.states.items()])


@dataclass
class TestContext:
    run_id: str
    test: str
    store: Store
    target: Target
    engine: Engine | None      # None: a plan (nothing runs)
    settings: TestSettings     # the test's own record (a subclass) with its keys
    progress: object
    purge_method: str = "auto"
    scope: str = ""            # prefixes phases and step keys (a retry of failed targets stores beside the first try)
    # (test name, stored summary) -> typed summary or None; given by the runner, which holds the registry
    # (a test package importing the registry would be an import cycle: the registry imports every test)
    decode_summary: Callable[[str, dict], object] | None = None

    def _ph(self, phase: str) -> str:
        return self.scope + phase

    def stored_summary(self, test: str) -> object | None:
        """Another test's typed summary from this run; None when it did not run, stored none, or is unknown."""
        if self.decode_summary is None:
            return None
        stored = next((t.get("summary") for t in self.store.tests(self.run_id) if t["name"] == test), None)
        return self.decode_summary(test, stored) if stored else None

    # settings helpers ------------------------------------------------------------------------
    def active_range(self) -> float:
        """The active range as a fraction of the capacity (the profile gives a percentage)."""
        return self.settings.active_range / 100.0

    def cell(self, name: str, rw: str, bs: int, read_pct: int | None = None, **kw) -> Workload:
        """A test cell with the profile's load, range, data pattern, sync/direct mode and cell runtime."""
        s = self.settings
        base = dict(threads=s.threads, iodepth=s.iodepth, range_size=self.active_range(), runtime_s=s.cell_runtime,
                    data_pattern=s.data_pattern, sync=s.sync, direct=s.direct)
        base.update(kw)
        return Workload(name=name, rw=rw, bs=bs, read_pct=read_pct, **base)

    def wipc(self, block_size: int | None = None, multiple: float | None = None) -> Workload:
        """SNIA workload-independent preconditioning: SEQ writes of `multiple` x the user capacity, written
        over the active range ("Write 2X User Capacity ... to the entire ActiveRange"; wraps when AR < 100 %),
        at the test's own TC/QD (PTS 2.0.2: "same as in step 2.1"); [wipc] threads/iodepth override it.
        `multiple`: a test's own amount instead of [wipc] multiple."""
        w, s = self.settings.wipc, self.settings
        bs = block_size or w.block_size
        threads = w.threads or s.threads
        iodepth = w.iodepth or s.iodepth
        total = (w.multiple if multiple is None else multiple) * self.target.size_bytes
        return Workload(name=f"wipc_seq_{bs_label(bs)}_write", rw="write", bs=bs, threads=threads,
                        iodepth=iodepth, range_size=self.active_range(), io_size=int(total / threads) // bs * bs,
                        data_pattern=s.data_pattern)

    def seeded(self, cells: Sequence[Workload], phase: str, round_no: int) -> list[Workload]:
        """Random cells with their seed for this round: repeatable from the run's seed (fio randseed), and
        different in every round and cell, so a round never rewrites the previous round's LBAs."""
        base = self.settings.seed
        if base is None:
            return list(cells)
        return [c.with_(seed=round_seed(base, self.test, self._ph(phase), round_no, c.name)) if c.random else c
                for c in cells]

    def io_alignment(self) -> int:
        """Random I/O offsets aligned to 4 KiB or the physical block, whichever is larger: on a 512e drive the
        same workload then hits the same flash pages as on a 4Kn drive (512-byte I/Os included)."""
        return max(4096, int(self.target.physical_block_size or 4096), int(self.target.logical_block_size))

    def skip_sub_sector(self, sizes: Sequence[int]) -> tuple[list[int], list[str]]:
        """Drop block sizes below the logical block size (0.5 KiB on 4Kn drives), with a note."""
        lbs = self.target.logical_block_size
        keep = [b for b in sizes if b >= lbs]
        notes = [f"{bs_label(b)} skipped: below the {lbs}-byte logical block size" for b in sizes if b < lbs]
        return keep, notes

    # steps -----------------------------------------------------------------------------------
    def purge(self, phase: str = "") -> PurgeRecord:
        key = f"purge:{self._ph(phase)}"
        done = self.store.step(self.run_id, self.test, key)
        if done is not None:
            return from_data(PurgeRecord, done)
        self.progress.message(f"{self.test}: purging {self.target.path} ({self.purge_method})")
        self.flush_page_cache()     # any test's direct=false cells may have left dirty pages behind
        resume.purged(self.store, self.run_id, self.test)
        rec = purge(self.target, self.purge_method, through=self.engine.purge)
        if not rec.snia_purge:
            # prominently: the test's results do not start from a purged (FOB) device
            self.progress.message(f"{self.test}: NOT CONFORMANT: {rec.method} is not a SNIA purge: {rec.note}")
            self.store.record_deviation(self.run_id, self.test, Deviation(
                "purge-not-snia", f"{self._ph(phase) or 'test'}: --purge {self.purge_method} used {rec.method} "
                f"({rec.note})", PURGE_SOURCE))
        # a purge recorded as done must never come back un-purged: its checkpoint is committed with it
        self._committed(lambda cp: self.store.record_step(self.run_id, self.test, key, "purge", rec.to_dict(),
                                                          checkpoint=cp), force=True)
        return rec

    def flush_page_cache(self) -> None:
        """Write back what buffered (direct=0) cells left dirty in the host's page cache (else a purge's
        BLKDISCARD fails with EBUSY and the dirty pages land in the next cells) and drop it."""
        for drive in self.target.drives():
            if _has_host_page_cache(drive):
                fd = os.open(drive.path, os.O_RDONLY)
                try:
                    os.fsync(fd)
                    os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
                finally:
                    os.close(fd)

    def _committed(self, write: Callable[[dict | None], object], force: bool = False):
        """Commit data together with the target's checkpoint, if it has state of its own (the simulated SSD)
        and one is due (`force`: always): the state file is written first, named in the same transaction as
        the data, older ones removed after. Rounds committed after the last checkpoint are rolled back on
        resume (Store.rollback_to_checkpoint), so the database never describes another drive state."""
        cp = self.target.prepare_checkpoint(force=force)
        out = write(cp)
        if cp is not None:
            self.target.checkpoint_committed(cp)
        return out

    def _save_round(self, phase: str, kind: str, round_no: int, out, workloads: list[dict],
                    tracking: dict | None = None, steady: dict | None = None, force: bool = False,
                    rerun: str = "nothing re-run before measuring") -> None:
        record = resume.attach_pause(self.store, self.run_id, self.test, phase, kind, round_no, out, rerun)
        if record is not None:
            self.progress.message(f"{self.test}: {record.line()}")
        for stall in out.stalls:
            self.progress.message(f"{self.test}: {phase} {kind} {round_no}: {stall.why}; killed and run again "
                                  f"(evidence: {stall.evidence_file})")
            self.store.record_deviation(self.run_id, self.test, Deviation(
                "fio-stall", f"{phase} {kind} {round_no}: {stall.why}; the round was run again (evidence and "
                f"job file: {stall.evidence_file})", STALL_SOURCE))
        self._committed(lambda cp: self.store.save_round(self.run_id, self.test, phase, kind, round_no, out,
                                                         workloads, tracking, steady, checkpoint=cp), force)

    def _checkpoint_now(self) -> None:
        """At the end of a phase: the drive's state as of its last committed round (nothing else is written)."""
        self._committed(lambda cp: cp is not None and self.store.record_checkpoint(self.run_id, cp), force=True)

    def note(self, text: str) -> None:
        notes = self.store.step(self.run_id, self.test, "notes") or {"notes": []}
        if text not in notes["notes"]:
            notes["notes"].append(text)
            self.store.record_step(self.run_id, self.test, "notes", "notes", notes)

    def run_to_steady_state(self, phase: str, cells: Sequence[Workload], trackers: Sequence[TrackerKey],
                            precondition: Workload | None = None) -> SteadyOutcome:
        """Precondition (once), then rounds of `cells` until every tracker is steady or max rounds.

        Resumable: stored rounds are reused; the next round is queued before the current one ends,
        so the device does not idle between preconditioning and rounds or between rounds.
        """
        kw = self.settings.steady.evaluate_kw()
        max_rounds = self.settings.steady.max_rounds
        done = self.store.rounds(self.run_id, self.test, self._ph(phase))
        history = [{c.name: c for c in r.cells} for r in done]
        series = tracked_series(trackers, history)
        states = {k: evaluate(v, **kw) for k, v in series.items() if len(v) == len(history)}
        if done and (all(s.reached for s in states.values()) or len(done) >= max_rounds):
            return self._outcome(phase, trackers, kw)
        need_pc = precondition is not None and not done and not self.store.rounds(
            self.run_id, self.test, self._ph(phase), kind="precondition", with_cells=False)
        round_no = len(done) + 1
        # after a stop the drive idled far beyond the bound: the interrupted round runs again, unmeasured, and
        # the next measured round follows it with no pause (pts/resume.py)
        rerun = not need_pc and resume.rerun_needed(self.store, self.run_id, self.test,
                                                    simulated(self.target))
        round_seconds = sum(c.runtime_s or 0 for c in cells)
        if precondition is not None:
            precondition = self.seeded([precondition], phase, 0)[0]
        with self.engine.session(self.target) as session:
            pc = session.submit([precondition], tag=f"{phase} precondition",
                                on_progress=lambda p: self.progress.io_progress(self.test, phase, p)) if need_pc else None
            again = self.seeded(cells, f"{phase}/resume", round_no) if rerun else []
            warm = session.submit(again, tag=f"{phase} round {round_no} re-run") if rerun else None
            round_cells = self.seeded(cells, phase, round_no)
            pending = session.submit(round_cells, tag=f"{phase} round {round_no}")
            if pc is not None:
                self.progress.round_started(self.test, phase, 0, max_rounds, None, "preconditioning")
                out = pc.result()
                self._save_round(self._ph(phase), "precondition", 0, out, [precondition.to_dict()])
                self.progress.precondition_done(self.test, phase, IoProgress.of(out.cells))
            if warm is not None:
                self.progress.round_started(self.test, phase, round_no, max_rounds, round_seconds,
                                            f"round {round_no} re-run unmeasured after the resume's pause",
                                            cells=[(c.name, c.runtime_s or 0) for c in cells])
                out = warm.result()
                self._save_round(self._ph(phase), resume.RESUME_CAUSE, round_no, out, [c.to_dict() for c in again],
                                 rerun=f"round {round_no} re-run unmeasured (stored as re-run round {round_no}), "
                                 "the measured round right behind it")
            while pending is not None:
                self.progress.round_started(self.test, phase, round_no, max_rounds, round_seconds, "",
                                            cells=[(c.name, c.runtime_s or 0) for c in cells], window=kw["window"])
                next_cells = self.seeded(cells, phase, round_no + 1)
                nxt = session.submit(next_cells, tag=f"{phase} round {round_no + 1}") if round_no < max_rounds else None
                try:
                    out = pending.result()
                except BaseException:
                    if nxt is not None:
                        nxt.cancel()
                    raise
                history.append({c.name: c for c in out.cells})
                series = tracked_series(trackers, history)
                states = {k: evaluate(v, **kw) for k, v in series.items() if len(v) == len(history)}
                tracking = {k.label: v[-1] for k, v in series.items() if len(v) == len(history)}
                reached = all(s.reached for s in states.values())
                self._save_round(self._ph(phase), "round", round_no, out, [c.to_dict() for c in round_cells],
                                 tracking, {k.label: s.to_dict() for k, s in states.items()},
                                 force=reached or nxt is None)
                self.progress.round_done(self.test, phase, round_no, tracking, reached, out)
                if reached or nxt is None:
                    if nxt is not None:
                        nxt.cancel()
                    break
                pending, round_no, round_cells = nxt, round_no + 1, next_cells
        return self._outcome(phase, trackers, kw)

    def run_sequence(self, phase: str, cells: Sequence[Workload], chunk: int = 32,
                     tracking: Callable[[list[CellResult]], dict] | None = None) -> list[RoundRecord]:
        """Run `cells` back to back (honouring each cell's idle_before_s), stored as rounds of `chunk` cells."""
        return self.run_segments([(phase, cells)], chunk, tracking)[phase]

    def run_segments(self, segments: Sequence[tuple[str, Sequence[Workload]]], chunk: int = 32,
                     tracking: Callable[[list[CellResult]], dict] | None = None) -> dict[str, list[RoundRecord]]:
        """Run several phases' cells as one chained sequence (no idle between phases but what the cells
        ask for), each phase stored as rounds of `chunk` cells. Resumable at round granularity."""
        todo = []
        for phase, cells in segments:
            chunks = [list(cells[i:i + chunk]) for i in range(0, len(cells), chunk)]
            done = len(self.store.rounds(self.run_id, self.test, self._ph(phase), with_cells=False))
            todo += [(self._ph(phase), i, self.seeded(c, phase, i), len(chunks))
                     for i, c in enumerate(chunks, start=1) if i > done]
        if todo:
            with self.engine.session(self.target) as session:
                pending = [session.submit(c, tag=f"{phase} part {i}") for phase, i, c, _ in todo]
                for k, ((phase, i, c, n), r) in enumerate(zip(todo, pending)):
                    spans = [(w.name, (w.runtime_s or 0) + w.ramp_s + w.idle_before_s) for w in c]
                    self.progress.round_started(self.test, phase, i, n, sum(t for _, t in spans), f"part {i}/{n}",
                                                cells=spans)
                    out = r.result()
                    track = tracking(out.cells) if tracking else {}
                    self._save_round(phase, "round", i, out, [w.to_dict() for w in c], track, force=k == len(todo) - 1)
                    self.progress.round_done(self.test, phase, i, track, False, out)
        return {phase: self.store.rounds(self.run_id, self.test, self._ph(phase)) for phase, _ in segments}

    def stream(self, phases: Sequence[str], cells: Sequence[Workload], interval_s: float,
               tracking: Callable[[str, int, CellResult, dict], dict], max_rounds: int | None = None) -> str:
        """Run `cells` as continuous jobs, back to back, storing every `interval_s` slice as a round of
        its phase (fio: cumulative status documents differenced; never one process per round).

        Returns how it ended: STREAM_ENDED (every job ran until its own runtime or io_size) or
        STREAM_ROUND_LIMIT (cut after `max_rounds` rounds)."""
        state: dict[str, dict] = {}
        how = STREAM_ENDED
        cells = self.seeded(cells, ",".join(phases), 0)
        with self.engine.session(self.target) as session:
            r = session.submit(cells, tag=",".join(phases), interval_s=interval_s)
            try:
                for iv in r.intervals():
                    phase = self._ph(phases[iv.cell_index])
                    if phase not in state:   # continue a resumed phase's round count (queried once)
                        state[phase] = {"round": len(self.store.rounds(self.run_id, self.test, phase,
                                                                       with_cells=False))}
                    st = state[phase]
                    st["round"] += 1
                    track = tracking(phase, st["round"], iv.result, st)
                    out = r.interval_output(iv)
                    self._save_round(phase, "round", st["round"], out, [cells[iv.cell_index].to_dict()], track)
                    self.progress.round_done(self.test, phase, st["round"], {k: v for k, v in track.items()
                                                                             if k in ("iops", "mib_s")}, False, None)
                    if max_rounds is not None and st["round"] >= max_rounds:
                        r.cancel()
                        how = STREAM_ROUND_LIMIT
                        break
                else:
                    r.result()
            except BaseException:
                r.cancel()
                raise
        self._checkpoint_now()
        return how

    def stop_reason(self, phase: str, reason: str | None = None) -> str | None:
        """The stored reason a phase's continuous job stopped (given `reason`: store it first); None if it
        has not stopped. Stored, so that a resumed run neither re-runs a job that ended nor guesses why."""
        key = f"stop:{self._ph(phase)}"
        if reason is not None:
            self.store.record_step(self.run_id, self.test, key, "stop", {"reason": reason})
        done = self.store.step(self.run_id, self.test, key)
        return None if done is None else done["reason"]

    def _outcome(self, phase: str, trackers: Sequence[TrackerKey], kw: dict) -> SteadyOutcome:
        rounds = self.store.rounds(self.run_id, self.test, self._ph(phase))
        series = tracked_series(trackers, [{c.name: c for c in r.cells} for r in rounds])
        nums = [r.round for r in rounds]
        # a target that dropped out (remote host) has fewer values: judged over the rounds it has
        states = {k: evaluate(v, rounds=nums if len(v) == len(nums) else nums[:len(v)], **kw)
                  for k, v in series.items()}
        live = {k: s for k, s in states.items() if len(series[k]) == len(nums)}
        reached = bool(live) and all(s.reached for s in live.values())
        window = nums[-kw["window"]:]
        return SteadyOutcome(phase, rounds, states, reached, window)


def window_summary(rounds: Sequence[RoundRecord], window_rounds: Sequence[int]) -> dict[str, CellWindow]:
    """Per cell: the measurement-window averages SNIA reports (and max / merged-histogram percentiles)."""
    chosen = [r for r in rounds if r.round in set(window_rounds)]
    out: dict[str, CellWindow] = {}
    if not chosen:
        return out
    for i, name in enumerate(c.name for c in chosen[0].cells):
        cells: list[CellResult] = [r.cells[i] for r in chosen]
        workload = from_data(Workload, chosen[0].workloads[i]) if chosen[0].workloads else Workload(
            name=name, rw="randrw", runtime_s=0.0)
        window = _cell_window(workload, cells)
        for p in sorted({p for c in cells for p in c.parts}):
            window.parts[p] = _cell_window(workload, [c.parts[p] for c in cells if p in c.parts])
        out[name] = window
    return out


def _latency(stats: list, n: int) -> Latency | None:
    ios = sum(s.ios for s in stats)
    if not ios:
        return None
    lat = Latency(mean_us=sum(s.lat_mean_ns * s.ios for s in stats) / ios / 1000,
                  max_us=max(s.lat_max_ns for s in stats) / 1000)
    bins = merge_bins(s.bins for s in stats if s.bins)
    for p in sorted({k for s in stats for k in s.percentiles}, key=float):
        v = percentile_from_bins(bins, float(p)) if bins else None
        if v is None:  # no histogram: mean of per-round percentiles (flagged)
            v = sum(s.percentiles.get(p, 0.0) for s in stats) / n
            lat.percentiles_from = "round mean"
        # a histogram bucket's value can lie above the largest latency measured (fio's buckets are ~1.6 % wide);
        # no I/O was slower than the max, so no percentile is either
        lat.percentiles_us[p] = min(v / 1000, lat.max_us)
    return lat


def merged_latency(stats: Sequence[DirStats]) -> Latency | None:
    """One direction of several results together (I/O-weighted mean, max of max, merged-histogram percentiles)."""
    return _latency(list(stats), len(stats))


def _cell_window(workload: Workload, cells: list[CellResult]) -> CellWindow:
    """Window averages of one cell's results (rates averaged, histograms merged, max of max)."""
    n = len(cells)
    ios_all = sum(c.read.ios + c.write.ios for c in cells)
    return CellWindow(
        workload=workload,
        iops=sum(c.iops for c in cells) / n,
        read_iops=sum(c.read.iops for c in cells) / n,
        write_iops=sum(c.write.iops for c in cells) / n,
        read_mib_s=sum(c.read.bw_bytes for c in cells) / n / 2**20,
        write_mib_s=sum(c.write.bw_bytes for c in cells) / n / 2**20,
        usr_cpu=sum(c.usr_cpu for c in cells) / n,
        sys_cpu=sum(c.sys_cpu for c in cells) / n,
        lat_mean_us=sum(c.lat_mean_ns * (c.read.ios + c.write.ios) for c in cells) / ios_all / 1000 if ios_all else 0.0,
        lat_max_us=max(c.lat_max_ns for c in cells) / 1000,
        read_lat=_latency([c.read for c in cells], n),
        write_lat=_latency([c.write for c in cells], n),
    )


def choose_seed(profile: dict, cli_seed: int | None) -> SeedChoice:
    """The run's base seed, written into the profile the run stores (so resume and every round use it):
    --seed, else the profile's, else a fresh one (any run can be repeated with the seed it records)."""
    defaults = profile.setdefault("defaults", {})
    if cli_seed is not None:
        source, value = "command line (--seed)", int(cli_seed)
    elif defaults.get("seed") is not None:
        source, value = "profile", int(defaults["seed"])
    else:
        source, value = "drawn for this run", secrets.randbelow(2**32)
    defaults["seed"] = value
    return SeedChoice(value, source)


def round_seed(base: int, test: str, phase: str, round_no: int, cell: str) -> int:
    """A 32-bit seed derived from the run's seed and the cell's place in the run (stable across resumes)."""
    return zlib.crc32(f"{base}/{test}/{phase}/{round_no}/{cell}".encode())


def cell_name(kind: str, bs: int, read_pct: int) -> str:
    """Stable, file-name-safe cell names: 'rnd_4K_65-35', 'seq_1024K_100-0'."""
    return f"{kind}_{bs_label(bs)}_{read_pct}-{100 - read_pct}"


def rnd_matrix(ctx: TestContext) -> tuple[list[Workload], list[int], list[int], list[str]]:
    """The random block size × R/W mix matrix of IOPS and Latency (outer loop: mix, inner: block size):
    (cells, block sizes, mixes, notes on skipped sub-sector sizes)."""
    sizes, notes = ctx.skip_sub_sector(ctx.settings.block_sizes)
    mixes = list(ctx.settings.mixes)
    cells = [ctx.cell(cell_name("rnd", bs, mix), "randrw", bs, mix) for mix in mixes for bs in sizes]
    return cells, sizes, mixes, notes


def tracked_cells(ctx: TestContext, cells: Sequence[Workload], metric: str) -> list[TrackerKey]:
    """The profile's `tracking` cells ([block size, read %] pairs, default RND 4K write) that the matrix has;
    the last cell when it has none of them."""
    names = {c.name for c in cells}
    out = []
    for bs, mix in ctx.settings.tracking:
        name = cell_name("rnd", bs, mix)
        if name in names:
            out.append(TrackerKey(name, metric))
    return out or [TrackerKey(cells[-1].name, metric)]


def stored_once(ctx: TestContext, key: str, record: type, measure: Callable[[str], object]):
    """A measurement stored whole as step `key` (a typed `record`): read back when it is there, else run
    `measure(scope)`. `scope` ("KEY/N") names this attempt, so the phases and purges of an attempt that was
    interrupted are never mixed with the next one's: that one starts again from its beginning."""
    done = ctx.store.step(ctx.run_id, ctx.test, key)
    if done is not None:
        return from_data(record, done)
    tried = sum(1 for s in ctx.store.steps(ctx.run_id, ctx.test) if s["kind"] == "attempt" and s["data"]["of"] == key)
    scope = f"{key}/{tried + 1}"
    ctx.store.record_step(ctx.run_id, ctx.test, f"attempt:{scope}", "attempt", {"of": key})
    result = measure(scope)
    ctx.store.record_step(ctx.run_id, ctx.test, key, "measured", to_data(result))
    return result


def _has_host_page_cache(drive: Target) -> bool:
    """A block device or file on this machine that exists (a simulated drive has none, a remote one is not ours
    to flush, a file target not yet written has nothing cached)."""
    return drive.host is None and not isinstance(drive, SimTarget) and os.path.exists(drive.path)
