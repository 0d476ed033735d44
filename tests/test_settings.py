"""Typed settings: declared once (kind, bounds, unit, default, doc), built once from the profile; every
profile-shaped mistake is one line, a non-zero exit, no traceback and no run created."""

import sqlite3
import subprocess
import sys
from dataclasses import fields
from pathlib import Path

import pytest

from ssdpts.profiles import load_profile
from ssdpts.pts import registry
from ssdpts.settings import MAX_THREADS, SteadySettings, TestSettings, declarations

SRC = Path(__file__).resolve().parents[1] / "src"


# --- defaults come from the declarations -----------------------------------------------------------

def test_a_profile_that_sets_nothing_gives_every_declared_default(tmp_path):
    p = tmp_path / "empty.toml"
    p.write_text("[profile]\n")
    prof = load_profile(str(p))
    for name, spec in registry.tests().items():
        s = registry.settings_for(prof, [spec.name]).of(spec.name)
        assert isinstance(s, TestSettings) and type(s) is spec.settings
        for key, decl in declarations(spec.settings).items():
            assert getattr(s, key) == decl.value(decl.default), (name, key)
        assert s.steady == SteadySettings() and s.seed is None


def test_values_are_parsed_once_into_their_units(tmp_path):
    p = tmp_path / "units.toml"
    p.write_text('[defaults]\nseed = 7\n[steady_state]\nwindow = 4\nmax_rounds = 9\n[wipc]\nblock_size = "1m"\n'
                 '[tests.iops]\ncell_runtime = "1.5m"\nblock_sizes = ["4k", "0.5k"]\ntracking = [["4k", 35]]\n'
                 '[tests.hir]\nwait_states = ["500ms", "2m"]\n[tests.wsat]\nmax_rounds = 3\n')
    prof = load_profile(str(p))
    iops = registry.settings_for(prof, ["iops"]).of("iops")
    assert iops.cell_runtime == 90.0 and iops.block_sizes == (4096, 512) and iops.tracking == ((4096, 35),)
    assert iops.steady.window == 4 and iops.steady.max_rounds == 9 and iops.wipc.block_size == 2**20
    assert iops.seed == 7 and iops.mixes == (100, 95, 65, 50, 35, 5, 0)        # the declared IOPS matrix
    assert registry.settings_for(prof, ["hir"]).of("hir").wait_states == (0.5, 120.0)
    wsat = registry.settings_for(prof, ["wsat"]).of("wsat")
    assert wsat.max_rounds == 3 and wsat.steady.max_rounds == 9    # WSAT's own round limit, not steady state's
    assert registry.settings_for(prof, ["latency"]).of("latency").block_sizes == (8192, 4096, 512)


def test_records_are_frozen_and_every_key_is_documented():
    for spec in registry.tests().values():
        for key, decl in declarations(spec.settings).items():
            assert decl.doc and decl.kind.what, (spec.name, key)
        s = spec.settings()
        with pytest.raises(AttributeError):
            s.threads = 2
    assert {f.name for f in fields(TestSettings)} >= {"threads", "iodepth", "cell_runtime", "steady", "wipc", "seed"}


# --- the CLI: --explain, and every refusal ---------------------------------------------------------

def _ssdpts(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "ssdpts", *args], capture_output=True, text=True, cwd=cwd,
                          env={"PYTHONPATH": str(SRC), "PATH": "/usr/sbin:/usr/bin:/sbin:/bin"}, timeout=120)


def test_profiles_explain_lists_every_key_with_its_default_unit_and_bounds(tmp_path):
    r = _ssdpts("profiles", "--explain", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    out = r.stdout
    for name, spec in registry.tests().items():
        assert f"[tests.{name}]" in out
    assert "  cell_runtime [s] = '1m': length of one cell of a round" in out
    assert f"an integer 1..{MAX_THREADS} (fio numjobs" in out
    assert "  repetitions = 360: bursts per wait state" in out
    assert 'a block size like "4k": a multiple of 512 bytes' in out
    assert "[steady_state]" in out and "  window = 5: rounds in the measurement window" in out


def _no_run(results: Path) -> bool:
    db = results / "ssdpts.db"
    if not db.exists():
        return True
    with sqlite3.connect(db) as c:
        return c.execute("select count(*) from runs").fetchone()[0] == 0


def _refused(tmp_path: Path, *args: str, names: tuple[str, ...]) -> str:
    results = tmp_path / "results"
    r = _ssdpts("run", "sim:client", "--destroy-data", "-q", "--results", str(results), *args, cwd=tmp_path)
    err = r.stderr.strip()
    assert r.returncode != 0, (r.stdout, err)
    assert "Traceback" not in err and len(err.splitlines()) == 1, err
    for n in names:
        assert n in err, err
    assert _no_run(results)
    return err


PROFILES = {
    "extends-cycle": ({"a.toml": '[profile]\nextends = "b.toml"\n', "b.toml": '[profile]\nextends = "a.toml"\n'},
                      "a.toml", ("cycle", "a.toml", "b.toml")),
    "extends-itself-by-path": ({"self.toml": '[profile]\nextends = "./self.toml"\n'}, "self.toml", ("cycle",)),
    "non-utf8": ({"latin.toml": b'[profile]\ndescription = "caf\xe9"\n'}, "latin.toml", ("not UTF-8",)),
    "binary": ({"bin.toml": b"\x7fELF\x02\x01\x01\x00\x00\x00"}, "bin.toml", ("binary file",)),
    "duplicate-test": ({"dup.toml": '[profile]\ntests = ["iops", "iops"]\n'}, "dup.toml", ("'iops' twice",)),
    "empty-test": ({"empty.toml": '[profile]\ntests = ["iops", ""]\n'}, "empty.toml", ("empty test name",)),
    "rounds-below-window": ({"r.toml": '[steady_state]\nwindow = 5\n[tests.iops]\nmax_rounds = 3\n'}, "r.toml",
                            ("max_rounds = 3", "window of 5")),
    "threads-too-many": ({"t.toml": '[tests.iops]\nthreads = 100000\n'}, "t.toml", ("tests.iops.threads", "4096")),
    "iodepth-too-deep": ({"q.toml": '[defaults]\niodepth = 1000000\n'}, "q.toml", ("defaults.iodepth", "65536")),
    "runtime-too-long": ({"d.toml": '[tests.iops]\ncell_runtime = 1e30\n'}, "d.toml", ("cell_runtime", "365 days")),
    "runtime-nan": ({"n.toml": '[tests.iops]\ncell_runtime = nan\n'}, "n.toml", ("cell_runtime",)),
    "seed-too-big": ({"s.toml": '[defaults]\nseed = 4294967296\n'}, "s.toml", ("defaults.seed", "fio randseed")),
    "block-size-not-512": ({"b.toml": '[tests.iops]\nblock_sizes = ["1000"]\n'}, "b.toml",
                           ("tests.iops.block_sizes", "multiples of 512")),
    "block-size-huge": ({"h.toml": '[wipc]\nblock_size = "64g"\n'}, "h.toml", ("wipc.block_size", "1 GiB")),
}


@pytest.mark.parametrize("case", sorted(PROFILES))
def test_a_bad_profile_is_one_line_and_creates_no_run(tmp_path, case):
    files, given, names = PROFILES[case]
    for name, text in files.items():
        (tmp_path / name).write_bytes(text if isinstance(text, bytes) else text.encode())
    _refused(tmp_path, "--profile", str(tmp_path / given), "--tests", "iops", names=names)


def test_a_directory_given_as_profile_is_refused(tmp_path):
    (tmp_path / "prof").mkdir()
    _refused(tmp_path, "--profile", str(tmp_path / "prof"), names=("is a directory",))


@pytest.mark.parametrize("tests, names", [("iops,iops", ("'iops' twice",)), ("iops,,latency", ("empty test name",)),
                                          ("iops,", ("empty test name",)), ("iops,nope", ("unknown test 'nope'",))])
def test_bad_tests_option_is_refused(tmp_path, tests, names):
    _refused(tmp_path, "--profile", "quick", "--tests", tests, names=("--tests",) + names)


def test_block_size_not_a_multiple_of_the_logical_block_names_the_key(tmp_path):
    """sim:client has 4096-byte logical blocks: 6 KiB is a multiple of 512 but not of 4096 (sizes below
    the logical block are skipped with a note, so 0.5K stays allowed)."""
    p = tmp_path / "six.toml"
    p.write_text('[profile]\nextends = "quick"\n[tests.iops]\nblock_sizes = ["6k", "4k", "0.5k"]\n')
    _refused(tmp_path, "--profile", str(p), "--tests", "iops", names=("iops.block_sizes", "6K", "4096-byte"))
    r = _ssdpts("plan", "sim:client", "--profile", str(p), "--tests", "iops", cwd=tmp_path)
    assert r.returncode != 0 and "iops.block_sizes" in r.stderr and "Traceback" not in r.stderr
