"""The simulated drive's ground truth, as typed records: what ssdpts's figures are checked against.

Everything here is read from the model's own state (`SimDrive.counters()`, `pools()`), never derived from
the fio-shaped results the tests compute their figures from:

* `DriveTruth`: NAND and host bytes (true WAF), GC page moves, the SLC cache's capacity and fill, the free
  pool, idle time and the clock, at one moment;
* `truth(drive)` reads it; `waf_between(a, b)` is the true WAF of what happened between two readings;
* `sample_job(drive, job, step_s)` runs a job in slices and reads the truth after each (the SLC cache's
  capacity and fill, the free pool, over time).
"""

from __future__ import annotations

from dataclasses import dataclass

PAGE = 4096


@dataclass(frozen=True)
class DriveTruth:
    clock_s: float                  # simulated time since power-on
    host_write_bytes: int           # lifetime
    host_read_bytes: int
    nand_write_bytes: int           # host pages and GC moves programmed to NAND (lifetime)
    gc_moved_bytes: int             # valid data GC (and SLC folding) copied (lifetime)
    erase_count_total: int          # per-die block erases (lifetime: a purge keeps wear)
    slc_capacity_bytes: int         # the SLC cache's current capacity (static + dynamic allowed now)
    slc_used_bytes: int             # data in SLC-mode blocks now
    free_blocks: int                # free superblocks, static SLC included
    free_native_blocks: int         # free superblocks of the native pool: the GC's free pool
    total_blocks: int
    live_bytes: int                 # mapped user data
    idle_s: float                   # time the host left the drive idle (lifetime)

    @property
    def waf(self) -> float | None:
        """Lifetime write amplification: NAND bytes / host bytes."""
        return self.nand_write_bytes / self.host_write_bytes if self.host_write_bytes else None


def truth(drive) -> DriveTruth:
    """Read the simulated drive's state now (a `ssdpts._sim.SimDrive`)."""
    c = drive.counters()
    return DriveTruth(
        clock_s=c["clock_ns"] / 1e9, host_write_bytes=int(c["host_write_bytes"]),
        host_read_bytes=int(c["host_read_bytes"]), nand_write_bytes=int(c["nand_write_bytes"]),
        gc_moved_bytes=int(c["gc_moved_bytes"]), erase_count_total=int(c["erase_count_total"]),
        slc_capacity_bytes=int(c["slc_capacity_bytes"]), slc_used_bytes=int(c["slc_used_bytes"]),
        free_blocks=int(c["free_blocks"]), free_native_blocks=int(c["free_native_blocks"]),
        total_blocks=int(c["total_blocks"]), live_bytes=int(c["live_bytes"]), idle_s=c["idle_ns"] / 1e9)


def waf_between(before: DriveTruth, after: DriveTruth) -> float | None:
    """True write amplification of what happened between two readings (None: no host writes)."""
    host = after.host_write_bytes - before.host_write_bytes
    return (after.nand_write_bytes - before.nand_write_bytes) / host if host > 0 else None


SEQUENTIAL = ("read", "write", "rw")


def sample_job(drive, job: dict, step_s: float) -> list[DriveTruth]:
    """Run `job` (a `SimDrive.run_job` dict with `runtime_ns`, `offset` and `size`) in slices of `step_s`
    simulated seconds, back to back, and read the truth after each: the drive's state over time (the SLC cache
    filling, the free pool falling). A sequential job's next slice starts where the last one stopped."""
    total_ns = int(job["runtime_ns"])
    step_ns = max(1, int(step_s * 1e9))
    job = dict(job)
    out, done = [], 0
    while done < total_ns:
        ns = min(step_ns, total_ns - done)
        # a sequential slice stops at the range's end (a timed job would wrap to its start)
        res = drive.run_job(dict(job, runtime_ns=ns, **({"io_size": job["size"]} if job["rw"] in SEQUENTIAL else {})))
        done += ns
        out.append(truth(drive))
        if job["rw"] in SEQUENTIAL:
            moved = res["read"]["io_bytes"] + res["write"]["io_bytes"]
            if moved >= job["size"]:
                break
            job["offset"] += moved
            job["size"] -= moved
    return out
