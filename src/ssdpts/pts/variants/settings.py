"""The profile keys of `variants`: declared apart from how it runs, so that validating a profile
(plan, check, show) imports no round loop."""

from __future__ import annotations

from dataclasses import dataclass

from ...settings import BLOCK_SIZE, BOOL, MULTIPLE, PCT, SIZE, THREADS, Setting, TestSettings, choice, key, list_of


ALL = ("random", "compress50", "zero", "dsync", "ws-small", "ws-large", "buffered")


RW = choice("read", "write", "randread", "randwrite", "randrw", "rw")
WORKLOADS = Setting('a list of [rw, block size] pairs like [["read", "128k"], ["randwrite", "4k"]]',
                    lambda v: isinstance(v, list) and len(v) > 0 and all(
                        isinstance(p, list) and len(p) == 2 and RW.check(p[0]) and BLOCK_SIZE.check(p[1]) for p in v),
                    lambda v: tuple((p[0], BLOCK_SIZE.parse(p[1])) for p in v))

CACHE_SIZE = Setting('"auto" or a size like "8g"', lambda v: v == "auto" or SIZE.check(v),
                     lambda v: None if v == "auto" else SIZE.parse(v), SIZE.unit)


@dataclass(frozen=True)
class VariantsSettings(TestSettings):
    block_size: int = key(BLOCK_SIZE, "4k", "block size of the workload")
    rw: str = key(RW, "randwrite", "fio rw of the workload")
    read_pct: float | None = key(PCT, None, "read share of a mixed workload (unset: fio's default)")
    precondition: bool = key(BOOL, True, "WIPC, then the workload itself, before the variants")
    precondition_multiple: float = key(MULTIPLE, 2.0, "the workload's own preconditioning, in times the active range")
    cache_size: int | None = key(CACHE_SIZE, "auto", "the cache the working-set variants are sized against "
                                 "(auto: this run's slc-cache estimate, or the simulator's SLC size)")
    variants: tuple[str, ...] = key(list_of(choice(*ALL)), list(ALL), "the variants, back to back in this order")
    # seed 002: SEQ read/write 128K and RND read/write 4K, each in every variant
    workloads: tuple[tuple[str, int], ...] | None = key(WORKLOADS, None, "[rw, block size] pairs every variant runs, "
                                                        "in this order (unset: the one rw / block_size workload)")
    # seed 002: "20 MB x 32 processes" = ws_small_size "640m", ws_small_threads 32; "a 10 GB file" = ws_large_size
    ws_small_size: int | None = key(SIZE, None, "working set of ws-small, all jobs together (unset: half the cache)")
    ws_large_size: int | None = key(SIZE, None, "working set of ws-large, all jobs together "
                                                "(unset: 4 x the cache, at most the drive)")
    ws_small_threads: int | None = key(THREADS, None, "jobs (processes) of ws-small (unset: threads)")
    ws_large_threads: int | None = key(THREADS, None, "jobs (processes) of ws-large (unset: threads)")
    # seed 002 ran its working sets after switching to direct=0: what it measured was the page cache
    ws_direct: bool = key(BOOL, True, "the working-set variants with direct I/O; false: through the host's page "
                                      "cache, as seed 002 ran them (labelled 'page cache, not the drive')")
