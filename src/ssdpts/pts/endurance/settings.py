"""The profile keys of `endurance`: declared apart from how it runs, so that validating a profile
(plan, check, show) imports no round loop."""

from __future__ import annotations

from dataclasses import dataclass

from ...settings import BLOCK_SIZE, BOOL, DURATION, POSITIVE, SIZE, STR, Setting, TestSettings, declared_default, key


# built-in workloads: name -> (rw, block size, read %). "rnd4k-write" is seed 002's MX300 run.
WORKLOADS = {
    "rnd4k-write": ("randwrite", 4096, 0),
    "rnd8k-oltp": ("randrw", 8192, 65),
    "seq128k-write": ("write", 128 * 1024, 0),
    "rnd64k-write": ("randwrite", 64 * 1024, 0),
}


RW = ("read", "write", "randread", "randwrite", "randrw", "rw")


def _custom_ok(w) -> bool:
    read = w.get("read_pct")
    return (set(w) <= {"rw", "bs", "read_pct"} and w.get("rw") in RW and BLOCK_SIZE.check(w.get("bs", "4k"))
            and (read is None or (isinstance(read, int) and not isinstance(read, bool) and 0 <= read <= 100)))


CUSTOM_WORKLOADS = Setting(
    'a table of NAME = {rw = "randwrite", bs = "4k", read_pct = 0}',
    lambda v: isinstance(v, dict) and all(isinstance(w, dict) and _custom_ok(w) for w in v.values()),
    lambda v: {name: (w["rw"], BLOCK_SIZE.parse(w.get("bs", "4k")), w.get("read_pct")) for name, w in v.items()})


@dataclass(frozen=True)
class EnduranceSettings(TestSettings):
    max_rounds: int = declared_default(TestSettings, "max_rounds", 10**7)
    duration: float = key(DURATION, "72h", "the workload's length")
    poll: float = key(DURATION, "5m", "a health snapshot after every poll interval")
    workload: str = key(STR, "rnd4k-write", f"a built-in workload ({', '.join(WORKLOADS)}) or one of `workloads`")
    purge_first: bool = key(BOOL, False, "purge before the workload")
    rated_tbw: float | None = key(Setting("a positive number of TB (10^12 bytes)", POSITIVE.ok, float, "TB"), None,
                                  "the drive's rated endurance, for the projection")
    dwpd: float | None = key(Setting("a positive number of drive writes per day", POSITIVE.ok, float), None,
                             "the drive's rated drive writes per day, for the projection")
    warranty_years: float | None = key(Setting("a positive number of years", POSITIVE.ok, float, "years"), None,
                                       "the warranty the rating holds for")
    workloads: dict = key(CUSTOM_WORKLOADS, {}, "workloads of this profile: NAME -> (rw, block size, read %)")
    loop_size: int | None = key(SIZE, None, "bytes per loop for the loop-duration table (default: the capacity)")
