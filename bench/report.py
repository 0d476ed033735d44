"""Time to build the HTML report for a synthetic full PTS-E data set (target: under 5 s).

IOPS 25 rounds x 56 cells (with latency histograms), Throughput 128K + 1024K, Latency 3 x 3, and a
600-round WSAT series (tests/report/synthetic.py: fabricated data stays with the tests).

    python bench/report.py [--keep DIR]
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
import time
from pathlib import Path


def du(path: Path) -> int:
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file())


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--keep", help="build in this directory and keep it")
    ap.add_argument("--target", type=float, default=5.0, help="seconds; exit 1 when slower")
    args = ap.parse_args()
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "report"))
    from ssdpts.report.html import write_report
    from synthetic import build

    work = Path(args.keep) if args.keep else Path(tempfile.mkdtemp(prefix="ssdpts-bench-report-"))
    try:
        t = time.perf_counter()
        store, run_id = build(work / "results")
        t_fill = time.perf_counter() - t
        n_rounds = store.db.execute("SELECT COUNT(*) FROM rounds WHERE run_id=?", (run_id,)).fetchone()[0]
        n_cells = store.db.execute("SELECT COUNT(*) FROM cells c JOIN rounds r ON r.id=c.round_id WHERE r.run_id=?",
                                   (run_id,)).fetchone()[0]
        t = time.perf_counter()
        path = write_report(store, run_id, work / "report", strict=True)
        t_report = time.perf_counter() - t
        out = path.parent
        pngs = list((out / "plots").glob("*.png"))
        svgs = list((out / "plots").glob("*.svg"))
        csvs = list((out / "tables").glob("*.csv"))
        print(f"data set     run {run_id}: {n_rounds} rounds, {n_cells} cells, database "
              f"{du(work / 'results') / 2**20:.1f} MiB (synthesised in {t_fill:.1f} s)")
        print(f"report       {path}")
        print(f"  sizes      report.html {path.stat().st_size / 2**20:.2f} MiB, directory {du(out) / 2**20:.2f} MiB; "
              f"{len(pngs)} PNG, {len(svgs)} SVG, {len(csvs)} CSV")
        print(f"time         {t_report:.2f} s to build the report (target < {args.target:g} s)")
        return 0 if t_report < args.target else 1
    finally:
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
