"""SLC cache as the reviewers report it (seed 000): its share of the capacity, and its size against the fill level."""

import pytest

from conftest import TINY, run_completed
from ssdpts.clock import SIMULATED
from ssdpts.errors import SsdptsError
from ssdpts.pts import registry
from ssdpts.pts.slc_cache.render import text


@pytest.fixture(scope="module")
def fill_run(tmp_path_factory):
    results = tmp_path_factory.mktemp("slc-fill")
    profile = results / "slc-fill.toml"
    profile.write_text(f'[profile]\nextends = "{TINY}"\n\n[tests.slc-cache]\nfill_levels = [0, 50, 80]\n'
                       'fill_idle = "60s"\n')
    rid, store = run_completed("sim:client", results, str(profile), "slc-cache")
    return rid, store, results


def _summary(store, rid):
    return registry.get("slc-cache").decode(store.tests(rid)[0]["summary"])


def test_cache_share_of_capacity_and_in_tlc_terms(fill_run):
    rid, store, _ = fill_run
    s = _summary(store, rid)
    # sim:client: 64 MiB static + 2245 MiB dynamic SLC on 16 GiB = 14.1 %; TLC (3 bits): 42 % ("about 0.4", seed 000)
    assert s.share_percent == pytest.approx(14.1, abs=0.3)
    assert s.bits_per_cell == 3 and s.bits_per_cell_source == "simulated drive's preset"
    assert s.native_share_percent == pytest.approx(3 * s.share_percent)


def test_cache_shrinks_as_the_drive_fills(fill_run):
    rid, store, results = fill_run
    s = _summary(store, rid)
    levels = s.fill_levels
    assert [f.fill_percent for f in levels] == [0, 50, 80]
    fob, half, most = levels
    assert fob.cache_bytes == s.cache_bytes and fob.idle_s == 0
    cap = s.capacity_bytes
    assert half.filled_bytes == cap // 2 and half.probe_bytes == cap - cap // 2 and half.idle_s == 60
    # dynamic SLC is at most 25 % of the free user space (the preset): it binds once the drive is half full
    assert all(f.drop_detected for f in levels)
    assert fob.cache_gib > half.cache_gib > most.cache_gib > 0
    assert half.cache_bytes <= 64 * 2**20 + 0.25 * cap / 2 * 1.02
    assert most.cache_bytes <= 64 * 2**20 + 0.25 * cap * 0.2 * 1.02
    assert all(f.share_percent == pytest.approx(f.cache_bytes / cap * 100) for f in levels)
    # the probe writes at SLC speed until the cache ends, then at the direct-to-TLC speed
    assert all(f.cache_mib_s > 2.5 * f.after_drop_mib_s for f in levels)
    # every level starts from its own purge; the plan lists them
    purges = [st["key"] for st in store.steps(rid, "slc-cache") if st["kind"] == "purge"]
    assert purges == ["purge:", "purge:fill=50%/1", "purge:fill=80%/1"]
    report = next((results / "reports").glob("*/plots/slc-cache-cache-vs-fill.png"))
    assert report.stat().st_size > 0
    csv = next((results / "reports").glob("*/tables/slc-cache-fill-levels.csv")).read_text().splitlines()
    assert len(csv) == 4 and csv[0].startswith("Fill (% of capacity)")


def test_show_prints_share_and_fill_levels(fill_run):
    rid, store, _ = fill_run
    s = _summary(store, rid)
    lines = "\n".join(text(s, SIMULATED))
    assert f"{s.share_percent:.1f} % of the 16.00 GiB capacity, {s.native_share_percent:.1f} % in 3-bit" in lines
    assert f"fill 80 %: SLC cache {s.fill_levels[2].cache_gib:.2f} GiB" in lines


def test_bad_fill_level_is_refused_with_its_bounds():
    with pytest.raises(SsdptsError, match=r"fill_levels = \[0, 100\] is invalid; .*each 0 to below 100"):
        registry.settings_for({"tests": {"slc-cache": {"fill_levels": [0, 100]}}}, ["slc-cache"]).of("slc-cache")
