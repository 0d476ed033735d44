"""Seed 002's endurance view: attribute 173 (average erase count) per poll, minutes per increment, loop times."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conftest import ssdpts
from ssdpts.clock import SIMULATED
from ssdpts.health.parse import parse_smartctl
from ssdpts.health.projection import erase_increments
from ssdpts.health.record import HealthSnapshot
from ssdpts.pts import registry
from ssdpts.pts.endurance.render import text_lines
from ssdpts.pts.endurance.run import loops
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


def test_loops_are_interpolated_inside_the_polls():
    series = [EndurancePoll(round=i, elapsed_s=10.0 * i, iops=0, mib_s=0, lat_mean_us=0, fio_written_bytes=b)
              for i, b in enumerate([100, 250, 300, 500], start=1)]
    out = loops(series, 100)
    assert [lp.index for lp in out] == [1, 2, 3, 4, 5]
    assert [lp.end_s for lp in out] == pytest.approx([10.0, 10 + 10 * 100 / 150, 30.0, 35.0, 40.0])
    assert out[0].start_s == 0 and all(b.start_s == a.end_s for a, b in zip(out, out[1:]))
    assert out[3].mib_s == pytest.approx(100 / 5 / 2**20)


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
    assert f"{'erase count':22} {len(inc)} increments to {inc[-1].count}" in text_lines(s, SIMULATED)[-2]
