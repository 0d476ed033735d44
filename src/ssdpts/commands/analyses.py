"""The commands of `ssdpts analyze` (commands/analyze.py lists them): offline analyses of saved logs, snapshots
and captures, without running anything. The analyses live in ssdpts/analyze; here are their command lines."""

from __future__ import annotations

import json

import click

from ..analyze.endurance import load_snapshots
from ..analyze.slc_cache import format_text as slc_cache_text, read_bw_log
from ..analyze.workload import DEFAULT_TOP, analyze as analyze_workload, check, format_text, to_json, write_html
from ..capture.model import load
from ..errors import SsdptsError
from ..inputs import FINITE, POSITIVE, output_dir
from ..pts.slc_cache.steps import DEFAULT_MIN_DROP, DEFAULT_MIN_POINTS, estimate



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
def endurance(snapshots, rated_tbw, dwpd, warranty_years, capacity, as_json):
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


@click.command("slc-cache")
@click.option("--bw-log", "logs", required=True, multiple=True, type=click.Path(),
              help="fio bandwidth log (write_bw_log, best with log_avg_msec); repeat for one file per job (summed).")
@click.option("--bin", "bin_s", type=FINITE, default=None,
              help="Seconds per bin for per-I/O logs (no log_avg_msec): bytes per bin / bin.")
@click.option("--min-drop", type=FINITE, default=DEFAULT_MIN_DROP, show_default=True,
              help="Smallest level change that counts as a step, as a fraction of the higher level.")
@click.option("--min-points", type=int, default=DEFAULT_MIN_POINTS, show_default=True,
              help="Shortest step, in log intervals.")
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
def slc_cache(logs, bin_s, min_drop, min_points, as_json):
    """Find the SLC-cache steps in a sequential-write bandwidth log and estimate the cache size."""
    if not 0 < min_drop < 1:
        raise SsdptsError(f"--min-drop {min_drop} must be between 0 and 1, e.g. 0.15")
    if min_points < 1:
        raise SsdptsError("--min-points must be >= 1")
    if bin_s is not None and bin_s <= 0:
        raise SsdptsError(f"--bin {bin_s:g} must be a positive number of seconds, e.g. 1")
    try:
        times, mibs, durs = read_bw_log(logs, bin_s)
    except ValueError as e:
        raise SsdptsError(str(e)) from None
    result = estimate(times, mibs, durations=durs, min_drop=min_drop, min_points=min_points)
    result["source"] = [str(p) for p in logs]
    click.echo(json.dumps(result, indent=1) if as_json else slc_cache_text(result))


@click.command("workload")
@click.argument("file", type=click.Path(dir_okay=False))
@click.option("--top", "top_n", type=int, default=DEFAULT_TOP, show_default=True,
              help="How many streams make the applied test workload; the rest are shown as 'other'.")
@click.option("--out", "out_dir", default=None, type=click.Path(file_okay=False),
              help="Also write DIR/workload.html with PNG/SVG charts and CSV tables.")
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
def workload(file, top_n, out_dir, as_json):
    """The IO streams of a captured workload (ssdpts capture): stream map, top-N table, read/write and
    random/sequential shares, queue depth over time.

    \b
    Example:
      ssdpts analyze workload app.workload.json --top 5 --out app-report
    """
    if top_n < 1:
        raise SsdptsError(f"--top {top_n}: give the number of streams to name, 1 or more (e.g. --top 5)")
    if out_dir:
        output_dir(out_dir, "--out")
    capture = load(file)
    check(capture, file)
    result = analyze_workload(capture, top_n, file)
    html = write_html(result, out_dir) if out_dir else None
    if as_json:
        doc = to_json(result)
        doc["html"] = str(html) if html else None
        click.echo(json.dumps(doc, indent=1))
        return
    click.echo(format_text(result))
    if html:
        click.echo(f"\n{html}")
