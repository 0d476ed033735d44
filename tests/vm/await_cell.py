"""Runs in the test-bed guest: returns once a measured cell's I/O is on DEV (tests/vm/test_vm_faults.py).

    python3 await_cell.py DEV

A run's first writes are its preconditioning (sequential writes only) and its measured cells of the faults
profile are 65/35 random mixes: the first read the disk completes after its first write is the first
measured cell's, and rounds follow back to back (the next round's fio waits at a gate), so a fault injected
then lands inside a cell. Waiting for a stored round instead came too late: the rounds' I/O had ended, or
nearly, before ssdpts had stored the first one under TCG. Polled from this one process (the counters in
/sys/block/DEV/stat, not `inflight`: under TCG that reads 0 nearly always), not a shell loop that forks
`cat` and `sleep` at every look beside the runs. Standard library only (the host's python3).
"""

import os
import sys
import time

POLL_S = 0.05      # a cell lasts 3 s; polling faster takes a TCG guest's CPU from the runs


def counters(stat: int) -> tuple[int, int]:
    """Reads and writes completed (fields 1 and 5 of the block layer's stat file, read anew at offset 0)."""
    fields = os.pread(stat, 4096, 0).split()
    return int(fields[0]), int(fields[4])


def main(dev: str) -> None:
    # by device number: without udev, /dev/mapper/NAME is a node of its own, not a link to /dev/dm-N
    rdev = os.stat(dev).st_rdev
    stat = os.open(f"/sys/dev/block/{os.major(rdev)}:{os.minor(rdev)}/stat", os.O_RDONLY)
    writes = counters(stat)[1]
    while counters(stat)[1] == writes:
        time.sleep(POLL_S)
    t0 = time.monotonic()
    reads = counters(stat)[0]
    while counters(stat)[0] == reads:
        time.sleep(POLL_S)
    print(f"await_cell: {dev} read {time.monotonic() - t0:.1f} s after its first write", file=sys.stderr)


if __name__ == "__main__":
    main(sys.argv[1])
