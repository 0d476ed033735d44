"""A hostile-input sweep: generated profiles, claims, criteria and workload files and command-line values, each
handed to the real command line; every one must be answered the product's way (README, exit codes):

- no traceback and never `internal error` (exit 70);
- exit 0 (or 1 where a verdict is the answer), or exit 2 with exactly one stderr line `ssdpts: error: ...`;
- nothing left behind: no results directory (so no run row), no --out / --junit output, no profile file.

Inputs are structurally plausible (the keys a file may hold, with hostile values: negatives, zero, huge, NaN
and infinity, fractions of a byte, wrong types, unknown keys and tests, empty lists, unicode, long strings,
newlines) so that they reach deep validation, not only the TOML parser.

Commands run in-process (click's CliRunner) for speed, plus a small subprocess sample as a user runs them.
Examples are derandomized (a fresh clone sees the same inputs); SSDPTS_SWEEP_EXAMPLES=N runs N examples per
sweep with fresh random draws, to look further by hand. Each bug found is pinned with an @example.
"""

from __future__ import annotations

import copy
import json
import math
import os
import signal
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, example, given, settings, strategies as st

from ssdpts import interrupts
from ssdpts.cli import main
from ssdpts.criteria.figures import FIGURES
from ssdpts.criteria.units import UNITS
from ssdpts.profiles import schema, shipped
from ssdpts.report.claimed import SECTIONS as CLAIM_SECTIONS

_BY_HAND = int(os.environ.get("SSDPTS_SWEEP_EXAMPLES", "0"))
settings.register_profile("sweep-ci", derandomize=True, deadline=None, database=None, print_blob=True,
                          suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
settings.register_profile("sweep-by-hand", derandomize=False, deadline=None, database=None, print_blob=True,
                          suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
SWEEP = settings.get_profile("sweep-by-hand" if _BY_HAND else "sweep-ci")


def examples(n: int) -> settings:
    """`n` examples in CI (the whole file stays within about a minute), SSDPTS_SWEEP_EXAMPLES by hand."""
    return settings(SWEEP, max_examples=_BY_HAND or n)


# --- running the command line ---------------------------------------------------------------------------

@dataclass(frozen=True)
class Outcome:
    args: tuple[str, ...]
    code: int
    stdout: str
    stderr: str


def invoke(args: list[str], scratch: Path) -> Outcome:
    """The CLI in this process, results defaulting to SCRATCH/results (which must never be created)."""
    handlers = {s: signal.getsignal(s) for s in interrupts.SIGNALS}
    hook = sys.unraisablehook
    try:
        r = CliRunner().invoke(main, args, env={"SSDPTS_RESULTS": str(scratch / "results"), "SSDPTS_DEBUG": None},
                               catch_exceptions=True)
    finally:
        for s, h in handlers.items():
            signal.signal(s, h)
        sys.unraisablehook = hook
    if r.exception is not None and not isinstance(r.exception, SystemExit):
        raise AssertionError(f"ssdpts {' '.join(args)} raised {r.exception!r}") from r.exception
    return Outcome(tuple(args), r.exit_code, r.stdout, r.stderr)


def spawn(args: list[str], scratch: Path) -> Outcome:
    """The CLI as a user runs it: a new process."""
    env = {k: v for k, v in os.environ.items() if k != "SSDPTS_DEBUG"}
    env["SSDPTS_RESULTS"] = str(scratch / "results")
    p = subprocess.run([sys.executable, "-m", "ssdpts", *args], capture_output=True, text=True, timeout=120,
                       env=env, cwd=scratch)
    return Outcome(tuple(args), p.returncode, p.stdout, p.stderr)


def assert_handled(out: Outcome, scratch: Path, verdicts: tuple[int, ...] = (), left: tuple[Path, ...] = ()):
    """The product's promise for any input: handled, one line when refused, nothing created."""
    said = f"ssdpts {' '.join(map(repr, out.args))} -> exit {out.code}\nstdout: {out.stdout[-2000:]}\n" \
           f"stderr: {out.stderr[-2000:]}"
    assert "Traceback" not in out.stdout + out.stderr, said
    assert "internal error" not in out.stderr, said
    assert out.code in (0, 2, *verdicts), said
    if out.code == 2:
        lines = out.stderr.rstrip("\n").split("\n")
        assert len(lines) == 1 and lines[0].startswith("ssdpts: error: "), said
        assert len(lines[0]) > len("ssdpts: error: ") + 10, said
    assert not (scratch / "results").exists(), f"a results directory was created\n{said}"
    for p in left:
        assert not p.exists(), f"{p} was created\n{said}"


@pytest.fixture(scope="module")
def scratch_root(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("sweep")


_count = iter(range(10**9))


def fresh(root: Path) -> Path:
    """An empty folder of this example's own (a function-scoped fixture would be shared by every example)."""
    d = root / f"ex{next(_count)}"
    d.mkdir()
    return d


# --- TOML --------------------------------------------------------------------------------------------------

def toml_string(s: str) -> str:
    """A basic string: JSON's escapes (\\n, \\", \\uXXXX) are TOML's; DEL is escaped too in TOML."""
    return json.dumps(s, ensure_ascii=False).replace("\x7f", "\\u007f")


def toml_value(v) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int):
        return str(v)
    if isinstance(v, float):
        return "nan" if math.isnan(v) else ("inf" if v > 0 else "-inf") if math.isinf(v) else repr(v)
    if isinstance(v, str):
        return toml_string(v)
    if isinstance(v, list):
        return "[" + ", ".join(toml_value(x) for x in v) + "]"
    if isinstance(v, dict):
        return "{" + ", ".join(f"{toml_string(k)} = {toml_value(x)}" for k, x in v.items()) + "}"
    raise TypeError(v)


def toml_document(doc: dict) -> str:
    """Tables as [a."b"] sections (a list of tables as [[name]]), other values as key = value."""
    lines = []
    for section, body in doc.items():
        if isinstance(body, list) and body and all(isinstance(t, dict) for t in body):
            for t in body:
                lines.append(f"[[{toml_string(section)}]]")
                lines += [f"{toml_string(k)} = {toml_value(v)}" for k, v in t.items()]
        elif isinstance(body, dict):
            lines.append("[" + ".".join(toml_string(p) for p in section.split(".")) + "]")
            lines += [f"{toml_string(k)} = {toml_value(v)}" for k, v in body.items()]
        else:
            lines.insert(0, f"{toml_string(section)} = {toml_value(body)}")
    return "\n".join(lines) + "\n"


# --- hostile values --------------------------------------------------------------------------------------

HOSTILE_NUMBERS = [0, -1, -5, 1, 2, 3, 7, 101, 2**31, 2**32, 2**62 + 1, 2**63 - 1, -(2**63), 0.0, -0.0, 0.5, 1.5,
                   -2.5, 1e-300, 5e-324, 1e300, 1.7976931348623157e308, math.nan, math.inf, -math.inf]
HOSTILE_STRINGS = ["", " ", "0", "-1", "-4k", "1.5", "0.5k", "0.7k", "4kk", "4 k", "1e3", "nan", "inf", "-inf",
                   "1P", "16P", "9999999P", "1" * 400, "1" * 400 + "k", "1" * 400 + "d", "1" * 30 + "d", "0ms",
                   "0.0001ms", "1.5ms", "-1s", "4K", "4KiB", "1024k", "4\nk", "ünïcödé", "٤k", "x" * 5000,
                   "a\nb\nc", "../../etc/passwd", "/nonexistent/file.toml", "sim:client", "auto", "random", "enabled",
                   "snia", "read", "randwrite", "rnd4k-write", "pgbench", "iops", "\u202e", "\x00", "\t"]
scalars = st.one_of(st.sampled_from(HOSTILE_NUMBERS), st.sampled_from(HOSTILE_STRINGS), st.booleans(),
                    st.integers(), st.floats(), st.text(max_size=20))
hostile = st.one_of(scalars, scalars, st.recursive(scalars, lambda inner: st.one_of(
    st.lists(inner, max_size=4), st.dictionaries(st.sampled_from(["a", "rw", "bs", "read_pct", ""]), inner,
                                                 max_size=3)), max_leaves=6))


# --- profiles ---------------------------------------------------------------------------------------------

def _shipped_values() -> dict[str, list]:
    """Every value a shipped profile writes, by key name: plausible values that get a profile past a key."""
    import tomllib

    seen: dict[str, list] = {}

    def walk(table: dict):
        for k, v in table.items():
            if isinstance(v, dict) and k not in ("workloads",):
                walk(v)
            elif v not in seen.setdefault(k, []):
                seen[k].append(v)
    for path in shipped().values():
        walk(tomllib.loads(path.read_text()))
    return seen


SCHEMA = schema()
PLAUSIBLE = _shipped_values()
for _section, _keys in SCHEMA.items():
    for _name, _decl in _keys.items():
        if getattr(_decl, "default", None) is not None and _decl.default not in PLAUSIBLE.setdefault(_name, []):
            PLAUSIBLE[_name].append(_decl.default)
PLAUSIBLE.pop("extends", None)     # extends is drawn apart (a shipped name, a missing file, itself)
PLAUSIBLE.pop("tests", None)
TEST_NAMES = sorted(s.removeprefix("tests.") for s in SCHEMA if s.startswith("tests."))


def value_for(key: str) -> st.SearchStrategy:
    plausible = PLAUSIBLE.get(key)
    if plausible:
        return st.one_of(st.sampled_from(plausible), st.sampled_from(plausible), hostile)
    return hostile


@st.composite
def profile_documents(draw) -> dict:
    """A profile: a few sections of the schema (now and then an unknown one), a few keys each (now and then an
    unknown key), values mostly plausible with hostile ones among them."""
    doc: dict = {}
    sections = draw(st.lists(st.sampled_from([*SCHEMA, "bogus", "tests.no-such-test", "tests.3k"]), min_size=1,
                             max_size=3, unique=True))
    for section in sections:
        keys = list(SCHEMA.get(section, {})) or ["name"]
        chosen = draw(st.lists(st.sampled_from([*keys, "no_such_key"]), max_size=3, unique=True))
        body = {k: draw(value_for(k)) for k in chosen}
        if section == "profile":
            if draw(st.booleans()):
                body["tests"] = draw(st.one_of(st.lists(st.sampled_from([*TEST_NAMES, "bogus", "", "IOPS"]),
                                                        max_size=3), hostile))
            if draw(st.integers(0, 3)) == 0:
                body["extends"] = draw(st.sampled_from(["quick", "pts-enterprise", "no-such-profile",
                                                        "/nonexistent/p.toml", "", "SELF", ".", 5]))
        doc[section] = body
    return doc


def write_profile(d: Path, doc: dict) -> Path:
    p = d / "profile.toml"
    doc = copy.deepcopy(doc)
    if (doc.get("profile") or {}).get("extends") == "SELF":
        doc["profile"]["extends"] = str(p)
    p.write_text(toml_document(doc), encoding="utf-8")
    return p


def _with_tests(doc: dict) -> list[str]:
    """--tests: the profile's [tests.NAME] sections when they are registered tests, so those are planned."""
    named = [s.removeprefix("tests.") for s in doc if s.startswith("tests.") and s in SCHEMA]
    return ["--tests", ",".join(named)] if named else []


@examples(120)
@given(doc=profile_documents())
@example(doc={"tests.file-reuse": {"file_size_percent": 5e-324}})   # 0 as a fraction: ValueError, exit 70
def test_profiles_through_plan(scratch_root, doc):
    """`plan --capacity` reads the whole profile and plans every test it sets: validation end to end."""
    d = fresh(scratch_root)
    out = invoke(["plan", "--capacity", "3.84T", "--write-speed", "2GB/s", "--profile", str(write_profile(d, doc)),
                  *_with_tests(doc)], d)
    assert_handled(out, d)


@examples(25)
@given(doc=profile_documents())
def test_profiles_through_run_refuse_before_work(scratch_root, doc):
    """`run` with a hostile profile on a target it cannot have: refused before anything is created."""
    d = fresh(scratch_root)
    target = d / "no-such-folder" / "x.img"
    out = invoke(["run", str(target), "--size", "64M", "--profile", str(write_profile(d, doc)), *_with_tests(doc)],
                 d)
    assert_handled(out, d, left=(target.parent,))
    assert out.code == 2


@examples(25)
@given(doc=profile_documents())
@example(doc={"defaults": {}})      # refused at the target, it left RESULTS/profiles/ behind
def test_profiles_through_endurance(scratch_root, doc):
    """`endurance` writes a profile of its own that extends the given one: nothing of it may stay behind."""
    d = fresh(scratch_root)
    out = invoke(["endurance", str(d / "no-such-folder" / "x.img"), "--size", "64M", "--duration", "1s",
                  "--profile", str(write_profile(d, doc))], d)
    assert_handled(out, d)
    assert out.code == 2


# --- claims files -----------------------------------------------------------------------------------------

CLAIM_PLAUSIBLE = {"block_size": ["128k", "4k"], "basis": ["steady", "fob", "saturated"], "read_pct": [100, 70],
                   "mixed_read_pct": [70], "measured_read_pct": [65], "queue_depth": [32, 1], "threads": [4],
                   "model": ["X"], "source": ["datasheet"], "capacity": ["3.84TB"]}


@st.composite
def claims_documents(draw) -> dict:
    doc: dict = {}
    for section in draw(st.lists(st.sampled_from([*CLAIM_SECTIONS, "bogus"]), min_size=1, max_size=3, unique=True)):
        keys = list(CLAIM_SECTIONS.get(section, {})) or ["x"]

        def table():
            chosen = draw(st.lists(st.sampled_from([*keys, "no_such_key"]), max_size=4, unique=True))
            return {k: draw(st.one_of(plausible, plausible, hostile))
                    for k in chosen for plausible in [st.sampled_from(CLAIM_PLAUSIBLE.get(k, [5000.0, 1, 350000]))]}
        if section in ("sequential", "random", "latency", "latency_point") and draw(st.booleans()):
            doc[section] = [table() for _ in range(draw(st.integers(1, 2)))]
        else:
            doc[section] = table() if draw(st.integers(0, 9)) else draw(hostile)
    return doc


def write_claims(d: Path, doc: dict) -> Path:
    p = d / "claimed.toml"
    p.write_text(toml_document(doc), encoding="utf-8")
    return p


@examples(80)
@given(doc=claims_documents())
@example(doc={"sequential": {"write_mb_s": 5e-324}})    # an infinite phase time: OverflowError, exit 70
def test_claims_through_plan(scratch_root, doc):
    """`plan --claims`: the claims file's sequential write speed times the size-bound phases."""
    d = fresh(scratch_root)
    out = invoke(["plan", "--capacity", "3.84T", "--tests", "iops,wsat", "--claims", str(write_claims(d, doc))], d)
    assert_handled(out, d)


@examples(40)
@given(doc=claims_documents())
def test_claims_through_compare(scratch_root, doc):
    """`compare --spec-sheet`: a bad claims file is refused before the results are read or --out is made."""
    d = fresh(scratch_root)
    out = invoke(["compare", "r1", "r2", "--out", str(d / "out"), "--spec-sheet", str(write_claims(d, doc))], d)
    assert_handled(out, d, left=(d / "out",))
    assert out.code == 2


# --- criteria files ---------------------------------------------------------------------------------------

SELECTOR_VALUES = {"bs": ["4k", "128k", "0", "1.5k", "0.5k", "9" * 400 + "k", "4K", "-4k", "4kk", "1m"],
                   "read": ["0", "65", "100", "101", "-1", "07"],
                   "dir": ["read", "write", "both"],
                   "q": ["99", "99.99", "99.990", "100", "0", "1" * 400, "1e3"],
                   "workload": ["rnd4k-write", "bogus", "x" * 300],
                   "key": ["iops", "bogus", " ", "ü" * 50]}


@st.composite
def figure_paths(draw, fig) -> str:
    path = fig.path
    for name in ("bs", "read", "dir", "q", "workload", "key"):
        while "{" + name + "}" in path:
            path = path.replace("{" + name + "}", draw(st.sampled_from(SELECTOR_VALUES[name])), 1)
    if draw(st.integers(0, 9)):
        return path
    return draw(st.one_of(st.sampled_from(["", "iops", "iops.cell[4k]", "nope.x", "run.", "."]), st.text(max_size=30)))


@st.composite
def criteria_rules(draw, i: int) -> dict:
    """A rule that holds together (the figure's own unit, an operator and threshold that fit it), then up to two
    of its keys made hostile, dropped, or an unknown key added."""
    fig = draw(st.sampled_from(FIGURES))
    path = draw(figure_paths(fig))
    if fig.unit == "bool":
        rule = {"name": f"rule {i}", "figure": path, "op": "==", "threshold": True, "source": "lab"}
    else:
        rule = {"name": f"rule {i}", "figure": path, "op": draw(st.sampled_from([">=", "<=", ">", "<", "=="])),
                "threshold": draw(st.sampled_from([1000, 0.5, 0])), "unit": fig.unit or "", "source": "lab"}
    for _ in range(draw(st.integers(0, 2))):
        key = draw(st.sampled_from(["name", "figure", "op", "threshold", "unit", "source", "optional", "extra"]))
        how = draw(st.sampled_from(["set", "set", "drop"]))
        if how == "drop":
            rule.pop(key, None)
        elif key == "unit":
            rule[key] = draw(st.one_of(st.sampled_from(sorted(UNITS)), st.sampled_from(["us", "none", "x"]), hostile))
        elif key == "name":
            rule[key] = draw(st.one_of(st.just("twice"), hostile))
        else:
            rule[key] = draw(hostile)
    return rule


@st.composite
def criteria_documents(draw) -> dict:
    doc: dict = {"criteria": draw(st.one_of(st.just({"name": "x", "source": "y"}), st.dictionaries(
        st.sampled_from(["name", "description", "source", "bogus"]), hostile, max_size=3)))}
    if draw(st.integers(0, 9)) == 0:
        doc["criteria"] = draw(hostile)
    doc["rule"] = [draw(criteria_rules(i)) for i in range(draw(st.integers(0, 3)))]
    if draw(st.integers(0, 9)) == 0:
        doc["rule"] = draw(hostile)
    return doc


@examples(120)
@given(doc=criteria_documents())
def test_criteria_through_check(scratch_root, doc):
    """`check --criteria`: the rules are read and judged whole before the results: a bad file is exit 2, and
    a good one reaches the (missing) results database: exit 2 too; --junit is never written."""
    d = fresh(scratch_root)
    rules = d / "rules.toml"
    rules.write_text(toml_document(doc), encoding="utf-8")
    out = invoke(["check", "r1", "--criteria", str(rules), "--junit", str(d / "junit.xml")], d)
    assert_handled(out, d, left=(d / "junit.xml",))
    assert out.code == 2


# --- workload files ---------------------------------------------------------------------------------------

WORKLOADS = Path(__file__).resolve().parents[1] / "src" / "ssdpts" / "workloads"
SMALL_WORKLOAD = json.loads((WORKLOADS / "small-files.workload.json").read_text())


def _paths(doc, prefix=()) -> list[tuple]:
    """Every place in a JSON document: dict keys and list indexes, as paths."""
    out = [prefix]
    items = doc.items() if isinstance(doc, dict) else enumerate(doc) if isinstance(doc, list) else ()
    for k, v in items:
        out += _paths(v, (*prefix, k))
    return out


ALL_PLACES = [p for p in _paths(SMALL_WORKLOAD) if p][:4000]


DROP, RENAME, SET = "drop", "rename", "set"
changes = st.lists(st.tuples(st.sampled_from(ALL_PLACES), st.sampled_from([DROP, RENAME, SET, SET, SET]),
                             st.one_of(hostile, st.sampled_from([0, -1, 2**70, 1.5, "8192", None, [], {}]))),
                   min_size=1, max_size=3)


def changed_workload(edits: list[tuple]) -> dict:
    """The shipped small-files capture with a few places dropped, renamed or set to a hostile value."""
    doc = copy.deepcopy(SMALL_WORKLOAD)
    for place, action, value in edits:
        if not place:
            return value
        parent = doc
        try:
            for k in place[:-1]:
                parent = parent[k]
            if action == DROP and isinstance(parent, dict):
                parent.pop(place[-1])
            elif action == RENAME and isinstance(parent, dict):
                parent[str(value)] = parent.pop(place[-1])
            else:
                parent[place[-1]] = value
        except (KeyError, IndexError, TypeError):
            pass                    # an earlier change removed or replaced the place
    return doc


workload_edits = st.one_of(changes, changes, changes, hostile.map(lambda v: [((), SET, v)]))


def negative_number_placed(edits: list[tuple], doc) -> bool:
    """An edit put a negative number where the shipped file holds a number, and it is still there."""
    number = (int, float)
    for place, action, value in edits:
        if action != SET or not place or not isinstance(value, number) or isinstance(value, bool) or value >= 0:
            continue
        original, now = SMALL_WORKLOAD, doc
        try:
            for k in place:
                original, now = original[k], now[k]
        except (KeyError, IndexError, TypeError):
            continue
        if isinstance(original, number) and not isinstance(original, bool) and now is value:
            return True
    return False


def write_json(p: Path, doc) -> Path:
    p.write_text(json.dumps(doc, allow_nan=True), encoding="utf-8")     # NaN/Infinity too: they must be refused
    return p


@examples(120)
@given(edits=workload_edits, top=st.sampled_from(["5", "1", "0", "-1", "64", "99999999999999999999", "x"]),
       as_json=st.booleans())
@example(edits=[(("streams", 0), SET, None)], top="5", as_json=False)            # was AttributeError, exit 70
@example(edits=[(("queue_depth", "histogram"), SET, [1])], top="5", as_json=False)  # was AttributeError
@example(edits=[(("device_size_bytes",), SET, "big")], top="5", as_json=False)    # was TypeError, exit 70
@example(edits=[(("source", "step_s"), SET, -5)], top="5", as_json=False)         # was accepted
def test_workload_files_through_analyze(scratch_root, edits, top, as_json):
    d = fresh(scratch_root)
    doc = changed_workload(edits)
    f = write_json(d / "app.workload.json", doc)
    out = invoke(["analyze", "workload", str(f), "--top", top, *(["--json"] if as_json else [])], d)
    assert_handled(out, d)
    if negative_number_placed(edits, doc):
        assert out.code == 2, out      # every number of a workload file is a count, a size or seconds


@examples(40)
@given(edits=workload_edits)
@example(edits=[(("source",), SET, None)])        # was AttributeError, exit 70
def test_workload_files_through_rwsw_plan(scratch_root, edits):
    """A profile's [tests.rwsw] workload file is read when the test is planned."""
    d = fresh(scratch_root)
    f = write_json(d / "app.workload.json", changed_workload(edits))
    profile = write_profile(d, {"profile": {"extends": "quick"}, "tests.rwsw": {"workload": str(f)}})
    out = invoke(["plan", "--capacity", "3.84T", "--tests", "rwsw", "--profile", str(profile)], d)
    assert_handled(out, d)


# --- command-line values ----------------------------------------------------------------------------------

SIZES = ["8G", "64M", "1", "0", "-1", "1.5", "0.5", "1.5G", "4kk", "1e3", "nan", "inf", "16P", "1" * 30,
         "9" * 400, "", " ", "8 G", "8GiB", "８G"]
DURATIONS = ["1s", "500ms", "0", "0s", "-1s", "1.5ms", "0.0001ms", "72h", "400d", "1" * 400 + "d", "nan", "x", "",
             "1e3", "5m"]
COUNTS = ["1", "0", "-1", "2", "16", "4096", "4097", "65537", str(2**31), str(2**63), "9" * 400, "1.5", "x", "",
          "nan"]
FLOATS = ["1", "0", "-0", "-5", "0.5", "100", "1e-300", "5e-324", "1e308", "1e999", "nan", "inf", "-inf", "x", ""]
RATES = ["2GB/s", "1.8GiB/s", "500MB/s", "0B/s", "-1GB/s", "2Gb/s", "2GB", "0.0000001B/s", "0." + "0" * 320 + "1B/s",
         "9" * 400 + "GB/s", "inf GB/s", "2 GB/s", ""]
CAPACITIES = ["3.84T", "3.5TiB", "1", "0", "-1", "512", "1e3", "9" * 400, "99999999999P", "4.7P", "3.84", "x", ""]
SEEDS = ["0", "1", "-1", str(2**32 - 1), str(2**32), str(2**64), "x", "1.5"]
TEST_LISTS = ["iops", "iops,latency", "", ",", "iops,iops", "bogus", "IOPS", "iops,,latency", "wsat,rwsw", "ü"]
RUN_IDS = ["r1", "", " ", "-", "..", "../../etc", "x" * 300, "20261126-122148-a344", "ü", "a\nb", "%", "*"]
TEXT = st.one_of(st.sampled_from(HOSTILE_STRINGS), st.text(max_size=12))


def options(**choices: st.SearchStrategy) -> st.SearchStrategy:
    """Some of the options, each with a value, as command-line words (sometimes written --opt=value)."""
    names = sorted(choices)

    @st.composite
    def build(draw):
        words = []
        for name in draw(st.lists(st.sampled_from(names), max_size=4, unique=True)):
            value = draw(choices[name])
            if value is None:
                words.append(name)                     # a flag
            elif draw(st.integers(0, 3)) == 0:
                words.append(f"{name}={value}")
            else:
                words += [name, value]
        return words
    return build()


def pick(values: list) -> st.SearchStrategy:
    return st.one_of(st.sampled_from(values), st.sampled_from(values), TEXT)


FLAG = st.none()
PLAN_OPTIONS = options(**{"--capacity": pick(CAPACITIES), "--write-speed": pick(RATES), "--tests": pick(TEST_LISTS),
                          "--logical-block-size": pick(["512", "4096", "0", "1024", "x"]),
                          "--purge": pick(["auto", "trim", "none", "nvme-format", "bogus"]),
                          "--profile": pick(["quick", "pts-client", "review", "bogus", ""]), "--json": FLAG})


@examples(150)
@given(words=PLAN_OPTIONS, target=st.sampled_from([None, None, "sim:client", "sim:bogus", "sim:", "FILE", "/"]),
       size=st.one_of(st.none(), pick(SIZES)))
@example(words=[], target=None, size="9" * 400)      # OverflowError (a float's infinity to int), exit 70
@example(words=["--capacity", "9" * 400], target=None, size=None)                   # the same
@example(words=["--capacity", "99999999999P"], target=None, size=None)              # beyond any size, was planned
@example(words=["--capacity", "3.84T", "--write-speed", "0." + "0" * 320 + "1B/s"], target=None, size=None)
def test_plan_values(scratch_root, words, target, size):
    d = fresh(scratch_root)
    args = ["plan", *words]
    if target is not None:
        args.append(str(d / "x.img") if target == "FILE" else target)
    if size is not None:
        args += ["--size", size]
    out = invoke(args, d)
    assert_handled(out, d, left=(d / "x.img",))


@examples(120)
@given(values=st.lists(pick(["11746", "11690", "0", "-1", "1e308", "-1e308", "1e-300", "nan", "inf", "x", "1_000"]),
                       max_size=8),
       words=options(**{"--window": pick(COUNTS), "--max-range": pick(FLOATS), "--max-slope": pick(FLOATS),
                        "--rule": pick(["snia", "fit-band", "SNIA", ""]), "--strict": FLAG, "--json": FLAG}))
def test_steady_state_values(scratch_root, values, words):
    d = fresh(scratch_root)
    out = invoke(["steady-state", *words, "--", *values], d)
    assert_handled(out, d, verdicts=(1,))


RUN_OPTIONS = options(**{"--size": pick(SIZES), "--seed": pick(SEEDS), "--tests": pick(TEST_LISTS),
                         "--profile": pick(["quick", "pts-enterprise", "bogus", "", "/nonexistent.toml"]),
                         "--purge": pick(["auto", "trim", "none", "bogus"]),
                         "--ignore-doctor": pick(["all", "", ",", "bogus", "fio,bogus"]),
                         "--note": pick(["adapter X", "", "a\nb", "x" * 5000]),
                         "--host": pick(["h1", "h1:0", "h1:99999", ":", "[::1]:8765", ""]),
                         "--hosts": pick(["/nonexistent/hosts.toml", ""]),
                         "--destroy-data": FLAG, "--sequential": FLAG, "--strict": FLAG, "-q": FLAG})


@examples(150)
@given(words=RUN_OPTIONS, target=st.sampled_from(["MISSING", "MISSING", "DIR", "/dev/null", "sim:bogus", ""]))
@example(words=["--profile", "1" * 400], target="MISSING")     # ENAMETOOLONG from Path.exists(): exit 70
def test_run_values_refused_before_work(scratch_root, words, target):
    """`run` on a target it cannot have: every other value is checked first or the target refuses; either way
    exit 2, one line, no results directory and no run row."""
    d = fresh(scratch_root)
    path = {"MISSING": str(d / "no-such-folder" / "x.img"), "DIR": str(d)}.get(target, target)
    out = invoke(["run", *words, path], d)
    assert_handled(out, d, left=(d / "no-such-folder",))
    assert out.code == 2


ENDURANCE_OPTIONS = options(**{"--duration": pick(DURATIONS), "--poll": pick(DURATIONS), "--threads": pick(COUNTS),
                               "--iodepth": pick(COUNTS), "--dwpd": pick(FLOATS), "--warranty-years": pick(FLOATS),
                               "--workload": pick(["rnd4k-write", "rnd8k-oltp", "bogus", "", "a\nb"]),
                               "--purge": pick(["auto", "trim", "bogus"]), "--size": pick(SIZES),
                               "--profile": pick(["quick", "pts-enterprise", "bogus"]), "--destroy-data": FLAG})


@examples(120)
@given(words=ENDURANCE_OPTIONS)
@example(words=["--duration", "1" * 400 + "d"])     # refused naming the generated profile file, RESULTS made
@example(words=["--size", "9" * 400])               # OverflowError, exit 70
@example(words=["--workload", "a\nb"])             # written unescaped: the generated profile was not TOML
def test_endurance_values_refused_before_work(scratch_root, words):
    d = fresh(scratch_root)
    out = invoke(["endurance", str(d / "no-such-folder" / "x.img"), *words], d)
    assert_handled(out, d, left=(d / "no-such-folder",))
    assert out.code == 2
    assert "endurance-" not in out.stderr, "the error names the profile file endurance writes, not the option"


@examples(60)
@given(words=options(**{"--bin": pick(FLOATS), "--min-drop": pick(FLOATS), "--min-points": pick(COUNTS),
                        "--json": FLAG}),
       log=st.lists(st.tuples(pick(["0", "1000", "-1", "1e308", "nan", "x", ""]), pick(["100", "0", "-5", "x", "1e999"]),
                              st.sampled_from(["0", "1", "x"]), st.sampled_from(["4096", "0", "-1"])), max_size=6))
def test_analyze_slc_cache_values(scratch_root, words, log):
    d = fresh(scratch_root)
    f = d / "bw.log"
    f.write_text("".join(", ".join(row) + "\n" for row in log))
    out = invoke(["analyze", "slc-cache", "--bw-log", str(f), *words], d)
    assert_handled(out, d)


HEALTH = Path(__file__).resolve().parent / "health" / "fixtures"
SNAPSHOTS = ["ata-micron-mx300-before.json", "ata-micron-mx300-after.json"]     # one drive, two times


@examples(80)
@given(words=options(**{"--rated-tbw": pick([f for f in FLOATS if not f.startswith("-")]), "--dwpd": pick(FLOATS),
                        "--warranty-years": pick(FLOATS), "--capacity": pick([*SIZES, "²", "١٠٠"]), "--json": FLAG}),
       snapshots=st.lists(st.one_of(st.sampled_from(SNAPSHOTS), hostile,
                                    st.fixed_dictionaries({"nvme_smart_health_information_log": hostile})),
                          max_size=3))
@example(words=[], snapshots=[0, 0])      # a warning per skipped file, then the error: three lines
@example(words=["--capacity", "²"], snapshots=SNAPSHOTS)     # str.isdigit() yet not int(): ValueError, exit 70
def test_analyze_endurance_values(scratch_root, words, snapshots):
    """(`--rated-tbw -5`, accepted here, is another change's to refuse: negative ratings are left out.)"""
    d = fresh(scratch_root)
    files = [str(HEALTH / s) if s in SNAPSHOTS else str(write_json(d / f"s{i}.json", s))
             for i, s in enumerate(snapshots)]
    out = invoke(["analyze", "endurance", *files, *words], d)
    assert_handled(out, d)


@examples(80)
@given(command=st.sampled_from(["show", "report", "export", "check", "resume", "delete", "compare", "list"]),
       run_id=pick(RUN_IDS),
       words=options(**{"--format": pick(["csv", "json", "tidy-csv", "tidy-json", "xml"]), "--json": FLAG,
                        "--match-mix": pick(["65=70", "70", "=", "65=65", "101=0", "x=y", "65=70=75"]),
                        "--status": pick(["failed", "running", "bogus"]), "--since": pick(["2026-01-01", "x", ""]),
                        "--model": TEXT, "--yes": FLAG}))
@example(command="export", run_id="r1", words=[])    # click listed --format's choices one per line
def test_stored_run_commands_without_results(scratch_root, command, run_id, words):
    """Commands on stored runs, with no results database: refused in one line, nothing created."""
    d = fresh(scratch_root)
    out_dir = d / "out"
    args = [command, *([] if command == "list" else [run_id])]
    if command in ("export", "compare", "report"):
        args += ["--out", str(out_dir)]
    out = invoke(args + words, d)
    assert_handled(out, d, left=(out_dir,))


# --- rules judged against a stored run ---------------------------------------------------------------------

@pytest.fixture(scope="module")
def stored(tmp_path_factory) -> tuple[Path, str]:
    """A results folder with one synthetic completed run (tests/report/synthetic.py), built once."""
    sys.path.insert(0, str(Path(__file__).resolve().parent / "report"))
    from synthetic import build

    results = tmp_path_factory.mktemp("stored") / "results"
    store, run_id = build(results, iops_rounds=6, wsat_rounds=20, tests=("iops", "latency", "wsat"))
    store.close()
    return results, run_id


def run_rows(results: Path) -> list[str]:
    from ssdpts.store import Store

    store = Store.in_dir(results)
    try:
        return [r["id"] for r in store.runs()]
    finally:
        store.close()


@examples(60)
@given(doc=criteria_documents(), run=st.sampled_from(["RUN", "RUN", "PREFIX", "nope", ""]), as_json=st.booleans())
def test_criteria_judged_against_a_stored_run(scratch_root, stored, doc, run, as_json):
    """A rules file that loads is judged against a real stored run: a verdict (0 or 1) or one line; the
    JUnit file exists only when a verdict was reached; the results keep their one run."""
    results, run_id = stored
    d = fresh(scratch_root)
    rules, junit = d / "rules.toml", d / "junit.xml"
    rules.write_text(toml_document(doc), encoding="utf-8")
    rid = {"RUN": run_id, "PREFIX": run_id[:12]}.get(run, run)
    out = invoke(["check", rid, "--criteria", str(rules), "--junit", str(junit), "--results", str(results),
                  *(["--json"] if as_json else [])], d)
    assert_handled(out, d, verdicts=(1,), left=(junit,) if out.code == 2 else ())
    assert out.code == 2 or junit.exists()
    assert run_rows(results) == [run_id]


# --- as a user runs it: a subprocess sample ----------------------------------------------------------------

@examples(6)
@given(doc=profile_documents(), words=PLAN_OPTIONS)
def test_a_subprocess_sample(scratch_root, doc, words):
    """The same promises from a real process (exit status, stderr as a terminal gets it, interpreter exit)."""
    d = fresh(scratch_root)
    out = spawn(["plan", "--capacity", "3.84T", *words, "--profile", str(write_profile(d, doc))], d)
    assert_handled(out, d)


@pytest.mark.parametrize("args", [
    ["plan", "--capacity", "99999999999P"],
    ["plan", "--capacity", "3.84T", "--write-speed", "0.5B/s"],
    ["analyze", "workload", "NEGATIVE_STEP"],
])
def test_values_once_accepted_are_refused(scratch_root, args):
    """Inputs the sweep found accepted (exit 0, nothing to assert then): refused now, in one line."""
    d = fresh(scratch_root)
    if args[-1] == "NEGATIVE_STEP":
        args = [*args[:-1], str(write_json(d / "w.json", changed_workload([(("source", "step_s"), SET, -5)])))]
    out = invoke(args, d)
    assert_handled(out, d)
    assert out.code == 2, out
