"""Settings: every profile key declared once — its kind (type, unit, bounds), its default and what it sets —
and the typed record a test reads, built once from the profile.

A test's settings are a frozen dataclass whose fields are declared with `key(KIND, default, doc)`;
`TestSettings` holds the keys every test accepts, each test package subclasses it with its own keys
(`TestSpec.settings`). `ssdpts.profiles` validates a profile against these declarations before anything is
created or written; `plan`, `run`, reports and `ssdpts profiles --explain` read the same declarations.
Values are parsed here (durations to seconds, sizes to bytes, lists to tuples) and bounded to what fio
takes, so a test never parses a setting or writes a default of its own.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, fields, replace
from typing import Any, Callable, Mapping

from .errors import SsdptsError
from .units import MAX_SIZE, SECTOR, bs_label, parse_duration, parse_size
from .workload.ioengine import ENGINES, URING_OPTIONS, IoRequest
from .workload.spec import DATA_PATTERNS, SYNC_MODES

# fio's limits (fio 3.x source): a job file holds at most REAL_MAX_JOBS = 4096 jobs (fio.h); libaio's
# io_setup() gets iodepth events, bounded by the kernel's default fs.aio-max-nr (65536); randseed is
# stored as 64 bits but ssdpts derives 32-bit round seeds from it; runtime is written in whole ms.
MAX_THREADS = 4096
MAX_IODEPTH = 65536
MAX_SEED = 2**32 - 1
MIN_DURATION_S = 0.001
MAX_DURATION_S = 365 * 86400.0          # a year: beyond any test, and far inside fio's 64-bit µs runtime
# SECTOR (units.py): fio's block size unit (`bs` interval); every block size is a multiple
MAX_BLOCK_SIZE = 2**30                  # fio holds one buffer of this size per I/O in flight
MAX_INT = 2**31 - 1
MAX_MULTIPLE = 1000.0                   # times the capacity: io_size must stay a 64-bit byte count
# the steady-state rules `ssdpts.steady.evaluate` implements (it reads them, and their defaults, from here)
STEADY_RULES = ("snia", "fit-band")


def _same(v: Any) -> Any:
    return v


@dataclass(frozen=True)
class Setting:
    """What a profile key may hold: its kind and bounds (as the error message says it), the check, how the
    profile's value becomes the typed value tests read, and that value's unit."""

    what: str
    ok: Callable[[Any], bool]
    parse: Callable[[Any], Any] = _same
    unit: str = ""

    def check(self, value: Any) -> bool:
        try:
            return bool(self.ok(value))
        except (TypeError, ValueError, OverflowError, SsdptsError):
            return False


def _is_int(v) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def _is_num(v) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)


def integer(lo: int, hi: int, what: str = "") -> Setting:
    return Setting(f"an integer {lo}..{hi}{f' ({what})' if what else ''}", lambda v: _is_int(v) and lo <= v <= hi)


def duration_ok(v) -> bool:
    return not isinstance(v, bool) and MIN_DURATION_S <= parse_duration(v) <= MAX_DURATION_S


def size_ok(v) -> bool:
    return not isinstance(v, bool) and 0 < parse_size(v) <= MAX_SIZE


def block_size_ok(v) -> bool:
    n = parse_size(v) if not isinstance(v, bool) else 0
    return SECTOR <= n <= MAX_BLOCK_SIZE and n % SECTOR == 0


def _pct(v) -> bool:
    return _is_num(v) and 0 <= v <= 100


POS_INT = integer(1, MAX_INT)
THREADS = integer(1, MAX_THREADS, "fio numjobs; fio runs at most 4096 jobs")
IODEPTH = integer(1, MAX_IODEPTH, "fio iodepth; libaio's default limit")
SEED = integer(0, MAX_SEED, "fio randseed")
PCT = Setting("a percentage 0..100", _pct, unit="%")
# tests read it as a fraction of the capacity (v / 100): one that rounds to 0 (5e-324) is 0, not above it
ACTIVE_RANGE = Setting("a percentage above 0, up to 100", lambda v: _is_num(v) and 0 < v / 100 <= 1, unit="%")
FRACTION = Setting("a fraction between 0 and 1, e.g. 0.20", lambda v: _is_num(v) and 0 < v < 1)
BOOL = Setting("true or false", lambda v: isinstance(v, bool))
STR = Setting("a non-empty string", lambda v: isinstance(v, str) and bool(v.strip()))
DURATION = Setting('a duration from 1 ms to 365 days like "1m", "500ms" or seconds', duration_ok,
                   lambda v: parse_duration(v), unit="s")
SIZE = Setting(f'a size greater than zero like "8g" (at most 2^62 bytes)', size_ok, lambda v: parse_size(v), "bytes")
BLOCK_SIZE = Setting(f'a block size like "4k": a multiple of {SECTOR} bytes, at most 1 GiB', block_size_ok,
                     lambda v: parse_size(v), "bytes")
MULTIPLE = Setting(f"a positive number (times the capacity), at most {MAX_MULTIPLE:g}",
                   lambda v: _is_num(v) and 0 < v <= MAX_MULTIPLE, float, "× capacity")
POSITIVE = Setting("a positive number", lambda v: _is_num(v) and v > 0, float)
WINDOW = integer(2, 1000, "rounds in the measurement window")


def choice(*options) -> Setting:
    return Setting(f"one of {', '.join(map(str, options))}", lambda v: isinstance(v, str) and v in options)


def list_of(item: Setting, what: str | None = None) -> Setting:
    """A non-empty list of `item`, read as a tuple of its parsed values."""
    return Setting(what or f"a list, each {item.what}",
                   lambda v: isinstance(v, list) and bool(v) and all(item.check(x) for x in v),
                   lambda v: tuple(item.parse(x) for x in v), item.unit)


BLOCK_SIZES = list_of(BLOCK_SIZE, f'a list of block sizes like ["4k", "128k"] (multiples of {SECTOR} bytes)')
PCTS = list_of(Setting("a read %", lambda v: _is_int(v) and 0 <= v <= 100, unit="%"),
               "a list of read percentages like [100, 65, 0]")
DURATIONS = list_of(DURATION, 'a list of durations like ["5s", "10s"]')
TRACK = Setting('a list of [block size, read %] pairs like [["4k", 0]]',
                lambda v: isinstance(v, list) and bool(v) and all(
                    isinstance(x, list) and len(x) == 2 and block_size_ok(x[0]) and _is_int(x[1]) and 0 <= x[1] <= 100
                    for x in v),
                lambda v: tuple((parse_size(b), int(m)) for b, m in v))


@dataclass(frozen=True)
class Key:
    """One profile key's declaration: its kind, its default as a profile would write it (None: unset) and
    what it sets."""

    kind: Setting
    default: Any
    doc: str

    def value(self, raw: Any) -> Any:
        return None if raw is None else self.kind.parse(raw)

    # a Key stands where a kind is expected (profile validation)
    what = property(lambda self: self.kind.what)

    def check(self, value: Any) -> bool:
        return self.kind.check(value)


_KEY = "ssdpts.key"


def key(kind: Setting, default: Any, doc: str) -> Any:
    """A field of a settings record that is a profile key: the typed default is the parsed declared one."""
    decl = Key(kind, default, doc)
    value = decl.value(default)
    if value is not None and getattr(type(value), "__hash__", None) is None:   # a mutable default: one per record
        return field(default_factory=lambda: decl.value(default), metadata={_KEY: decl})
    return field(default=value, metadata={_KEY: decl})


def declarations(record: type) -> dict[str, Key]:
    """The profile keys a settings record declares, in declaration order."""
    return {f.name: f.metadata[_KEY] for f in fields(record) if _KEY in f.metadata}


def build(record: type, raw: Mapping[str, Any], where: str, **extra: Any):
    """The typed record from a table of raw profile values (keys it does not declare are ignored: [defaults]
    holds run-wide keys too); a value outside its kind is one line naming `where`, the key and the kind."""
    values = dict(extra)
    for name, decl in declarations(record).items():
        if name not in raw:
            continue
        v = raw[name]
        if not decl.check(v):
            raise SsdptsError(f"{where}.{name} = {v!r} is invalid; expected {decl.what}")
        values[name] = decl.value(v)
    return record(**values)


def declared_default(record: type, name: str, default: Any) -> Any:
    """A key declared again in a subclass with another default (its kind and doc stay the declared ones)."""
    decl = declarations(record)[name]
    return key(decl.kind, default, decl.doc)


@dataclass(frozen=True)
class SteadySettings:
    """[steady_state]: how a tracked variable is judged steady."""

    rule: str = key(choice(*STEADY_RULES), "snia", "snia: range and slope of the window's least-squares line "
                                                     "(PTS 2.0.2 §2.1.24); fit-band: the line within ±max_slope of the mean")
    window: int = key(WINDOW, 5, "rounds in the measurement window")
    max_range: float = key(FRACTION, 0.20, "largest (max - min) of the window, as a share of its mean")
    max_slope: float = key(FRACTION, 0.10, "largest excursion of the window's fitted line, as a share of its mean")
    max_rounds: int = key(POS_INT, 25, "rounds at most before the test gives up on steady state")
    inclusive: bool = key(BOOL, True, "the limits themselves count as steady")

    def evaluate_kw(self) -> dict:
        """The keyword arguments of `steady.evaluate`."""
        return {"window": self.window, "max_range": self.max_range, "max_slope": self.max_slope, "rule": self.rule,
                "inclusive": self.inclusive}


@dataclass(frozen=True)
class WipcSettings:
    """[wipc]: SNIA workload-independent preconditioning (sequential writes over the active range)."""

    block_size: int = key(BLOCK_SIZE, "128k", "block size of the preconditioning writes")
    multiple: float = key(MULTIPLE, 2.0, "bytes written, in times the user capacity")
    threads: int | None = key(THREADS, None, "jobs (unset: the test's threads)")
    iodepth: int | None = key(IODEPTH, None, "I/Os in flight per job (unset: the test's iodepth)")


@dataclass(frozen=True)
class RunDefaults:
    """[defaults] keys that belong to the run rather than to one test."""

    write_cache: str = key(choice("enabled", "disabled", "unchanged"), "unchanged",
                           "the drive's volatile write cache the spec asks for (PTS-E disabled, PTS-C enabled)")
    purge: str | None = key(STR, None, "a note on the purge the profile expects ('ssdpts run --purge' chooses it)")
    seed: int | None = key(SEED, None, "base of every cell's fio randseed (unset: drawn for the run and stored)")
    # the spec fixes no engine; docs/bench.md "The I/O engine" has the checks and why auto is the default
    ioengine: str = key(choice(*ENGINES), "auto", "fio's I/O engine; auto: io_uring where fio, the kernel and the "
                                                 "target offer it, else libaio (the choice and why are recorded)")
    fixedbufs: bool = key(BOOL, False, "io_uring: buffers registered once (fio fixedbufs)")
    registerfiles: bool = key(BOOL, False, "io_uring: files registered once (fio registerfiles)")
    hipri: bool = key(BOOL, False, "io_uring: polled completions (fio hipri); needs poll queues on the device")
    sqthread_poll: bool = key(BOOL, False, "io_uring: a kernel thread submits and polls (fio sqthread_poll)")

    def io_request(self) -> IoRequest:
        return IoRequest(self.ioengine, tuple(o for o in URING_OPTIONS if getattr(self, o)))


@dataclass(frozen=True)
class TestSettings:
    """The keys every test accepts ([defaults] and any [tests.NAME]), and what the run's other sections give
    every test. A test's own record subclasses this with its keys."""

    __test__ = False    # not a pytest test class (its name starts with "Test")

    threads: int = key(THREADS, 1, "jobs per cell: SNIA's thread count (TC), fio numjobs")
    iodepth: int = key(IODEPTH, 1, "I/Os in flight per job: SNIA's queue depth (QD), fio iodepth")
    cell_runtime: float = key(DURATION, "1m", "length of one cell of a round")
    active_range: float = key(ACTIVE_RANGE, 100, "share of the capacity the test's I/O covers")
    max_rounds: int | None = key(POS_INT, None, "rounds at most (unset: [steady_state] max_rounds; a file "
                                                "extending this one that sets that key sets this one too)")
    data_pattern: str = key(choice(*DATA_PATTERNS), "random", "what the written blocks hold")
    # off-spec for a PTS test (a recorded deviation): SNIA measures direct, unsynchronised I/O
    sync: str = key(choice(*SYNC_MODES), "none", "fio sync of the cells: none, dsync (O_DSYNC) or sync (O_SYNC)")
    direct: bool = key(BOOL, True, "O_DIRECT I/O; false: through the host's page cache (measures it, not the drive)")
    temperature_interval: float = key(DURATION, "10s", "how often the drive's temperature is read during the test")
    # from the profile's other sections: not keys of [tests.NAME]
    seed: int | None = None
    steady: SteadySettings = field(default_factory=SteadySettings)
    wipc: WipcSettings = field(default_factory=WipcSettings)

    def every_block_size(self) -> list[tuple[str, int]]:
        """(key, bytes) of every block size this record holds (lists and [size, mix] pairs included)."""
        out = []
        for name, decl in declarations(type(self)).items():
            value = getattr(self, name)
            if value is None:
                continue
            if decl.kind in (BLOCK_SIZE, BLOCK_SIZES):
                out += [(name, v) for v in (value if isinstance(value, tuple) else (value,))]
            elif decl.kind is TRACK:
                out += [(name, bs) for bs, _ in value]
        return out + [("wipc.block_size", self.wipc.block_size)]

    def check(self, test: str, logical_block_size: int) -> None:
        """What the settings' kinds cannot say alone (keys that must agree, the target's block size): one line
        naming `test` and the key, before a run is created. A test's record adds its own."""
        self.check_block_sizes(test, logical_block_size)

    def check_block_sizes(self, test: str, logical_block_size: int) -> None:
        """fio cannot do I/O that is not a multiple of the target's logical block size (sizes below it are
        skipped with a note by the tests that sweep block sizes)."""
        for name, bs in self.every_block_size():
            if bs >= logical_block_size and bs % logical_block_size:
                raise SsdptsError(f"{test}.{name}: {bs_label(bs)} ({bs} bytes) is not a multiple of the target's "
                                  f"{logical_block_size}-byte logical block size; use a multiple of it")


COMMON_TEST_KEYS: dict[str, Key] = declarations(TestSettings)

# The profile's sections other than [tests.NAME].
SECTIONS: dict[str, dict[str, Any]] = {
    "profile": {"name": STR, "description": Setting("a string", lambda v: isinstance(v, str)), "spec": STR,
                "extends": STR,
                # each named once and registered: checked by the profile loader, naming the offending entry
                "tests": Setting("a list of test names", lambda v: isinstance(v, list)
                                 and all(isinstance(x, str) for x in v))},
    "defaults": {**{k: COMMON_TEST_KEYS[k] for k in ("threads", "iodepth", "active_range", "data_pattern",
                                                       "sync", "direct")},
                 **declarations(RunDefaults)},
    "steady_state": declarations(SteadySettings),
    "wipc": declarations(WipcSettings),
}


def run_defaults(profile: dict) -> RunDefaults:
    """The profile's run-wide [defaults] keys, typed."""
    name = (profile.get("profile") or {}).get("name", "?")
    return build(RunDefaults, profile.get("defaults") or {}, f"profile {name}: defaults")


def test_settings(profile: dict, test: str) -> dict:
    """A test's raw settings as the profile writes them: [defaults] overlaid by [tests.TEST]."""
    out = dict(profile.get("defaults", {}))
    out.update(profile.get("tests", {}).get(test, {}))
    return out


def rounds_are_steady_states(record: type[TestSettings]) -> bool:
    """Whether the test's max_rounds is the common key that bounds [steady_state] rounds (wsat's is its own:
    intervals of its time series)."""
    return declarations(record)["max_rounds"] is COMMON_TEST_KEYS["max_rounds"]


def typed_settings(record: type[TestSettings], profile: dict, test: str) -> TestSettings:
    """A test's typed settings, built once from the (merged) profile: [defaults] overlaid by [tests.TEST],
    [steady_state] (its max_rounds overridden by the test's own max_rounds when the key is the common one)
    and [wipc]."""
    raw = test_settings(profile, test)
    name = (profile.get("profile") or {}).get("name", "?")
    steady_raw = dict(profile.get("steady_state", {}))
    own_max_rounds = not rounds_are_steady_states(record)
    if "max_rounds" in raw and not own_max_rounds:
        steady_raw["max_rounds"] = raw["max_rounds"]
    steady = build(SteadySettings, steady_raw, f"profile {name}: steady_state")
    if not own_max_rounds and steady.max_rounds < steady.window:
        raise SsdptsError(f"profile {name}: {test} max_rounds = {steady.max_rounds} is below the steady-state "
                          f"window of {steady.window} rounds: steady state could never be judged; raise max_rounds "
                          f"to {steady.window} or more")
    wipc = build(WipcSettings, profile.get("wipc", {}), f"profile {name}: wipc")
    seed = build(RunDefaults, profile.get("defaults", {}), f"profile {name}: defaults").seed
    return build(record, raw, f"profile {name}: tests.{test}", steady=steady, wipc=wipc, seed=seed)


@dataclass(frozen=True)
class RunSettings:
    """A run's settings, typed once where the run starts (from the merged profile) or where a stored run is
    read (from the profile it stored), and handed down: every stage reads its values here.

    `profile` is the merged profile as data, for the run record and the results JSON only (its `profile` key
    stays as users and docs/results.schema.json know it); no stage reads a setting from it."""

    name: str
    spec: str                                   # the spec the profile claims ("" when it claims none)
    defaults: RunDefaults
    tests: Mapping[str, TestSettings]
    profile: Mapping[str, Any] = field(repr=False, compare=False)

    def with_seed(self, seed: int) -> RunSettings:
        """The record with the run's base seed, chosen where the run starts, set everywhere it is read (the
        profile the run stores included: resume and every round use it)."""
        profile = {**self.profile, "defaults": {**(self.profile.get("defaults") or {}), "seed": seed}}
        return replace(self, defaults=run_defaults(profile), profile=profile,
                       tests={name: replace(test, seed=seed) for name, test in self.tests.items()})

    def of(self, test: str) -> TestSettings:
        """The typed settings of `test`, one of the tests the record was built for."""
        try:
            return self.tests[test]
        except KeyError:
            raise SsdptsError(f"profile {self.name}: no settings were built for test {test!r}") from None


def run_settings(profile: dict, records: Mapping[str, type[TestSettings]] | None = None) -> RunSettings:
    """The run's typed settings from a merged profile: its [defaults] and each test's record (`records`: test
    name to its settings class, passed in because the tests sit above this module)."""
    head = profile.get("profile") or {}
    return RunSettings(name=head.get("name", "?"), spec=str(head.get("spec") or ""), defaults=run_defaults(profile),
                       tests={t: typed_settings(r, profile, t) for t, r in (records or {}).items()},
                       profile=profile)


def explain(section: str, keys: Mapping[str, Key | Setting]) -> list[str]:
    """`ssdpts profiles --explain`: each key of a section with its unit, default, what it sets, kind and bounds."""
    lines = [f"[{section}]"]
    for name, decl in keys.items():
        if isinstance(decl, Key):
            default = "unset" if decl.default is None else repr(decl.default)
            unit = f" [{decl.kind.unit}]" if decl.kind.unit else ""
            lines += [f"  {name}{unit} = {default}: {decl.doc}", f"      {decl.kind.what}"]
        else:
            lines.append(f"  {name}: {decl.what}")
    return lines
