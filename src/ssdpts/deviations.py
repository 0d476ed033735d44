"""Deviations from the profile's spec, as typed records stored with the run (per test, or run-wide).

Whatever makes a result non-conformant is recorded where it happens (a TRIM instead of a purge, the
write cache left in the wrong state, ...), with its evidence and the rule's source, so `ssdpts check`
and the report read one list instead of re-deriving it.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

RUN_WIDE = ""   # the test name under which run-wide deviations are stored


@dataclass(frozen=True)
class Deviation:
    rule: str        # short, stable id: "purge-not-snia", "write-cache", ...
    evidence: str    # what was observed, in words a reader can check
    source: str      # the spec section / implementation the rule comes from (docs/conformance.md)

    def to_dict(self) -> dict:
        return asdict(self)

    @classmethod
    def from_dict(cls, d: dict) -> "Deviation":
        return cls(rule=str(d["rule"]), evidence=str(d["evidence"]), source=str(d["source"]))


PURGE_SOURCE = ("PTS 2.0.2 step 1 'Purge the device' (py-sss-pts run.py); SNIA ptstest page: PURGE via SECURITY "
                "ERASE, FORMAT UNIT or equivalent; TRIM/zero-fill are not purges")
WRITE_CACHE_SOURCE = "PTS 2.0.2 2.1.1/3.1.1 (py-sss-pts run.py): PTS-E WCD, PTS-C WCE"
# LBA coverage (docs/conformance.md "coverage"): the cells' I/O walks the whole active range
COVERAGE_SOURCE = ("PTS 2.0.2: test I/O over the ActiveRange (SEQ walks it, RND spreads uniformly over it); "
                   "ssdpts bound: a cell touches at least 90 % of min(transferred, range) (SEQ) or of "
                   "1 - e^-passes of the range (uniform RND); docs/conformance.md 'coverage'")
STALL_SOURCE = ("ssdpts engine (docs/testing.md, 'Stalls'): a time-based cell not ended HANG_GRACE_S after its due "
                "end, or a fio not exited FIO_EXIT_GRACE_S after its jobs ended, is killed and its round run again; "
                "the device saw the stalled attempt's I/O before the re-run")

# Stimulus (issue 26, item 1; docs/conformance.md, 'Stimulus at the device')
STIMULUS_SOURCE = ("ssdpts stimulus check (docs/conformance.md, 'Stimulus at the device'): each cell's I/O as the block "
                   "layer (/sys/block/DEV/stat) or the simulator counted it, against the block size, read/write mix "
                   "and threads × iodepth the cell asked for")

# Resume (docs/conformance.md, 'Resume'): the pause across a stop is judged by the idle-gap rule; this one is
# for a drive written behind the run's back while it was stopped
RESUME_WRITTEN_SOURCE = ("PTS 2.0.2: Purge -> WIPC -> WDPC rounds with no pause; the rounds after a resume measure the "
                         "preconditioned state only if nothing wrote to the drive between the stop and the resume "
                         "(ssdpts reads the block layer's write and discard counters at both)")

# Figures that cannot be trusted (src/ssdpts/plausibility.py; docs/conformance.md "Plausibility"): thresholds there
IMPLAUSIBLE_CELL_SOURCE = ("ssdpts plausibility rule (docs/conformance.md, 'Plausibility: implausible-cell'): a cell "
                           "far below the other cells of the same workload in its test, or with a mean latency "
                           "beyond the stated bound, is not a measurement of the drive's behaviour")
ABOVE_INTERFACE_SOURCE = ("ssdpts plausibility rule (docs/conformance.md, 'Plausibility: above-interface'): no drive "
                          "moves data faster than its link (PCIe GT/s × lanes after encoding, SATA 6 Gb/s = 600 MB/s) "
                          "or a simulated drive faster than its preset's link and controller")
HOST_LIMITED_SOURCE = ("ssdpts plausibility rule (docs/conformance.md, 'Plausibility: host-limited'): a cell whose "
                       "host CPU was saturated while the device queue was not full measured the host, not the drive")
