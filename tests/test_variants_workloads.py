"""Seed 002's four workloads in every variant with chosen working sets, and `sync`/`direct` as common keys
(seed 004's O_DSYNC series): one short run on the simulated SSD, asserted through the typed summaries."""

from pathlib import Path

import pytest

from conftest import TINY, run_completed
from ssdpts.conformance import check
from ssdpts.errors import SsdptsError
from ssdpts.runresult.model import load_run
from ssdpts.pts import registry
from ssdpts.workload import Workload
from ssdpts.workload.fio import cell_options
from ssdpts.workload.spec import PAGE_CACHE_LABEL

pytestmark = pytest.mark.no_end_report    # reads no end-of-run report (tests/conftest.py)

PROFILE = """
[profile]
extends = "{tiny}"
tests = ["variants"]

[defaults]
sync = "dsync"

[tests.variants]
cell_runtime = "200ms"
precondition = false
workloads = [["read", "128k"], ["randwrite", "4k"]]
variants = ["random", "buffered", "ws-small", "ws-large"]
ws_small_size = "20m"
ws_small_threads = 4
ws_large_size = "1g"
"""


@pytest.fixture(scope="module")
def dsync_run(tmp_path_factory):
    d = tmp_path_factory.mktemp("variants-workloads")
    profile = d / "p.toml"
    profile.write_text(PROFILE.format(tiny=Path(TINY).resolve()))
    return run_completed("sim:client", d / "results", str(profile), "variants,iops")


def test_every_variant_runs_every_workload_with_the_chosen_working_sets(dsync_run):
    rid, store = dsync_run
    s = registry.get("variants").decode(next(t["summary"] for t in store.tests(rid) if t["name"] == "variants"))
    assert [(w.rw, w.block_size) for w in s.workloads] == [("read", 131072), ("randwrite", 4096)]
    for w in s.workloads:
        assert [v.variant for v in s.results_of(w)] == ["random", "buffered", "ws-small", "ws-large"]
        assert s.variant("random", w.rw, w.block_size).vs_baseline == 1.0
        small = s.variant("ws-small", w.rw, w.block_size)
        assert small.working_set_bytes == 20 * 2**20 and small.threads == 4     # seed 002: "20 MB x 32 processes"
        assert s.variant("ws-large", w.rw, w.block_size).working_set_bytes == 2**30
        assert s.variant("ws-large", w.rw, w.block_size).threads == 1         # tiny: threads = 1
        buffered = s.variant("buffered", w.rw, w.block_size)
        assert buffered.label == PAGE_CACHE_LABEL and buffered.direct is False
    # the read cells are 128 KiB, the write cells 4 KiB; [defaults] sync = "dsync" reached every cell
    read, write = s.variant("random", "read", 131072), s.variant("random", "randwrite", 4096)
    assert read.mb_s == pytest.approx(read.iops * 131072 / 1e6, rel=1e-6)
    assert write.mb_s == pytest.approx(write.iops * 4096 / 1e6, rel=1e-6)
    assert all(v.sync for v in s.variants)
    assert s.variant("random") is read                                   # no workload named: the first


def test_sync_is_a_common_key_and_a_recorded_deviation_for_pts_tests(dsync_run):
    rid, store = dsync_run
    assert {w["sync"] for w in store.first_round_workloads(rid, "iops")} == {"dsync"}
    verdict = check(load_run(store, rid), store)
    io_mode = [(f.test, f.deviation.evidence) for f in verdict.findings if f.deviation.rule == "io-mode"]
    assert io_mode == [("iops", "sync = dsync (profile p): every write waited for O_DSYNC")]   # not the study


def test_sync_modes_reach_fio_and_old_records_still_read():
    w = Workload(name="w", rw="randwrite", bs=4096, runtime_s=1.0)

    def options(**changes) -> dict[str, str]:
        return cell_options(w.with_(**changes), 2**30, 4096)

    assert "sync" not in options() and options()["direct"] == "1"
    assert options(sync="dsync")["sync"] == "dsync"
    assert options(sync="sync")["sync"] == "1"                  # O_SYNC, as every fio release reads it
    assert options(direct=False)["direct"] == "0"
    assert Workload.from_dict({**w.to_dict(), "sync": True}).sync == "dsync"    # stored when sync was a bool
    assert Workload.from_dict({**w.to_dict(), "sync": False}).sync == "none"
    with pytest.raises(SsdptsError, match=r"tests.iops.sync = 'osync' is invalid; expected one of none, dsync"):
        registry.settings_for({"defaults": {"sync": "osync"}}, ["iops"]).of("iops")
    with pytest.raises(SsdptsError, match=r"tests.variants.workloads = \[\['read'\]\] is invalid"):
        registry.settings_for({"tests": {"variants": {"workloads": [["read"]]}}}, ["variants"]).of("variants")


def test_a_summary_stored_before_workload_lists_still_decodes(dsync_run):
    rid, store = dsync_run
    spec = registry.get("variants")
    stored = next(t["summary"] for t in store.tests(rid) if t["name"] == "variants")
    old = {k: v for k, v in stored.items() if k != "workloads"}
    old["variants"] = [{k: v for k, v in r.items() if k not in ("rw", "block_size", "threads")}
                       for r in stored["variants"][:4]]
    s = spec.decode(old)
    assert [(w.rw, w.block_size) for w in s.all_workloads] == [("read", 131072)]
    assert [v.variant for v in s.results_of(s.workload)] == ["random", "buffered", "ws-small", "ws-large"]
    assert s.variant("buffered").label == PAGE_CACHE_LABEL


def test_a_workload_stored_with_sync_as_a_bool_still_decodes():
    """Runs stored before `sync` had modes kept it as a bool; summaries decode their cells' workloads through the
    generic record decoder, not Workload.from_dict, so the old value is mapped where every decoder ends."""
    from ssdpts.results import CellWindow
    from ssdpts.records import from_data
    from ssdpts.workload import Workload

    w = Workload("v_dsync", "randwrite", 4096, 0, runtime_s=1.0).to_dict()
    for old, new in ((True, "dsync"), (False, "none")):
        assert Workload.from_dict({**w, "sync": old}).sync == new
        window = from_data(CellWindow, {"workload": {**w, "sync": old}, "iops": 1.0, "read_iops": 0.0,
                                        "write_iops": 1.0, "read_mib_s": 0.0, "write_mib_s": 0.0, "usr_cpu": 0.0,
                                        "sys_cpu": 0.0, "lat_mean_us": 1.0, "lat_max_us": 1.0})
        assert window.workload.sync == new
