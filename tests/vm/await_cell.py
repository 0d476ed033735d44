"""Runs in the test-bed guest: returns once a measured cell's I/O is on DEV (tests/vm/test_vm_faults.py).

    python3 await_cell.py DEV [--next-after SECONDS] [--then COMMAND]
    python3 await_cell.py DEV --completion


A run's first writes are its preconditioning (sequential writes only) and its measured cells of the faults
profile are 65/35 random mixes: the first read the disk completes after its first write is the first
measured cell's, and rounds follow back to back (the next round's fio waits at a gate, let go at the cell's
end by the guest's clock: fio's cells are time-based), so a fault injected then lands inside a cell. With
--next-after, it then waits SECONDS (the cell's runtime plus a margin) and for the disk's next read: the
next cell's I/O, the first cell's round over (the test checks that against fio's own output time for the round).
With --then, it prints "injected at NS" (the guest's epoch ns, taken before COMMAND runs: rounds that ended
before it ended before the fault) and becomes `bash -c COMMAND`: under TCG beside busy runs, this process's
exit and a shell's `date` took seconds more, past the short cell.
With --completion, it only waits for the disk's next completed read or write: under a dm-delay table swapped in
while no request was held (a resume waits for those in flight), the first completion after the swap is a request
held the table's full delay.
Waiting for a stored round instead came too late: the rounds' I/O had ended, or nearly, before ssdpts had
stored the first one under TCG. Polled from this one process (the counters in /sys/block/DEV/stat, not
`inflight`: under TCG that reads 0 nearly always), not a shell loop that forks `cat` and `sleep` at every
look beside the runs. Standard library only (the host's python3).
"""

import argparse
import os
import sys
import time

POLL_S = 0.05      # a cell lasts 3 s; polling faster takes a TCG guest's CPU from the runs
COMPLETION_LIMIT_S = 60.0   # a run's next round starts within seconds even under TCG beside busy runs


def counters(stat: int) -> tuple[int, int]:
    """Reads and writes completed (fields 1 and 5 of the block layer's stat file, read anew at offset 0)."""
    fields = os.pread(stat, 4096, 0).split()
    return int(fields[0]), int(fields[4])


def next_read(stat: int) -> float:
    """Waits for the disk's next completed read; the monotonic time it was seen."""
    reads = counters(stat)[0]
    while counters(stat)[0] == reads:
        time.sleep(POLL_S)
    return time.monotonic()


def next_completion(stat: int, limit_s: float) -> bool:
    """Waits for the disk's next completed read or write, at most limit_s; whether one came."""
    done, until = sum(counters(stat)), time.monotonic() + limit_s
    while sum(counters(stat)) == done:
        if time.monotonic() > until:
            return False
        time.sleep(POLL_S)
    return True


def main(dev: str, next_after_s: float | None, then: str | None, completion: bool) -> None:
    # by device number: without udev, /dev/mapper/NAME is a node of its own, not a link to /dev/dm-N
    rdev = os.stat(dev).st_rdev
    stat = os.open(f"/sys/dev/block/{os.major(rdev)}:{os.minor(rdev)}/stat", os.O_RDONLY)
    if completion:
        came = next_completion(stat, COMPLETION_LIMIT_S)
        print(f"await_cell: {dev} {'completed a request' if came else f'completed none in {COMPLETION_LIMIT_S} s'}",
              file=sys.stderr, flush=True)
        return
    writes = counters(stat)[1]
    while counters(stat)[1] == writes:
        time.sleep(POLL_S)
    t0 = time.monotonic()
    first = next_read(stat)
    said = f"await_cell: {dev} read {first - t0:.1f} s after its first write"
    if next_after_s is not None:
        time.sleep(next_after_s)
        said += f"; the next cell's read {next_read(stat) - first:.1f} s after that"
    if then is not None:
        said += f"\ninjected at {time.time_ns()}"
    print(said, file=sys.stderr, flush=True)
    if then is not None:
        os.execvp("bash", ["bash", "-c", then])


if __name__ == "__main__":
    args = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    args.add_argument("dev")
    args.add_argument("--next-after", type=float, metavar="SECONDS",
                      help="after the first measured read, wait SECONDS and for the next read (the next cell)")
    args.add_argument("--then", metavar="COMMAND", help="then print the moment and run COMMAND (the fault) at once")
    args.add_argument("--completion", action="store_true",
                      help="only wait for the disk's next completed read or write (at most a minute)")
    a = args.parse_args()
    main(a.dev, a.next_after, a.then, a.completion)
