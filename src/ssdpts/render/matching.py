"""What `ssdpts compare` sets side by side, as typed records: spec-sheet drives, user-approved mix matches,
and which cells each series shares, lacks or had matched. Renderers build their tables from these records,
and the page states every dropped or matched cell above the table (never silently).

Kept free of the test packages (they import it) so that `pts/*/render.py` can use it without a cycle.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Generic, Hashable, Sequence, TypeVar

from markupsafe import Markup, escape

from ..errors import SsdptsError
from ..units import bs_label, parse_size
from .toolkit import mix_label

K = TypeVar("K", bound=Hashable)
V = TypeVar("V")

MIB_PER_MB = 1e6 / 2**20
SPEC_SHEET_SUFFIX = " (spec sheet)"


@dataclass(frozen=True)
class SpecSheet:
    """A drive known only from its claims file (`compare --spec-sheet`), drawn as a dashed series.

    Figures as the overlays use them: IOPS by (block size, read %), sequential MiB/s by (block size or
    None = "the largest measured", direction) converted from the claimed decimal MB/s, QD1 latency µs by
    (block size, direction, statistic)."""

    label: str                                          # "<model> (spec sheet)"
    source: str                                         # the claims file
    iops: dict[tuple[int, int], float] = field(default_factory=dict)
    seq_mib_s: dict[tuple[int | None, str], float] = field(default_factory=dict)
    latency_us: dict[tuple[int, str, str], float] = field(default_factory=dict)

    @classmethod
    def of_claims(cls, claims: dict, source: str) -> "SpecSheet":
        """From a loaded claims file (report.claimed.load_claims)."""
        model = claims.get("drive", {}).get("model") or source
        iops: dict[tuple[int, int], float] = {}
        for t in claims.get("random", []):
            bs = parse_size(t.get("block_size", "4k"))
            for k, pct in (("read_iops", 100), ("write_iops", 0), ("mixed_iops", t.get("mixed_read_pct"))):
                if k in t:
                    iops[(bs, pct)] = t[k]
        seq: dict[tuple[int | None, str], float] = {}
        for t in claims.get("sequential", []):
            bs = parse_size(t["block_size"]) if "block_size" in t else None
            for d in ("read", "write"):
                if f"{d}_mb_s" in t:
                    seq[(bs, d)] = t[f"{d}_mb_s"] * MIB_PER_MB
        lat: dict[tuple[int, str, str], float] = {}
        for t in claims.get("latency", []):
            bs = parse_size(t.get("block_size", "4k"))
            for k, v in t.items():
                if k.endswith("_us"):
                    d, stat = k[:-3].split("_", 1)
                    lat[(bs, d, stat.replace("_", "."))] = v
        return cls(label=f"{model}{SPEC_SHEET_SUFFIX}", source=source, iops=iops, seq_mib_s=seq, latency_us=lat)

    def seq(self, bs: int, direction: str, largest_measured: int | None) -> float | None:
        """The claimed MiB/s at `bs`; a claim without block size stands for the largest measured one."""
        v = self.seq_mib_s.get((bs, direction))
        if v is None and bs == largest_measured:
            v = self.seq_mib_s.get((None, direction))
        return v


def parse_mix_match(text: str) -> tuple[int, int]:
    """'65=70' -> (65, 70): cells at 70 % reads are set beside cells at 65 % reads."""
    a, sep, b = text.partition("=")
    try:
        pair = (int(a), int(b))
    except ValueError:
        pair = None
    if not sep or pair is None or not all(0 <= p <= 100 for p in pair) or pair[0] == pair[1]:
        raise SsdptsError(f"--match-mix {text!r}: give two different read percentages, e.g. --match-mix 65=70 "
                          "(65/35 cells set beside 70/30 cells)")
    return pair


@dataclass(frozen=True)
class CompareOptions:
    """What the user asked `compare` for beyond the runs."""

    spec_sheets: tuple[SpecSheet, ...] = ()
    mix_matches: tuple[tuple[int, int], ...] = ()       # (kept, matched): read % `matched` joins `kept`

    def mix(self, read_pct: int) -> int:
        """The read % a cell is compared under (the first of a --match-mix pair)."""
        return next((kept for kept, other in self.mix_matches if read_pct == other), read_pct)


@dataclass
class MatchedCell:
    series: str
    cell: str               # as the series measured (or claimed) it
    compared_as: str        # the row it joins


@dataclass
class DroppedCell:
    series: str
    cell: str


@dataclass
class CellMatch(Generic[K]):
    """Rows every measured series has, and what was matched across mixes or dropped (present in some only)."""

    keys: list[K]
    matched: list[MatchedCell] = field(default_factory=list)
    dropped: list[DroppedCell] = field(default_factory=list)


def match_cells(series: Sequence[tuple[str, dict[K, V]]], canonical: Callable[[K], K],
                describe: Callable[[K], str]) -> tuple[CellMatch[K], list[dict[K, V]]]:
    """Per series {key: value} -> the shared canonical keys (first series' order) and per series {canonical key:
    value}; a key exactly measured wins over one matched to it."""
    canon: list[dict[K, V]] = []
    matched: list[MatchedCell] = []
    for label, values in series:
        out: dict[K, V] = {k: v for k, v in values.items() if canonical(k) == k}
        for k, v in values.items():
            c = canonical(k)
            if c != k and c not in out:
                out[c] = v
                matched.append(MatchedCell(label, describe(k), describe(c)))
        canon.append(out)
    keys = [k for k in canon[0] if all(k in c for c in canon[1:])] if canon else []
    dropped = [DroppedCell(label, describe(k)) for (label, _), c in zip(series, canon) for k in c if k not in keys]
    return CellMatch(keys, matched, dropped), canon


def match_note(match: CellMatch, spec_sheets: Sequence[str] = ()) -> Markup:
    """The statement above a compare table: matched and dropped cells, and spec sheets with no matching claim."""
    lines = []
    for m in match.matched:
        lines.append(f"{m.series}: {m.cell} compared as {m.compared_as} (--match-mix)")
    for d in match.dropped:
        lines.append(f"{d.series}: {d.cell} dropped (not measured by every run)")
    for s in spec_sheets:
        lines.append(f"{s}: no claim matches a row of this table")
    if not lines:
        return Markup("")
    # one line above the table, the list folded: a page of "0.5K dropped" lines hid the results
    what = [f"{n} cell{'s' if n != 1 else ''} {kind}" for n, kind in (
        (len({d.cell for d in match.dropped}), "left out (not measured by every run)"),
        (len(match.matched), "matched across mixes (--match-mix)"),
        (len(spec_sheets), "spec sheet(s) without a matching claim")) if n]
    return Markup('<details class="compare-notes"><summary>') + escape("; ".join(what)) + Markup(
        "</summary><ul>") + Markup("").join(Markup("<li>") + escape(x) + Markup("</li>") for x in lines) + Markup(
        "</ul></details>")


def mix_canonical(options: CompareOptions) -> Callable[[tuple], tuple]:
    """For keys (block size, read %, ...): the key with its read % as compared."""
    return lambda k: (k[0], options.mix(k[1]), *k[2:])


def describe_bs_mix(k: tuple) -> str:
    return " ".join([bs_label(k[0]), mix_label(k[1]), *map(str, k[2:])])


@dataclass
class Overlay(Generic[K]):
    """One compare table or plot: rows every run measured, a value per series (runs, then spec sheets that
    claim at least one row: None where a sheet claims nothing for that row)."""

    series: list[str]
    spec_sheets: list[str]                   # the series that are spec-sheet drives (dashed)
    match: CellMatch[K]
    values: dict[K, list[float | None]]
    unmatched_sheets: list[str] = field(default_factory=list)

    @property
    def keys(self) -> list[K]:
        return self.match.keys

    def column(self, series: str) -> list[float | None]:
        i = self.series.index(series)
        return [self.values[k][i] for k in self.keys]

    def note(self) -> Markup:
        return match_note(self.match, self.unmatched_sheets)


def overlay(runs: Sequence[tuple[str, dict[K, float | None]]], sheets: Sequence[tuple[str, dict[K, float]]],
            canonical: Callable[[K], K], describe: Callable[[K], str]) -> Overlay[K]:
    """Match the runs' rows (see match_cells), then join each spec sheet's claims on those rows."""
    match, canon = match_cells(runs, canonical, describe)
    series = [label for label, _ in runs]
    values = {k: [c[k] for c in canon] for k in match.keys}
    joined, unmatched = [], []
    for label, claims in sheets:
        by: dict[K, float] = {}
        for k, v in claims.items():
            c = canonical(k)
            if c in values and c not in by:
                by[c] = v
                if c != k:
                    match.matched.append(MatchedCell(label, describe(k), describe(c)))
        if not by:
            unmatched.append(label)
            continue
        joined.append(label)
        series.append(label)
        for k in match.keys:
            values[k].append(by.get(k))
    return Overlay(series, joined, match, values, unmatched)
