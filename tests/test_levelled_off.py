"""rw-over-time's time to level off (ssdpts's rule: within ±band % of the final level from then to the end)."""

from ssdpts.pts.rw_over_time.render import levelled_off
from ssdpts.pts.rw_over_time.summary import BlockSizeRun, RatePoint
from ssdpts.targets.purge import PurgeRecord


def run_of(mb_s: list[float], band: float = 10.0) -> BlockSizeRun:
    """One block size's run, one-minute intervals, final level = mean of the last 10 % (as run.py computes it)."""
    tail = mb_s[-max(1, len(mb_s) // 10):]
    return BlockSizeRun(block_size=4096, purge=PurgeRecord("sim-purge", True, "", 0.0), intervals=len(mb_s),
                        first_mb_s=mb_s[0], final_mb_s=sum(tail) / len(tail), min_mb_s=min(mb_s),
                        max_mb_s=max(mb_s), written_bytes=0, fills=0.0,
                        series=[RatePoint(60.0 * (i + 1), v, v * 244) for i, v in enumerate(mb_s)],
                        level_band_pct=band)


def test_time_to_level_off_is_the_end_of_the_last_interval_outside_the_band():
    # 400 MB/s for 10 min, a fall through 50 and 25, then 10 MB/s (±0.5) for 28 min: levelled off after 12 min
    b = run_of([400.0] * 10 + [50.0, 25.0] + [10.0, 10.5, 9.5, 10.0] * 7)
    assert b.final_mb_s == 10.0 and b.stable_after_s == 720.0 and levelled_off(b) == "12m00s"
    # a band of ±400 % (±40 MB/s) admits the 50 and 25 MB/s intervals, not the 400 before them
    assert run_of([400.0] * 10 + [50.0, 25.0] + [10.0] * 28, band=400).stable_after_s == 600.0
    # flat from the first interval: levelled off at once
    assert run_of([10.0] * 20).stable_after_s == 0.0


def test_not_reached_when_the_last_tenth_itself_leaves_the_band():
    # still falling at the end: the last 4 intervals (10 %) are not within ±10 % of their own mean
    b = run_of([100.0 - 2.4 * i for i in range(40)])
    assert b.stable_after_s is None and levelled_off(b) == "not reached"
