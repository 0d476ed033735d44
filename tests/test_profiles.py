"""Profiles are data files; invalid ones are refused naming the file, the key and what is allowed."""

import pytest

from ssdpts.errors import SsdptsError
from ssdpts.profiles import load_profile, shipped
from ssdpts.profiles import test_settings as settings_of


def test_shipped_profiles_load_and_inherit():
    names = set(shipped())
    assert {"quick", "pts-enterprise", "pts-client", "pts-e11", "review", "review-sata"} <= names
    e = load_profile("pts-enterprise")
    assert settings_of(e, "iops")["threads"] == 4 and settings_of(e, "iops")["iodepth"] == 32
    assert len(e["tests"]["iops"]["mixes"]) == 7 and len(e["tests"]["iops"]["block_sizes"]) == 8
    c = load_profile("pts-client")
    assert c["profile"]["name"] == "pts-client"
    assert settings_of(c, "iops")["active_range"] == 75 and settings_of(c, "iops")["threads"] == 2
    assert c["tests"]["throughput"]["block_sizes"] == ["1024k"]
    assert load_profile("pts-e11")["tests"]["iops"]["tracking"] == [["4k", 0]]
    r = load_profile("review")
    assert r["steady_state"]["rule"] == "fit-band" and r["steady_state"]["window"] == 4
    assert settings_of(load_profile("review-sata"), "iops")["iodepth"] == 8
    lat = settings_of(e, "latency")
    assert lat["threads"] == 1 and lat["iodepth"] == 1


def test_unknown_key_names_file_key_and_allowed(tmp_path):
    p = tmp_path / "bad.toml"
    p.write_text('[steady_state]\nwindw = 5\n')
    with pytest.raises(SsdptsError) as e:
        load_profile(str(p))
    msg = str(e.value)
    assert str(p) in msg and "steady_state.windw" in msg and "window" in msg


def test_bad_value_names_expected(tmp_path):
    p = tmp_path / "bad.toml"
    p.write_text('[steady_state]\nrule = "loose"\n')
    with pytest.raises(SsdptsError, match=r"steady_state.rule = 'loose' is invalid; expected one of snia, fit-band"):
        load_profile(str(p))
    p.write_text('[tests.iops]\nblock_sizes = ["4q"]\n')
    with pytest.raises(SsdptsError, match="tests.iops.block_sizes"):
        load_profile(str(p))


def test_unknown_profile_and_bad_toml(tmp_path):
    with pytest.raises(SsdptsError, match="unknown profile 'nope'.*quick"):
        load_profile("nope")
    p = tmp_path / "broken.toml"
    p.write_text("[profile\n")
    with pytest.raises(SsdptsError, match="not valid TOML"):
        load_profile(str(p))


def test_user_profile_extends_a_shipped_one(tmp_path):
    p = tmp_path / "mine.toml"
    p.write_text('[profile]\nextends = "pts-client"\n[tests.iops]\ncell_runtime = "30s"\n')
    prof = load_profile(str(p))
    assert prof["profile"]["name"] == "mine"
    s = settings_of(prof, "iops")
    assert s["cell_runtime"] == "30s" and s["active_range"] == 75
