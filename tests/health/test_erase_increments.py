"""Seed 002's endurance view: attribute 173 (average erase count) per poll, minutes per increment, loop times."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from conftest import ssdpts
from ssdpts.clock import SIMULATED
from ssdpts.health.parse import parse_smartctl
from ssdpts.health.projection import erase_increments, minutes_per_increment
from ssdpts.health.record import HealthSnapshot
from ssdpts.pts import registry
from ssdpts.pts.endurance.render import text_lines
from ssdpts.pts.endurance.run import Written, loops
from ssdpts.pts.endurance.summary import EndurancePoll
from ssdpts.store import Store

FIX = Path(__file__).parent / "fixtures"
# seed 002, `cat watch_ID173 | uniq -c`: polls (every 5 min, by cron) that showed 173 = 68, 69, ..., 85
SEED_002_POLLS_PER_VALUE = [16, 15, 14, 15, 15, 14, 21, 19, 19, 19, 15, 19, 20, 19, 19, 16, 13, 15]


def _seed_002_polls() -> list[HealthSnapshot]:
    """The seed's cron polls as health records: the MX300 fixture with 173 set to each polled value."""
    base = parse_smartctl(json.loads((FIX / "ata-micron-mx300-after.json").read_text()))
    assert base["erase_count_avg"] == 49            # the fixture's own 173 (seed 002 after 72 h)
    polls, t = [], 0.0
    for k, n in enumerate(SEED_002_POLLS_PER_VALUE):
        for _ in range(n):
            polls.append(HealthSnapshot.from_dict(dict(base, erase_count_avg=68 + k, t=t,
                                                       host_written_bytes=int(t * 1e6))))
            t += 300.0
    return polls


def test_minutes_per_increment_as_seed_002_counted_them():
    inc = erase_increments(_seed_002_polls())
    assert [i.count for i in inc] == list(range(69, 86))
    assert inc[0].minutes is None and inc[0].polls is None          # the first value's start is not known
    # each later increment: the polls that showed the previous value x 5 min (the seed's "15-20 polls")
    assert [i.polls for i in inc[1:]] == SEED_002_POLLS_PER_VALUE[1:-1]
    assert [i.minutes for i in inc[1:]] == [n * 5.0 for n in SEED_002_POLLS_PER_VALUE[1:-1]]
    assert inc[1].host_written_tb == pytest.approx((16 + 15) * 300 * 1e6 / 1e12)
    assert all(i.steps == 1 for i in inc)


def test_sparse_polls_split_a_jump_and_unknown_counts_are_skipped():
    pts = [{"available": True, "t": 0, "erase_count_avg": 1.5}, {"available": True, "t": 600, "erase_count_avg": 2.1},
           {"available": True, "t": 900, "erase_count_avg": None}, {"available": False, "t": 1000},
           {"available": True, "t": 1800, "erase_count_avg": 4.0}]
    inc = erase_increments([HealthSnapshot.from_dict(p) for p in pts])
    assert [(i.count, i.steps, i.polls, i.minutes) for i in inc] == [(2, 1, None, None), (4, 2, 1, 10.0)]
    assert inc[0].host_written_tb is None
    assert erase_increments([HealthSnapshot.from_dict({"available": False, "reason": "loop"})]) == []


def test_minutes_per_increment_over_the_seeds_polls():
    """Seed 002: "左の値 x 5分がカウントアップに要した時間" (the left value x 5 min is the time one count-up took):
    from its first increment seen (to 69) to its last (to 85), the polls that showed 69..84, x 5 min, per count."""
    pts = _seed_002_polls()
    minutes, basis = minutes_per_increment(pts, erase_increments(pts))
    assert minutes == sum(SEED_002_POLLS_PER_VALUE[1:-1]) * 5 / (85 - 69)
    assert 75 <= minutes <= 100 and "to 69 to the one to 85" in basis     # the seed's "15 (75 min) to 20 (100 min)"


def test_a_fractional_counter_gives_its_rate_with_one_increment_or_none():
    pts = [HealthSnapshot.from_dict({"available": True, "t": t, "erase_count_avg": v})
           for t, v in ((0, 4.5), (60, 4.8), (120, 5.1))]
    minutes, basis = minutes_per_increment(pts, erase_increments(pts))
    assert minutes == pytest.approx(2 / 0.6) and "4.500 -> 5.100" in basis
    whole = [HealthSnapshot.from_dict({"available": True, "t": t, "erase_count_avg": v}) for t, v in ((0, 4), (60, 5))]
    minutes, basis = minutes_per_increment(whole, erase_increments(whole))
    assert minutes is None and "two are needed" in basis
    flat = [HealthSnapshot.from_dict({"available": True, "t": t, "erase_count_avg": 0.0}) for t in (0, 90)]
    assert minutes_per_increment(flat, []) == (None, "the average erase count stayed at 0 over 1.5 min")


def test_loop_ends_are_the_rows_that_reached_them():
    """Each loop ends with the first row whose cumulative bytes reach its bound (never a time between rows); two
    loops ending in one row: the second's duration is not known, not 0 s or a share of the row."""
    rows = [Written(end_s=t, total_bytes=b, row_s=1.0) for t, b in ((1, 60), (2, 120), (3, 150), (4, 420), (5, 500))]
    out = loops(rows, 100)
    assert [(lp.index, lp.start_s, lp.end_s, lp.duration_s) for lp in out] == [
        (1, 0, 2, 2), (2, 2, 4, 2), (3, 4, 4, None), (4, 4, 4, None), (5, 4, 5, 1)]
    assert out[0].mib_s == 100 / 2 / 2**20 and out[2].mib_s is None and all(lp.resolution_s == 1.0 for lp in out)


def test_endurance_loop_ends_are_the_simulators_clock(tmp_path):
    """Loops of 256 MiB on the 1 GiB simulated drive, several per 3 s poll at its fresh speed: every loop ends at
    the end of a row of the simulator's own interval log (the rounds' raw output, rows of 30 ms) at which the
    bytes the simulator counted reach the loop's bound; so the loops of one poll differ (they were equal shares
    of the poll when interpolated from its bandwidth)."""
    from conftest import HERE, tiny_with

    profile = tiny_with(tmp_path / "loops.toml", '[tests.endurance]\nloop_size = "256m"\n')
    p = ssdpts("endurance", f"sim:{HERE / 'profiles' / 'sim-small.toml'}", "--profile", profile,
               "--duration", "9s", "--poll", "3s", "--threads", "16", "--results", str(tmp_path / "results"), "-q",
               env={**os.environ, "SSDPTS_REPORT": "0"})
    rid = p.stdout.strip().splitlines()[-1]
    store = Store.in_dir(tmp_path / "results")
    s = registry.get("endurance").decode(store.tests(rid)[0]["summary"])
    truth, t0, total = [], 0.0, 0            # (row end, bytes so far) from the simulator's own log
    for r in store.rounds(rid, "endurance", "endurance"):
        job = json.loads(store.raw_output(r.id))
        for row in job["intervals"]:
            total += row["write_bytes"]
            truth.append((t0 + row["t_ns"] / 1e9, total))
        t0 = r.tracking["elapsed_s"]
    assert len(s.loops) == total // 2**28 >= 4
    for lp in s.loops:
        end, _ = next((t, b) for t, b in truth if b >= lp.index * 2**28)
        assert lp.end_s == pytest.approx(end, abs=1e-3) and lp.resolution_s == pytest.approx(0.03)
    durations = [lp.duration_s for lp in s.loops]
    assert all(d is not None and d > 0 for d in durations) and len(set(durations)) == len(durations)
    assert "simulator's interval log" in s.loops_timed_by
    assert "ends timed by the simulator's interval log inside each poll, to 0.03 simulated s" in "\n".join(text_lines(s, SIMULATED))


def test_endurance_on_sim_sata_tlc_plots_erase_count_and_loop_times(tmp_path):
    p = ssdpts("endurance", "sim:sata-tlc", "--profile", "quick", "--duration", "420s", "--poll", "20s",
               "--results", str(tmp_path), "-q")
    rid = p.stdout.strip().splitlines()[-1]
    store = Store.in_dir(tmp_path)
    s = registry.get("endurance").decode(store.tests(rid)[0]["summary"])
    cap = store.run(rid)["target"].size_bytes
    # the simulated drive's average erase count, every poll, rising once its free blocks are used up
    counts = [x.erase_count_avg for x in s.series]
    assert all(c is not None for c in counts) and counts == sorted(counts) and counts[-1] > 2
    inc = s.erase_increments
    assert [i.count for i in inc] == list(range(1, int(counts[-1]) + 1))
    assert all(i.minutes > 0 and i.polls >= 1 for i in inc[1:])
    assert inc[-1].minutes == pytest.approx(inc[-1].polls * 20 / 60, rel=1e-3)
    # loops of one capacity each: the first (FOB) is the fastest, the time per loop grows as GC sets in
    assert s.loop_bytes == cap and len(s.loops) == s.fio_written_bytes // cap >= 2
    assert s.loops[0].duration_s < s.loops[-1].duration_s
    assert s.loops[-1].mib_s == pytest.approx(cap / s.loops[-1].duration_s / 2**20)
    report = tmp_path / "reports" / rid
    for chart in ("erase-count-vs-time", "erase-count-vs-tb", "loop-durations", "mib-vs-time"):
        assert (report / "plots" / f"endurance-{chart}.png").exists()
    rows = (report / "tables" / "endurance-erase-increments.csv").read_text().splitlines()
    assert len(rows) == len(inc) + 1 and rows[1].endswith("first seen (start not known)")
    lines = text_lines(s, SIMULATED)
    assert f"{'erase count':22} {len(inc)} increments to {inc[-1].count}" in lines
    # seed 002's figure, its way: the time from the first whole increment seen to the last, per count
    per = (inc[-1].t_s - inc[0].t_s) / 60 / (inc[-1].count - inc[0].count)
    assert s.minutes_per_erase_increment == pytest.approx(per) and f"{per:,.3g} simulated min per increment" in "\n".join(lines)
