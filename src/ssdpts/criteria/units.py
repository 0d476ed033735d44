"""Units a rule may state its threshold in, by dimension: a threshold converts to the figure's unit only
within one dimension (µs ↔ ns ↔ s, MB/s ↔ MiB/s, % ↔ ratio); across dimensions a rule is refused."""

from __future__ import annotations

from dataclasses import dataclass

from ..errors import SsdptsError


@dataclass(frozen=True)
class Unit:
    name: str
    dimension: str
    scale: float          # this unit in the dimension's base unit


def _units(dimension: str, **scales: float) -> dict[str, Unit]:
    return {name: Unit(name, dimension, scale) for name, scale in scales.items()}


_SPELLED = {"us": "µs", "usec": "µs", "msec": "ms", "sec": "s", "iops": "IOPS", "kiops": "kIOPS", "percent": "%",
            "none": "", "x": ""}

UNITS: dict[str, Unit] = {
    **_units("time", **{"ns": 1e-3, "µs": 1.0, "ms": 1e3, "s": 1e6}),
    **_units("I/O rate", IOPS=1.0, kIOPS=1e3),
    **_units("bandwidth", **{"B/s": 1.0, "KB/s": 1e3, "MB/s": 1e6, "GB/s": 1e9,
                             "KiB/s": 2**10, "MiB/s": 2**20, "GiB/s": 2**30}),
    **_units("size", **{"B": 1.0, "KB": 1e3, "MB": 1e6, "GB": 1e9, "TB": 1e12,
                        "KiB": 2**10, "MiB": 2**20, "GiB": 2**30, "TiB": 2**40}),
    **_units("share", **{"%": 1.0, "ratio": 100.0}),
    **_units("wear rate", **{"%/day": 1.0}),
    **_units("duration", days=1.0),
    **_units("count", rounds=1.0, deviations=1.0),
    **_units("number", **{"": 1.0}),
}


def unit(name: str, where: str) -> Unit:
    """The unit spelled `name` (a few spellings each: "us" is µs); `where` names the rule in the error."""
    found = UNITS.get(_SPELLED.get(name.strip().lower(), name.strip()))
    if found is None:
        raise SsdptsError(f"{where}: unknown unit {name!r}; use one of "
                          f"{', '.join(repr(u) for u in UNITS if u)} (or none for a plain number)")
    return found


def convert(value: float, source: Unit, target: Unit, where: str) -> float:
    """`value` in `source` expressed in `target`; refused across dimensions (IOPS are not MB/s)."""
    if source.dimension != target.dimension:
        raise SsdptsError(f"{where}: the threshold is in {source.name or 'no unit'} ({source.dimension}) but the "
                          f"figure is in {target.name or 'no unit'} ({target.dimension}); give the threshold in "
                          f"{target.name or 'no unit'} or another {target.dimension} unit")
    return value * source.scale / target.scale
