"""Purge-method study (seed 001: "we have some doubts" that wipe utilities restore FOB) on the simulated SSD."""

import pytest

from conftest import TINY, run_completed
from ssdpts.clock import SIMULATED
from ssdpts.errors import SsdptsError
from ssdpts.pts import registry
from ssdpts.pts.purge_study.render import text
from ssdpts.targets import open_target
from ssdpts.targets.purge import trim_all


def test_each_method_as_a_share_of_the_fob_level_after_the_snia_purge(tmp_path):
    profile = tmp_path / "ps.toml"
    profile.write_text(f'[profile]\nextends = "{TINY}"\n\n[tests.purge-study]\ndirty_multiple = 0.25\n'
                       'dirty_time = "1s"\nburst_cells = 2\nburst_time = "500ms"\n')
    rid, store = run_completed("sim:client", tmp_path, str(profile), "purge-study")
    s = registry.get("purge-study").decode(store.tests(rid)[0]["summary"])
    by = {m.method: m for m in s.methods}
    assert list(by) == ["purge", "trim", "zero-fill", "none"]
    assert s.reference == "purge" and by["purge"].applied == "sim-purge" and by["purge"].snia_purge
    assert s.reference_iops == by["purge"].mean_iops == pytest.approx(sum(by["purge"].burst_iops) / 2)
    for name in ("trim", "zero-fill", "none"):
        m = by[name]
        assert not m.snia_purge and m.label == f"{name} — not a SNIA purge" and len(m.burst_iops) == 2
        assert m.percent_of_reference == pytest.approx(m.mean_iops / s.reference_iops * 100)
    # the simulated drive: only its purge returns it to FOB. TRIM leaves invalid pages in unerased blocks and
    # zero-fill leaves every LBA mapped; the used state without any method is the floor
    assert by["purge"].percent_of_reference == 100
    assert 100 > by["trim"].percent_of_reference > by["none"].percent_of_reference
    assert 100 > by["zero-fill"].percent_of_reference > by["none"].percent_of_reference
    assert by["none"].percent_of_reference < 20
    # every method starts from the same used state: SEQ 0.25 x capacity, then RND 4K writes
    chained = ("zero-fill", "none")       # workloads only: dirty, method and bursts in one chained sequence
    first = [store.rounds(rid, "purge-study", f"method={m}/1/{'sequence' if m in chained else 'dirty'}")[0]
             for m in by]
    assert all(r.cells[0].name == "dirty_seq_1m" and r.cells[0].write.bytes == s.dirty_bytes == 4 * 2**30
               for r in first)
    zero = first[2].cells[2]
    assert zero.name == "zero_fill_1m" and [c.name for c in first[2].cells[3:]] == ["burst_1", "burst_2"]
    assert zero.write.bytes == 16 * 2**30 and by["zero-fill"].method_s == pytest.approx(zero.runtime_ms / 1000)
    assert (tmp_path / "reports" / rid / "plots" / "purge-study-iops-by-method.png").exists()
    assert any("trim" in line and "% of the reference" in line for line in text(s, SIMULATED))


def test_trim_of_a_file_target_is_refused_in_one_line(tmp_path):
    f = tmp_path / "t.img"
    f.write_bytes(b"\0" * 2**20)
    with pytest.raises(SsdptsError, match="TRIM of every LBA is not possible on .*leave trim out"):
        trim_all(open_target(str(f)))
