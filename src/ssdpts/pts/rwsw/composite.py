"""The applied test workload: the top-N IO streams held at their shares by fio.

A stream is (block size, direction, access). One random-mode job with `rwmixread` (the read share), a
block-size split per direction (`bssplit=READS,WRITES`) and `percentage_random=R,W` (each direction's random
share, the rest continuing sequentially) draws every I/O's direction, then its size, then its access, each
independently at the given whole percents. That is the streams' mix exactly when, within each direction, size
and access are independent: a direction's streams all random or all sequential (the usual capture).

Otherwise (random page reads beside scans, random writes beside a log) one job would make size/access pairs
the capture did not have, so every stream runs as its own fio job (one direction, size and access: nothing
left to draw), all at once, their shares of the I/Os held by fio's `flow` (weights by I/O count, among the
cell's jobs only). Not a job per access with `rwmixread` inside: fio draws a direction and then stays in it
for a number of I/Os that grows with the I/Os done (io_u.c set_rwmix_bytes), so over a 1 s cell the read
share of such a job was 2 points off on a loop device. fio's other holder, a per-job `rate_iops`, would cap
the sweep's full-intensity cells. The replay at the captured intensity (run.py) is one job per stream too,
each at its own `rate_iops` (a job of one block size: fio paces bytes at a job's smallest size).

`flow` holds the jobs' counts by making the job that is ahead wait (fio spins without reaping its completed
I/Os): the device then sees fewer of that job's I/Os in flight while it waits (docs/rwsw-test.md).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Hashable, Sequence, TypeVar

from ...capture.model import DIRECTIONS, StreamCount, StreamKey
from ...engines.results import CellResult
from ...workload import JobMix

K = TypeVar("K", bound=Hashable)


def whole_percents(weights: dict[K, float]) -> dict[K, int]:
    """Weights as whole percents summing to 100 (largest remainder); entries that round to 0 are left out."""
    return {k: v for k, v in _largest_remainder(weights, 100).items() if v > 0}


def job_name(stream: StreamKey) -> str:
    """A stream's fio job name where each stream runs as its own job: "RND 4K R" -> rnd4kr."""
    return stream.label.replace(" ", "").lower()


@dataclass
class AppliedStream:
    """One stream of the applied workload: its share in the capture, among the chosen streams, and as run."""

    label: str                   # "RND 4K R"
    bs: int
    rw: str                      # read | write
    access: str                  # random | sequential
    capture_ios: int
    capture_pct: float           # of all I/Os of the capture (or of the step)
    requested_pct: float         # of the chosen streams' I/Os: what the test applies
    applied_pct: float           # what the jobs' whole-percent draws and weights give (0: no job makes it)

    @property
    def key(self) -> StreamKey:
        return StreamKey(self.bs, self.rw, self.access)

    @property
    def job_name(self) -> str:
        """Its fio job where each stream runs as its own: CELL.rnd4kr."""
        return job_name(self.key)


@dataclass
class OneJob:
    """Streams as one fio job's draws: rwmixread, a block-size split per direction, random % per direction."""

    read_pct: int
    read_split: list[tuple[int, int]]        # (block size, % of reads)
    write_split: list[tuple[int, int]]       # (block size, % of writes)
    random_pct: tuple[int, int]              # % of reads, of writes at random offsets

    @property
    def min_bs(self) -> int:
        return min(b for b, _ in self.read_split + self.write_split)

    def made(self) -> dict[StreamKey, float]:
        """Each stream the job's draws make, % of its I/Os."""
        dir_pct = {"read": self.read_pct, "write": 100 - self.read_pct}
        out: dict[StreamKey, float] = {}
        for d, split, rnd in (("read", self.read_split, self.random_pct[0]),
                              ("write", self.write_split, self.random_pct[1])):
            for bs, p in split:
                for access, a in (("random", rnd), ("sequential", 100 - rnd)):
                    if dir_pct[d] and a:
                        out[StreamKey(bs, d, access)] = dir_pct[d] * p * a / 1e4
        return out

    @property
    def rw(self) -> str:
        """fio rw mode: random unless every I/O is sequential; one direction when the other has no share."""
        sequential = self.random_pct == (0, 0) or (self.random_pct[0] == 0 and self.read_pct == 100) or \
            (self.random_pct[1] == 0 and self.read_pct == 0)
        if self.read_pct in (0, 100):
            d = "read" if self.read_pct == 100 else "write"
            return d if sequential else f"rand{d}"
        return "rw" if sequential else "randrw"

    def mix_options(self) -> dict:
        """The Workload / JobMix fields of these draws."""
        rw = self.rw
        out = {"rw": rw, "read_pct": self.read_pct, "bssplit": tuple(self.read_split),
               "write_bssplit": tuple(self.write_split)}
        if rw.startswith("rand"):
            out["random_pct"] = self.random_pct
        return out

    @property
    def label(self) -> str:
        def split(s):
            return ":".join(f"{b}/{p}" for b, p in s)
        return (f"rwmixread={self.read_pct}, bssplit={split(self.read_split)},{split(self.write_split)}, "
                f"percentage_random={self.random_pct[0]},{self.random_pct[1]}")


@dataclass
class StreamGroup:
    """One fio job of a several-job composite: one chosen stream at its share of the I/Os."""

    name: str                    # its fio job: CELL.NAME (AppliedStream.job_name)
    weight_pm: int               # fio flow weight: the stream's share of the chosen streams' I/Os, per mille
    job: OneJob


@dataclass
class Composite:
    """The applied workload's fio parameters and what they give per stream. `read_pct` .. `random_pct` are the
    mix as ONE job (what the simulated drive runs, and what the cells' own fields say); `groups`, when set,
    are the jobs fio runs at once instead (a direction mixes random and sequential streams)."""

    read_pct: int                            # rwmixread
    read_split: list[tuple[int, int]]        # (block size, % of reads)
    write_split: list[tuple[int, int]]       # (block size, % of writes)
    random_pct: tuple[int, int]              # % of reads, of writes at random offsets
    streams: list[AppliedStream]             # the chosen streams, most I/Os first
    coverage_pct: float                      # the chosen streams' share of the capture's (step's) I/Os
    exact: bool                              # size and access independent in each direction: one job is exact
    max_error_pp: float                      # largest |applied - requested| over every stream the jobs make
    unrequested: list[str]                   # streams the jobs make that the capture did not have
    groups: list[StreamGroup] = field(default_factory=list)   # empty: one job
    one_job_error_pp: float = 0.0            # max_error_pp of the one-job mix (what a single job would apply)

    @property
    def one_job(self) -> OneJob:
        return OneJob(self.read_pct, self.read_split, self.write_split, self.random_pct)

    @property
    def min_bs(self) -> int:
        return self.one_job.min_bs

    def jobs(self, iodepth: int, threads: int) -> tuple[JobMix, ...]:
        """The groups as fio jobs of a TC x QD cell: each `threads` threads, the QD shared by weight (at least 1
        each), held at their weights by flow."""
        depths = split_depth(iodepth, [g.weight_pm for g in self.groups])
        return tuple(JobMix(name=g.name, threads=threads, iodepth=qd, flow=g.weight_pm,
                            **g.job.mix_options()) for g, qd in zip(self.groups, depths))

    def workload_options(self, iodepth: int = 1, threads: int = 1) -> dict:
        """Keyword arguments of a Workload (workload/spec.py) running this composite at TC x QD."""
        opts = {"bs": self.min_bs, **self.one_job.mix_options(), "threads": threads, "iodepth": iodepth}
        opts["rw"], opts["random_pct"] = "randrw", self.random_pct     # the one-job view: random offsets
        if self.groups:
            jobs = self.jobs(iodepth, threads)
            opts.update(jobs=jobs, iodepth=sum(j.iodepth for j in jobs))
        return opts

    def job_streams(self) -> dict[str, list[AppliedStream]]:
        """The streams each fio job of a cell makes, by job name ("": the cell is one job)."""
        if not self.groups:
            return {"": list(self.streams)}
        return {g.name: [s for s in self.streams if s.job_name == g.name] for g in self.groups}

    @property
    def spec_label(self) -> str:
        """The jobs' parameters in words."""
        if not self.groups:
            return self.one_job.label
        return "; ".join(f"{s.label} job, flow {g.weight_pm}" for g in self.groups
                         for s in self.job_streams()[g.name])


def split_depth(qd: int, weights: Sequence[int]) -> list[int]:
    """`qd` shared among jobs by weight (largest remainder), each at least 1."""
    shares = whole_percents({k: w for k, w in enumerate(weights)}) if sum(weights) else {}
    exact = [qd * shares.get(k, 0) / 100 for k in range(len(weights))]
    out = [int(x) for x in exact]
    for k in sorted(range(len(weights)), key=lambda k: out[k] - exact[k])[:qd - sum(out)]:
        out[k] += 1
    return [max(1, d) for d in out]


def split_threads(threads: int, weights: Sequence[float]) -> list[int]:
    """`threads` shared among jobs by weight: one each, the rest by largest remainder (at least one a job, so
    never fewer in all than jobs)."""
    extra = threads - len(weights)
    if extra <= 0 or not sum(weights):
        return [1] * len(weights)
    more = _largest_remainder(dict(enumerate(weights)), extra)
    return [1 + more[k] for k in range(len(weights))]


def _direction(streams: Sequence[StreamCount]) -> tuple[list[tuple[int, int]], int]:
    """(block-size split, random %) of one direction's streams."""
    sizes: dict[int, float] = {}
    for s in streams:
        sizes[s.stream.bs] = sizes.get(s.stream.bs, 0) + s.ios
    ios = sum(s.ios for s in streams)
    rnd = sum(s.ios for s in streams if s.stream.access == "random")
    return sorted(whole_percents(sizes).items()), round(100 * rnd / ios)


def one_job(chosen: Sequence[StreamCount]) -> OneJob:
    """The one-job draws of `chosen` (streams with I/Os)."""
    total = sum(s.ios for s in chosen)
    by_dir = {d: [s for s in chosen if s.stream.rw == d] for d in DIRECTIONS}
    splits, randoms = {}, {}
    for d in DIRECTIONS:
        if by_dir[d]:
            splits[d], randoms[d] = _direction(by_dir[d])
    for d, other in (("read", "write"), ("write", "read")):     # fio wants a split for a direction it never draws
        if d not in splits:
            splits[d], randoms[d] = splits[other], 100
    read_pct = round(100 * sum(s.ios for s in by_dir["read"]) / total)
    return OneJob(read_pct, splits["read"], splits["write"], (randoms["read"], randoms["write"]))


def _error(made: dict[StreamKey, float], requested: dict[StreamKey, float]) -> float:
    return max(abs(made.get(k, 0.0) - requested.get(k, 0.0)) for k in set(made) | set(requested))


def composite(chosen: Sequence[StreamCount], all_ios: int) -> Composite:
    """The composite of `chosen` (streams with I/Os); `all_ios`: the capture's (step's) total I/Os."""
    chosen = [s for s in chosen if s.ios > 0]
    total = sum(s.ios for s in chosen)
    single = one_job(chosen)
    exact = all(len({s.stream.access for s in chosen if s.stream.rw == d}) <= 1 for d in DIRECTIONS)
    requested = {s.stream: 100 * s.ios / total for s in chosen}
    made, groups = single.made(), []
    if not exact:
        weights = whole_permille({s.stream: s.ios for s in chosen})
        groups = [StreamGroup(job_name(s.stream), weights[s.stream], one_job([s])) for s in chosen
                  if weights.get(s.stream)]
        made = {}
        for g in groups:
            for k, v in g.job.made().items():
                made[k] = made.get(k, 0.0) + v * g.weight_pm / 1000
    streams = [AppliedStream(label=s.stream.label, bs=s.stream.bs, rw=s.stream.rw, access=s.stream.access,
                             capture_ios=s.ios, capture_pct=100 * s.ios / all_ios if all_ios else 0.0,
                             requested_pct=requested[s.stream], applied_pct=made.get(s.stream, 0.0))
               for s in chosen]
    return Composite(
        read_pct=single.read_pct, read_split=single.read_split, write_split=single.write_split,
        random_pct=single.random_pct, streams=streams,
        coverage_pct=100 * total / all_ios if all_ios else 0.0, exact=exact,
        max_error_pp=_error(made, requested), unrequested=sorted(k.label for k in made if k not in requested),
        groups=groups, one_job_error_pp=_error(single.made(), requested))


def whole_permille(weights: dict[K, float]) -> dict[K, int]:
    """Weights as whole per mille summing to 1000 (fio flow weights: ten times finer than percents)."""
    return {k: v for k, v in _largest_remainder(weights, 1000).items() if v > 0}


@dataclass
class DirectionCounts:
    """I/Os and bytes per direction: of one fio job, or of the device (the block layer) over a cell."""

    read_ios: int
    read_bytes: int
    write_ios: int
    write_bytes: int


def stream_counts(c: DirectionCounts, streams: Sequence[AppliedStream]) -> dict[str, float | None]:
    """Each stream's I/O count from per-direction I/O and byte counts: a direction's two block sizes solve
    from its I/Os and bytes (one size: all of them). None for a stream the counts cannot tell apart (a third
    size, or two streams of one size and direction); {} when I/O of a direction none of `streams` has is there."""
    out: dict[str, float | None] = {}
    for d in DIRECTIONS:
        mine = [s for s in streams if s.rw == d]
        ios, nbytes = getattr(c, f"{d}_ios"), getattr(c, f"{d}_bytes")
        if not mine:
            if ios:
                return {}
            continue
        sizes = sorted({s.bs for s in mine})
        counts: dict[int, float] = {}
        if len(sizes) == 1:
            counts = {sizes[0]: float(ios)}
        elif len(sizes) == 2:
            small, large = sizes
            n_large = min(max((nbytes - small * ios) / (large - small), 0.0), float(ios))
            counts = {small: ios - n_large, large: n_large}
        for s in mine:
            alone = sum(1 for x in mine if x.bs == s.bs) == 1
            out[s.label] = counts[s.bs] if alone and s.bs in counts else None
    return out


def shares(counts: dict[str, float | None]) -> dict[str, float | None]:
    """Counts as % of their sum (None stays None; every stream None when any is: the sum is not known)."""
    if not counts or any(v is None for v in counts.values()):
        return {k: None for k in counts}
    total = sum(counts.values())
    return {k: 100 * v / total if total else 0.0 for k, v in counts.items()}


def delivered_pct(cell: CellResult, job_streams: dict[str, list[AppliedStream]]) -> dict[str, float] | None:
    """Each stream's share of the I/Os `cell` did (%), from fio's own counts of each job (`job_streams`: the
    streams each job makes, Composite.job_streams; "": the cell's own counts); None when the counts cannot
    tell the streams apart."""
    counts: dict[str, float | None] = {}
    for name, streams in job_streams.items():
        res = cell.jobs.get(name) if name else cell
        if res is None:
            return None
        got = stream_counts(fio_counts(res), streams)
        if not got and (res.read.ios or res.write.ios):
            return None
        counts.update(got)
    out = shares(counts)
    return None if not out or any(v is None for v in out.values()) else out


def fio_counts(res: CellResult) -> DirectionCounts:
    return DirectionCounts(res.read.ios, res.read.bytes, res.write.ios, res.write.bytes)


def _largest_remainder(weights: dict[K, float], whole: int) -> dict[K, int]:
    total = sum(weights.values())
    exact = {k: whole * v / total for k, v in weights.items()}
    out = {k: int(v) for k, v in exact.items()}
    for k in sorted(exact, key=lambda k: out[k] - exact[k])[:whole - sum(out.values())]:
        out[k] += 1
    return out
