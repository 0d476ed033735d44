"""`ssdpts analyze endurance SNAPSHOT.json ...`: wear / WAF projection from saved health snapshots.

Input files: `smartctl -j -a DEV` output (timestamp from its `local_time`), `nvme smart-log DEV -o json`
output (timestamp from the file's modification time), or ssdpts health records. Nothing is run on a
device. The maths is `ssdpts.health.projection`, the same as the endurance test's.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import click

from ..errors import SsdptsError
from ..inputs import POSITIVE, read_json


def load_snapshots(paths) -> list[dict]:
    from ..health.parse import parse_document

    recs = []
    for p in paths:
        path = Path(p)
        doc = read_json(path, "health snapshot", hint="save snapshots with 'smartctl -j -a DEV' or "
                                                      "'nvme smart-log DEV -o json'")
        rec = parse_document(doc, mtime=os.path.getmtime(path), name=str(p))
        rec["t"] = rec.get("timestamp")
        recs.append(rec)
    return sorted(recs, key=lambda r: (r.get("t") or 0))


def _plain(obj):
    """JSON-safe: big ints stay exact ints; drop the raw documents."""
    if isinstance(obj, dict):
        return {k: _plain(v) for k, v in obj.items() if k != "raw"}
    if isinstance(obj, list):
        return [_plain(v) for v in obj]
    return obj


@click.command("endurance")
@click.argument("snapshots", nargs=-1, required=True, type=click.Path(dir_okay=False))
@click.option("--rated-tbw", type=POSITIVE, default=None, help="Rated endurance in TB (10^12 B).")
@click.option("--dwpd", type=POSITIVE, default=None, help="Rated drive writes per day (needs --warranty-years).")
@click.option("--warranty-years", type=POSITIVE, default=None)
@click.option("--capacity", default=None, help="Drive capacity for --dwpd as vendors write it (G, T = 10^9, 10^12 "
                                               "bytes; GiB, TiB binary), e.g. 1050G or 1050214588416 "
                                               "[default: from the snapshots].")
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
def command(snapshots, rated_tbw, dwpd, warranty_years, capacity, as_json):
    """Projection from two or more saved smartctl / nvme-cli JSON snapshots of one drive.

    \b
    Example (a cron job saved one snapshot every 5 minutes):
      ssdpts analyze endurance smart-*.json --rated-tbw 360
    """
    from ..health.projection import project, summary_lines
    from ..health.record import HealthSnapshot
    from ..units import parse_capacity

    if len(snapshots) < 2:
        raise SsdptsError("give at least two snapshots of the same drive (taken at different times)")
    if (dwpd is None) != (warranty_years is None):
        raise SsdptsError("--dwpd needs --warranty-years (and the other way round)")
    recs = load_snapshots(snapshots)
    bad = [r for r in recs if not r.get("available")]
    good = [r for r in recs if r.get("available")]
    serials = {r.get("serial") for r in good if r.get("serial")}
    if len(serials) > 1:
        raise SsdptsError(f"the snapshots are of different drives (serials {', '.join(sorted(serials))}); "
                          "give snapshots of one drive")
    if sum(1 for r in good if r.get("t") is not None) < 2:
        skipped = f" ({len(bad)} skipped: {bad[0]['file']}: {bad[0].get('reason')}{', ...' if len(bad) > 1 else ''})" \
            if bad else ""
        raise SsdptsError(f"fewer than two snapshots with health data and a timestamp{skipped}; give two or more "
                          "smartctl / nvme-cli JSON snapshots of the drive")
    cap = None
    if capacity:
        cap = parse_capacity(capacity, "--capacity")
    else:
        for r in good:
            uc = (((r.get("raw") or {}).get("smartctl") or {}).get("user_capacity") or {}).get("bytes")
            cap = cap or r.get("capacity_bytes") or uc
    proj = project([HealthSnapshot.from_dict(r) for r in good], rated_tbw_tb=rated_tbw, dwpd=dwpd,
                   warranty_years=warranty_years, capacity_bytes=cap)
    if not proj.get("available"):
        raise SsdptsError(f"no projection: {proj.get('reason')}")
    for r in bad:                               # the command goes on: a warning each (a refusal is one line)
        click.echo(f"ssdpts: warning: {r['file']}: no health data ({r.get('reason')}); skipped", err=True)
    model = next((r.get("model") for r in good if r.get("model")), None)
    if as_json:
        doc = {"schema": "ssdpts.endurance-analysis/1", "model": model, "serial": next(iter(serials), None),
               "capacity_bytes": cap, "snapshots": [_plain(r) for r in recs], "projection": _plain(proj)}
        click.echo(json.dumps(doc, indent=2, default=str))
        return
    click.echo(f"drive      {model or 'unknown model'}" + (f" (serial {next(iter(serials))})" if serials else ""))
    click.echo(f"snapshots  {len(good)} with health data" + (f", {len(bad)} skipped" if bad else ""))
    for label, text in summary_lines(proj):
        click.echo(f"{label:22} {text}")
