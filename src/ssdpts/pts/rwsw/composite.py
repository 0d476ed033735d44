"""The applied test workload as ONE fio job: top-N IO streams held at their shares by fio's own draws.

A stream is (block size, direction, access). One random-mode job with `rwmixread` (the read share),
a block-size split per direction (`bssplit=READS,WRITES`) and `percentage_random=R,W` (each direction's
random share, the rest continuing sequentially) draws every I/O's direction, then its size, then its
access, each independently at the given whole percents. That reproduces the streams' shares exactly
when, within each direction, size and access are independent, which holds whenever a direction's streams
are all random or all sequential (the usual capture). Otherwise the job also makes size/access pairs the
capture did not have; `max_error_pp` says by how much any stream's share differs (docs/rwsw-test.md).
Several jobs held together by fio's `flow` would only be held "roughly" (fio's words) and stall jobs
that get ahead, which changes the queue depth the test is meant to apply.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Hashable, Sequence, TypeVar

from ...capture.model import DIRECTIONS, StreamCount, StreamKey
from ...engines.results import CellResult

K = TypeVar("K", bound=Hashable)


def whole_percents(weights: dict[K, float]) -> dict[K, int]:
    """Weights as whole percents summing to 100 (largest remainder); entries that round to 0 are left out."""
    total = sum(weights.values())
    exact = {k: 100 * v / total for k, v in weights.items()}
    out = {k: int(v) for k, v in exact.items()}
    for k in sorted(exact, key=lambda k: out[k] - exact[k])[:100 - sum(out.values())]:
        out[k] += 1
    return {k: v for k, v in out.items() if v > 0}


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
    applied_pct: float           # what the job's whole-percent draws give (0 for a stream it cannot make)

    @property
    def key(self) -> StreamKey:
        return StreamKey(self.bs, self.rw, self.access)


@dataclass
class Composite:
    """The applied workload's fio parameters and what they give per stream."""

    read_pct: int                            # rwmixread
    read_split: list[tuple[int, int]]        # (block size, % of reads)
    write_split: list[tuple[int, int]]       # (block size, % of writes)
    random_pct: tuple[int, int]              # % of reads, of writes at random offsets
    streams: list[AppliedStream]             # the chosen streams, most I/Os first
    coverage_pct: float                      # the chosen streams' share of the capture's (step's) I/Os
    exact: bool                              # size and access independent in each direction
    max_error_pp: float                      # largest |applied - requested| over every stream the job makes
    unrequested: list[str]                   # streams the job makes that the capture did not have

    @property
    def min_bs(self) -> int:
        return min(b for b, _ in self.read_split + self.write_split)

    def workload_options(self) -> dict:
        """Keyword arguments of a Workload (workload/spec.py) running this composite."""
        return {"rw": "randrw", "bs": self.min_bs, "read_pct": self.read_pct,
                "bssplit": tuple(self.read_split), "write_bssplit": tuple(self.write_split),
                "random_pct": self.random_pct}

    @property
    def spec_label(self) -> str:
        """The job's parameters in words."""
        def split(s):
            return ":".join(f"{b}/{p}" for b, p in s)
        return (f"rwmixread={self.read_pct}, bssplit={split(self.read_split)},{split(self.write_split)}, "
                f"percentage_random={self.random_pct[0]},{self.random_pct[1]}")


def _direction(streams: Sequence[StreamCount]) -> tuple[list[tuple[int, int]], int]:
    """(block-size split, random %) of one direction's streams."""
    sizes: dict[int, float] = {}
    for s in streams:
        sizes[s.stream.bs] = sizes.get(s.stream.bs, 0) + s.ios
    ios = sum(s.ios for s in streams)
    rnd = sum(s.ios for s in streams if s.stream.access == "random")
    return sorted(whole_percents(sizes).items()), round(100 * rnd / ios)


def composite(chosen: Sequence[StreamCount], all_ios: int) -> Composite:
    """The one-job composite of `chosen` (streams with I/Os); `all_ios`: the capture's (step's) total I/Os."""
    chosen = [s for s in chosen if s.ios > 0]
    total = sum(s.ios for s in chosen)
    by_dir = {d: [s for s in chosen if s.stream.rw == d] for d in DIRECTIONS}
    reads = sum(s.ios for s in by_dir["read"])
    read_pct = round(100 * reads / total)
    splits, randoms = {}, {}
    for d in DIRECTIONS:
        if by_dir[d]:
            splits[d], randoms[d] = _direction(by_dir[d])
    for d, other in (("read", "write"), ("write", "read")):     # fio wants a split for a direction it never draws
        if d not in splits:
            splits[d], randoms[d] = splits[other], 100
    dir_pct = {"read": read_pct, "write": 100 - read_pct}
    made: dict[StreamKey, float] = {}
    for d in DIRECTIONS:
        for bs, p in splits[d]:
            for access, a in (("random", randoms[d]), ("sequential", 100 - randoms[d])):
                if dir_pct[d] and a:
                    made[StreamKey(bs, d, access)] = dir_pct[d] * p * a / 1e4
    requested = {s.stream: 100 * s.ios / total for s in chosen}
    streams = [AppliedStream(label=s.stream.label, bs=s.stream.bs, rw=s.stream.rw, access=s.stream.access,
                             capture_ios=s.ios, capture_pct=100 * s.ios / all_ios if all_ios else 0.0,
                             requested_pct=requested[s.stream], applied_pct=made.get(s.stream, 0.0))
               for s in chosen]
    keys = set(made) | set(requested)
    return Composite(
        read_pct=read_pct, read_split=splits["read"], write_split=splits["write"],
        random_pct=(randoms["read"], randoms["write"]), streams=streams,
        coverage_pct=100 * total / all_ios if all_ios else 0.0,
        exact=all(len({s.stream.access for s in v}) <= 1 for v in by_dir.values()),
        max_error_pp=max(abs(made.get(k, 0.0) - requested.get(k, 0.0)) for k in keys),
        unrequested=sorted(k.label for k in made if k not in requested))


def delivered_pct(cell: CellResult, comp: Composite) -> dict[str, float] | None:
    """Each stream's share of the I/Os `cell` did (%), from fio's per-direction I/O and byte counts: exact
    when every direction has at most two block sizes and one access (the counts then solve for the sizes);
    None when they cannot tell the streams apart."""
    total = cell.read.ios + cell.write.ios
    if not total:
        return None
    out: dict[str, float] = {}
    for d, split in (("read", comp.read_split), ("write", comp.write_split)):
        mine = [s for s in comp.streams if s.rw == d]
        stats = getattr(cell, d)
        if not mine:
            if stats.ios:
                return None
            continue
        if len({s.access for s in mine}) > 1 or len(split) > 2:
            return None
        counts = {split[0][0]: stats.ios}
        if len(split) == 2:
            (small, _), (large, _) = sorted(split)
            n_large = (stats.bytes - small * stats.ios) / (large - small)
            counts = {small: stats.ios - n_large, large: n_large}
        for s in mine:
            out[s.label] = 100 * counts.get(s.bs, 0.0) / total
    return out
