"""`ssdpts endurance` end to end: a loop device (no health data) and the simulated SSD (wear, WAF)."""

from __future__ import annotations

import pytest

from conftest import requires_devices, ssdpts
from ssdpts.engines.results import SHORT_PIECE
from ssdpts.health.projection import deltas
from ssdpts.pts import registry
from ssdpts.store import Store

TINY_POLL_S = 0.5      # tests/profiles/tiny.toml [tests.endurance] poll


def _run(*args):
    p = ssdpts("endurance", *args, "-q")
    return p.stdout.strip().splitlines()[-1]


def _summary(store, rid):
    """The endurance test's stored summary as its typed record (EnduranceSummary)."""
    return registry.get("endurance").decode(store.tests(rid)[0]["summary"])


def _polls(store, rid):
    return sorted((s["data"] for s in store.steps(rid, "endurance") if s["kind"] == "health-poll"),
                  key=lambda d: d.round)


@requires_devices
def test_endurance_on_loop_runs_without_health_data(loopdev, results, tiny):
    rid = _run(loopdev, "--destroy-data", "--profile", tiny, "--results", str(results))
    store = Store.in_dir(results)
    run = store.run(rid)
    assert run["status"] == "completed" and run["tests"] == ["endurance"]
    t = store.tests(rid)[0]
    s = _summary(store, rid)
    assert t["status"] == "completed" and s.health_available is False
    assert "virtual block device (loop)" in s.health_reason
    assert s.stop_reason == "duration reached" and s.elapsed_s >= 2.0 * 0.999
    assert s.fio_written_bytes > 0 and s.projection.available is False
    assert all(p.wear_percent is None and p.waf is None for p in s.series)
    rounds = store.rounds(rid, "endurance", "endurance")
    assert len(rounds) >= 3 and len({r.job_text for r in rounds}) == 1     # one continuous fio job
    assert "rw=randwrite" in rounds[0].job_text and "iodepth=6" in rounds[0].job_text
    polls = _polls(store, rid)
    assert len(polls) == len(rounds) + 1 and all(p.available is False for p in polls)
    assert not [r.round for r in rounds if "wear_percent" in r.tracking or "waf" in r.tracking]
    # fio wrote in the rounds; a round of no I/O is a whole slice (half a poll or more) in which fio completed
    # none (engines/fiodiff.py), never a sliver of time between two of its documents (under make test's load
    # one round read 0 IOPS; its length was not kept: this message now shows every round)
    since = [r.tracking["elapsed_s"] - (p.tracking["elapsed_s"] if p else 0.0) for p, r in zip([None, *rounds], rounds)]
    assert any(r.tracking["iops"] > 0 for r in rounds) and all(
        r.tracking["iops"] > 0 or s >= SHORT_PIECE * TINY_POLL_S for r, s in zip(rounds, since)), [
        (r.round, r.tracking) for r in rounds]
    notes = store.step(rid, "endurance", "notes")["notes"]
    assert any("health data not available" in n for n in notes)
    assert store.step(rid, "endurance", "health:before").available is False
    html = (results / "reports" / rid / "report.html").read_text()
    assert "Health data not available" in html and "report section failed" not in html
    # the options are merged into a profile that extends the chosen one, stored with the run; no file is written
    assert run["profile"]["tests"]["endurance"]["duration"] == "2s"
    assert run["profile"]["profile"]["source"] == "ssdpts endurance options"
    assert not (results / "profiles").exists()


def test_endurance_on_sim_projects_wear_and_waf_end_to_end(results, tiny):
    rid = _run("sim:client", "--profile", tiny, "--duration", "40s", "--poll", "2s", "--threads", "16",
               "--dwpd", "1", "--warranty-years", "5", "--results", str(results))
    store = Store.in_dir(results)
    s = _summary(store, rid)
    assert s.health_available and s.health_source == "sim" and s.rounds == 20 and s.polls == 21
    p = s.projection
    polls = _polls(store, rid)
    first, last = polls[0].raw["sim"], polls[-1].raw["sim"]
    dh = last["host_write_bytes"] - first["host_write_bytes"]
    dn = last["nand_write_bytes"] - first["nand_write_bytes"]
    assert p.waf == pytest.approx(dn / dh) and p.waf >= 1.0                # WAF from counters = NAND / host deltas
    assert p.host_written_bytes == dh == s.fio_written_bytes                # the drive saw what fio wrote
    for a, b, r in zip(polls, polls[1:], store.rounds(rid, "endurance", "endurance", with_cells=False)):
        ra, rb = a.raw["sim"], b.raw["sim"]
        assert r.tracking["waf"] == pytest.approx((rb["nand_write_bytes"] - ra["nand_write_bytes"]) /
                                                  (rb["host_write_bytes"] - ra["host_write_bytes"]))
        assert r.tracking["wear_percent"] == pytest.approx(rb["wear_percent"])
    assert [x.waf for x in s.series] == [r.tracking["waf"] for r in store.rounds(rid, "endurance", "endurance",
                                                                                 with_cells=False)]
    assert p.wear_end == pytest.approx(last["wear_percent"]) and p.wear_end > 0
    assert p.wear_per_day > 0 and p.days_to_eol == pytest.approx((100 - p.wear_end) / p.wear_per_day)
    assert p.tb_to_eol > 0 and p.wear_per_tb > 0
    cap = store.run(rid)["target"].size_bytes
    assert s.rated.dwpd == 1 and s.rated.warranty_years == 5 and s.rated.capacity_bytes == cap
    assert p.rated_tbw_tb == pytest.approx(cap * 365 * 5 / 1e12)
    assert p.tbw_used_percent == pytest.approx(100 * last["host_write_bytes"] / 1e12 / p.rated_tbw_tb)
    # the runner's before/after snapshots give the same per-test deltas
    d = deltas(store.step(rid, "endurance", "health:before"), store.step(rid, "endurance", "health:after"))
    assert d["host_written_bytes"] == dh and d["waf"] == pytest.approx(p.waf)
    html = (results / "reports" / rid / "report.html").read_text()
    for key in ("wear-vs-time", "wear-vs-tb", "waf-vs-time", "endurance-health"):
        assert key in html
    assert "days to end of life" in html


def test_endurance_resume_continues_polls_and_duration(results, tiny, monkeypatch):
    import ssdpts.health as health
    from ssdpts.runner import lifecycle
    from ssdpts.errors import SsdptsError
    from ssdpts.profiles import load_profile, with_test_keys

    over = with_test_keys(load_profile(tiny), "endurance", {"duration": "10s", "poll": "1s", "threads": 4},
                          name="tiny+endurance", extends=tiny, source="ssdpts endurance options")
    real, calls = health.snapshot, {"n": 0}

    def flaky(target):
        calls["n"] += 1
        if calls["n"] == 5:          # polls 1..4, then Ctrl-C in poll 5 (the baseline is the runner's health:before)
            raise KeyboardInterrupt
        return real(target)

    monkeypatch.setattr(health, "snapshot", flaky)
    with pytest.raises(SsdptsError) as e:
        lifecycle.start("sim:client", results_dir=results, profile_name=over, tests=["endurance"], size=None,
                     destroy_data=True, purge_method="none", quiet=True)
    assert e.value.exit_code == 130
    store = Store.in_dir(results)
    rid = store.runs()[-1]["id"]
    assert store.run(rid)["status"] == "interrupted"
    assert len(store.rounds(rid, "endurance", "endurance", with_cells=False)) == 4
    monkeypatch.setattr(health, "snapshot", real)
    lifecycle.resume(rid, results_dir=results, quiet=True)
    s = _summary(store, rid)
    rounds = store.rounds(rid, "endurance", "endurance", with_cells=False)
    assert [r.round for r in rounds] == list(range(1, len(rounds) + 1)) and len(rounds) == 10
    assert s.elapsed_s == pytest.approx(10, rel=0.01) and s.stop_reason == "duration reached"
    assert [x.round for x in s.series] == list(range(1, 11)) and s.polls == 11
    assert [p.round for p in _polls(store, rid)] == list(range(0, 11))
    el = [r.tracking["elapsed_s"] for r in rounds]
    assert all(b > a for a, b in zip(el, el[1:]))


def test_endurance_cli_refusals(results, tiny):
    p = ssdpts("endurance", "sim:client", "--dwpd", "1", "--results", str(results), check=False)
    assert p.returncode == 2 and "--warranty-years" in p.stderr
    p = ssdpts("endurance", "sim:client", "--workload", "nope", "--profile", tiny, "--results", str(results), check=False)
    assert p.returncode == 2 and "unknown --workload 'nope'" in p.stderr
    assert not list((results / "profiles").glob("*.toml"))                # nothing left behind
    p = ssdpts("endurance", "sim:client", "--duration", "soon", "--results", str(results), check=False)
    assert p.returncode == 2 and "bad --duration" in p.stderr
