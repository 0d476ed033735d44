"""Every absolute time the engine uses, in one place (standard library only: the helpers import it).

A real profile has one-minute cells, hour-long rounds and fio processes that live for hours; `quick`
compresses all of that. A constant below that a round or a process can outlive is a bug waiting for a
real run (one such bug, a hang watch that miscounted, killed every round longer than 70 s), so each one
here names the test in which a round or a process outlives it (the test scales the constant down, never
the logic). docs/testing.md, "Time constants", has the same table for readers.

Timeouts: exceeding one ends or changes something.
  HANG_GRACE_S        a time-based cell not ended this long after its due end is hung (and one not started its
                      runtime plus this long after its turn came): its fio is killed and the round run again,
                      at most STALL_RETRIES times
                        tests/test_gatekeeper.py (end reports after the predicted opening, grace 0.5 s),
                        tests/test_stall.py (3 s cells, grace 1 s; a stopped fio), tests/test_real_shape.py
                        (2-minute rounds of 1-minute cells at the real 60 s)
  FIO_EXIT_GRACE_S    a fio process whose jobs have all reported their end (exec_postrun) must exit this long
                      after the last report; past it, it is stuck (in its teardown) and killed like a stall
                        tests/test_stall.py (a job's hook that never returns after its end report, grace 2 s)
  KILL_WAIT_S         a killed fio that has not exited this long after SIGKILL is stuck in the kernel: the run
                      stops, naming the evidence file            tests/test_stall.py (killed fio exits at once)
  IDLE_REPORT_WAIT_S  how long a round's result waits for the block sampler's report of a transition before
                      storing "not measured"                     tests/test_device_idle.py (sampler stopped)
  KEEPER_EXIT_WAIT_S  how long the gatekeeper may take to exit at a session's end before it is killed
                                                                 tests/test_gatekeeper.py (keeper stopped)
  READER_JOIN_S       at a session's end, how long to wait for the thread reading an exited helper's output
                                                                 tests/test_gatekeeper.py (keeper stopped)
  PURGE_TIMEOUT_S     one purge command, an NVMe sanitize's progress wait, a remote TRIM
                                                                 tests/test_timing.py (command outlives it)
  TOOL_TIMEOUT_S      one call of fio --version, hdparm -I, blkdiscard probes or a remote probe (seconds)
  STORE_LOCK_WAIT_S   how long a write to the results database waits for another program's write lock before
                      the command stops naming the holder (reads do not wait: WAL)
                                                                 tests/test_store_medium.py (lock held until it answers)
  VANISH_SETTLE_S     after fio failed, how long a drive the kernel is removing (capacity 0, no longer opens) is
                      given to go before it is recorded as going   tests/test_drive_faults.py (node removed)

Periods: how often something is looked at; nothing ends when they pass.
  ACK_POLL_S          the engine waits for the gatekeeper's acknowledgement as long as the keeper lives,
                      checking this often that it does           tests/test_gatekeeper.py (keeper stopped)
  SET_UP_POLL_S       a waiting round checks this often whether its process ended before every job reached
                      its gate (set-up priority hand-back)       tests/test_device_idle.py (waits 6 s)
  LOOK_BEFORE_NS, LOOK_AFTER_NS   the block samplers look closely from this long before a foreseen
                      transition to this long after              tests/test_real_shape.py (1-minute cells)
  SAMPLE_PERIOD_NS, SLOW_SAMPLE_PERIOD_NS, MIN_IDLE_RUN_NS, HEARTBEAT_NS   the block sampler's periods
                                                                 tests/test_device_idle.py
  IDLE_RESOLUTION_SHARE   outside a close-look window, a quiet device is looked at every this share of its idle
                      so far (from SAMPLE_PERIOD_NS up to SLOW_SAMPLE_PERIOD_NS)   tests/test_device_idle.py
                      (a 150 ms forced idle, the transitions of 4-cell rounds), tests/test_real_shape.py
  HELD_MARGIN_NS      an idle run counts as the device holding requests (latency, not idle) only where the
                      requests that completed first after it were submitted this long before it ended (the
                      block layer counts latency in jiffies, 10 ms at HZ=100, and ms), and a transition's idle
                      begins no earlier than this long before the cell ahead of it was due to end
                        tests/test_device_idle.py (recorded counters: a 300 ms hold, a 300 ms idle)
  HELD_LOOK_NS        how long after an idle run the sampler looks at completions for the earliest submission
                      (until the device drains, at most this)    tests/test_device_idle.py (recorded counters)
  TRACE_POLL_S        run --trace-stimulus reads the block completions tracefs holds this often (its buffer
                      holds seconds of them)                     tests/test_trace_stimulus.py
  CHECKPOINT_EVERY_S  the simulated drive's state is written with a committed round at most this often
                                                                 tests/test_metadata.py (0 s and 1e9 s)
  SLC_INTERVAL_MIN_S, SLC_INTERVAL_MAX_S   the bounds of slc-cache's automatic sample interval (the time to
                      write a small share of the capacity at a fast link's speed; slc_cache/resolution.py)
                                                                 tests/oracle/test_slc_cache.py

Bounds used to judge stored results (nothing is stopped by them).
  LAT_MEAN_BOUND_S    a cell whose mean latency exceeds this is `implausible-cell` (src/ssdpts/plausibility.py
                      says why this value)                       tests/test_plausibility.py (a throttled device)
"""

from __future__ import annotations

HANG_GRACE_S = 60.0          # fio ends a time-based cell within a second or so of its runtime
FIO_EXIT_GRACE_S = 60.0      # fio writes its report and exits in well under a second once its jobs end
STALL_RETRIES = 2            # re-runs of a round whose fio stalled, before the run stops
KILL_WAIT_S = 30.0
IDLE_REPORT_WAIT_S = 2.0     # the sampler reports every 50 ms (HEARTBEAT_NS)
KEEPER_EXIT_WAIT_S = 5.0
READER_JOIN_S = 2.0          # the helper has exited by then: its output ends at once
PURGE_TIMEOUT_S = 24 * 3600.0
TOOL_TIMEOUT_S = 60.0
STORE_LOCK_WAIT_S = 5.0      # ssdpts's own transactions last milliseconds
VANISH_SETTLE_S = 3.0        # QEMU's PCI hot-unplug of an NVMe drive completes in under a second

ACK_POLL_S = 1.0
SET_UP_POLL_S = 0.25
LOOK_BEFORE_NS = 20_000_000
LOOK_AFTER_NS = 20_000_000
SAMPLE_PERIOD_NS = 100_000          # while the device is quiet or a transition is near
SLOW_SAMPLE_PERIOD_NS = 2_000_000   # while it is busy and no transition is near (window.py says why)
# An unforeseen end of an idle run is then seen at most 5 % of the run late (idle runs under 2 ms: 0.1 ms), and a
# long quiet stretch costs 500 wake-ups a second, not 10,000 (a fifth of a core on this host; all of a TCG guest's)
IDLE_RESOLUTION_SHARE = 0.05
MIN_IDLE_RUN_NS = 200_000           # shorter idle runs are not reported (two periods)
HEARTBEAT_NS = 50_000_000
HELD_MARGIN_NS = 10_000_000
HELD_LOOK_NS = 100_000_000          # a released hold completes in one burst (QEMU test bed: within 10 ms)
TRACE_POLL_S = 0.1                  # 8 MiB a CPU (capture/tracefs.py BUFFER_KB): ~150,000 events
CHECKPOINT_EVERY_S = 5.0            # a snapshot of a large simulated drive is tens of MB
SLC_INTERVAL_MIN_S = 0.01           # finer status documents cost fio more than they tell
SLC_INTERVAL_MAX_S = 1.0            # the seed's sampling (MiB/s per second)

# the kernel gives up on one I/O after 30 s (block-layer, nvme io_timeout and sd defaults); 1,024 outstanding 4 KiB
# I/Os (TC32/QD32, the deepest cell a profile asks) wait this long only below 1 MB/s (plausibility.py)
LAT_MEAN_BOUND_S = 5.0
