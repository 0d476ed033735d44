#!/usr/bin/env python3
"""Simulator presets against the reviews they were shaped on (shared/seeds/).

    python bench/sim_presets.py [--markdown] [--preset client ...]

Runs every figure of ssdpts.simdrive.calibration.FIGURES on its preset (scale 1) and prints the
review's number, the simulated one and the deviation; exits 1 when a figure that is held to the
tolerance (15 %) misses it. --markdown prints the table of docs/simulator.md.
"""
from __future__ import annotations

import argparse
import sys

from ssdpts.simdrive.calibration import TOLERANCE, Comparison, compare


def fmt(v: float, unit: str) -> str:
    return f"{v:,.0f}" if abs(v) >= 100 else f"{v:.1f}"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--markdown", action="store_true", help="print the docs/simulator.md table")
    ap.add_argument("--preset", action="append", help="only these presets")
    a = ap.parse_args()
    rows: list[Comparison] = compare(presets=set(a.preset) if a.preset else None)
    bad = [c for c in rows if c.within is False]
    if a.markdown:
        print("| preset | review (seed) figure | simulated measurement | review | simulated | deviation |")
        print("|---|---|---|---|---|---|")
        for c in rows:
            f = c.figure
            held = "" if f.tolerance is not None else " (not held: " + f.note + ")"
            note = f" ({f.note})" if f.note and f.tolerance is not None else ""
            print(f"| `{f.preset}` | {f.where}{note} | {f.what} | {fmt(f.value, f.unit)} {f.unit} | "
                  f"{fmt(c.simulated, f.unit)} {f.unit} | {c.deviation * 100:+.1f} %{held} |")
    else:
        print(f"{'preset':10} {'figure':62} {'review':>12} {'simulated':>12} {'dev':>8}")
        for c in rows:
            f = c.figure
            mark = "" if c.within else (" (info)" if c.within is None else "  MISS")
            print(f"{f.preset:10} {f.what[:62]:62} {fmt(f.value, f.unit):>12} {fmt(c.simulated, f.unit):>12} "
                  f"{c.deviation * 100:+7.1f}%{mark}  {f.unit}")
        print(f"{len(rows) - len(bad)} of {sum(c.within is not None for c in rows)} held figures within "
              f"{TOLERANCE:.0%}; {sum(c.within is None for c in rows)} shown for information")
    if bad:
        sys.exit(1)


if __name__ == "__main__":
    main()
