"""Profiles are data files; invalid ones are refused naming the file, the key and what is allowed."""

import json
import subprocess
import sys

import pytest

from ssdpts.errors import SsdptsError
from ssdpts.profiles import load_profile, shipped
from ssdpts.pts import registry
from ssdpts.settings import test_settings as settings_of


def test_shipped_profiles_load_and_inherit():
    names = set(shipped())
    assert {"quick", "pts-enterprise", "pts-client", "pts-e11", "review", "review-sata", "review-dc", "review-consumer",
            "review-endurance"} <= names
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


@pytest.mark.parametrize("text, names", [
    ('[tests.iosp]\ncell_runtime = "1s"\n', ["[tests.iosp]", "unknown test", "iops"]),
    ('[tests.iops]\ncell_runtme = "1s"\n', ["tests.iops.cell_runtme", "cell_runtime"]),
    ('[tests.iops]\nthreads = "four"\n', ["tests.iops.threads", "an integer 1..4096"]),
    ('[tests.iops]\nthreads = 0\n', ["tests.iops.threads = 0", "an integer 1..4096"]),
    ('[tests.iops]\ncell_runtime = "0s"\n', ["tests.iops.cell_runtime", "from 1 ms to 365 days"]),
    ('[tests.iops]\ncell_runtime = -5\n', ["tests.iops.cell_runtime", "from 1 ms to 365 days"]),
    ('[steady_state]\nwindow = 1\n', ["steady_state.window = 1", "an integer 2..1000"]),
    ('[defaults]\nactive_range = 0\n', ["defaults.active_range", "above 0, up to 100"]),
    ('[profile]\ntests = ["iops", "lat"]\n', ["profile.tests", "'lat'"]),
    ('[nonsense]\nx = 1\n', ["unknown section [nonsense]"]),
])
def test_every_bad_profile_is_one_line_before_anything_runs(tmp_path, text, names):
    p = tmp_path / "bad.toml"
    p.write_text(text)
    with pytest.raises(SsdptsError) as e:
        load_profile(str(p))
    msg = str(e.value)
    assert "\n" not in msg and str(p) in msg
    for n in names:
        assert n in msg, msg


def test_every_registered_test_has_its_settings_validated(tmp_path):
    for name, spec in registry.tests().items():
        assert {"threads", "iodepth", "cell_runtime"} <= set(spec.all_settings), name
        p = tmp_path / f"{name}.toml"
        p.write_text(f'[tests.{name}]\nno_such_key = 1\n')
        with pytest.raises(SsdptsError, match=f"tests.{name}.no_such_key"):
            load_profile(str(p))


def test_shipped_profiles_name_only_registered_tests():
    known = set(registry.tests())
    for name in shipped():
        prof = load_profile(name)
        assert set(prof.get("tests", {})) <= known, name
        assert set(prof["profile"].get("tests") or []) <= known, name


@pytest.mark.parametrize("own_latency, expected", [("", {"latency": 6, "hir": 6, "wsat": 600}),
                                                   ("[tests.latency]\nmax_rounds = 25\n",
                                                    {"latency": 25, "hir": 6, "wsat": 600})])
def test_the_nearest_files_steady_state_max_rounds_wins_over_inherited_test_limits(tmp_path, own_latency, expected):
    """quick sets [steady_state] max_rounds = 8 and its own 25 for latency and HIR (600 WSAT intervals). A file
    extending it with [steady_state] max_rounds = 6 gets 6 for latency and HIR as written, where the inherited
    25 outranked it in silence; a key of its own for a test still wins in that file, and WSAT's limit counts
    intervals, which [steady_state] never sets. A file extending that one inherits the result. As `ssdpts plan`
    shows it: the most rounds any phase of the test can take."""
    mine = tmp_path / "mine.toml"
    mine.write_text(f'[profile]\nextends = "quick"\n[steady_state]\nmax_rounds = 6\n{own_latency}')
    (tmp_path / "child.toml").write_text('[profile]\nextends = "mine.toml"\n[tests.iops]\ncell_runtime = "1s"\n')
    for profile in (mine, tmp_path / "child.toml"):
        p = subprocess.run([sys.executable, "-m", "ssdpts", "plan", "--capacity", "1T", "--profile", str(profile),
                            "--tests", "latency,hir,wsat", "--json"], capture_output=True, text=True)
        assert p.returncode == 0, p.stderr
        plan = json.loads(p.stdout)
        assert {t["test"]: max(ph["rounds_max"] for ph in t["phases"]) for t in plan["tests"]} == expected
