"""`ssdpts endurance`: a thin front end for the `endurance` test run by the normal runner.

The options become the [tests.endurance] keys of a profile that `extends` the chosen one, merged and typed
in memory, so the run is stored, resumable (`ssdpts resume RUN_ID`) and reported like any other.
"""

from __future__ import annotations

from pathlib import Path

import click

from ..clock import Clock
from ..runner import lifecycle
from ..errors import SsdptsError
from ..inputs import POSITIVE
from ..profiles import load_profile, shipped, with_test_keys
from ..pts.endurance import WORKLOADS
from ..pts.registry import get as get_test
from ..settings import declarations, run_settings
from ..targets.purge import METHODS
from ..store import Store
from ..units import parse_duration, target_size
from .common import RESULTS_HELP, live_metrics, metrics_options, results_dir as results_dir_of, run_results


def _check_options(values: dict) -> None:
    """Each option against the declaration of the profile key it sets, so a refusal names the option (not the
    merged profile) and comes before anything is written."""
    declared = declarations(get_test("endurance").settings)
    for name, v in values.items():
        if v is not None and not declared[name].check(v):
            raise SsdptsError(f"--{name.replace('_', '-')} {v!r} is invalid; expected {declared[name].what}")


def _remove_if_empty(d: Path) -> None:
    try:
        d.rmdir()
    except OSError:                             # something else was put there meanwhile: it stays
        pass


@click.command()
@click.argument("target")
@click.option("--destroy-data", is_flag=True, help="Consent to overwrite the whole target device.")
@click.option("--profile", "profile", default="pts-enterprise", show_default=True,
              help="Profile whose [tests.endurance] (and defaults) the options below override.")
@click.option("--workload", default=None,
              help="Workload: rnd4k-write (seed: 4 KiB random write, 16 jobs x QD 6), rnd8k-oltp, "
                   "seq128k-write, rnd64k-write, or a [tests.endurance.workloads.NAME] of the profile.")
@click.option("--duration", default=None, help="How long to write, e.g. 72h, 30m [profile default: 72h].")
@click.option("--poll", default=None, help="Health poll interval, e.g. 5m [profile default: 5m].")
@click.option("--threads", type=int, default=None, help="fio numjobs [profile default: 16].")
@click.option("--iodepth", type=int, default=None, help="fio iodepth per job [profile default: 6].")
@click.option("--rated-tbw", type=POSITIVE, default=None, help="The drive's rated endurance in TB (10^12 B).")
@click.option("--dwpd", type=POSITIVE, default=None, help="Rated drive writes per day (with --warranty-years).")
@click.option("--warranty-years", type=POSITIVE, default=None, help="Warranty period for --dwpd.")
@click.option("--purge", "purge_method", default=None,
              type=click.Choice([m for m in METHODS if m != "none"]),   # no --purge: no purge
              help="Purge once before writing [default: no purge; the drive is worn as it is].")
@click.option("--size", default=None, help="Size of a file target, created if missing (e.g. 8G).")
@click.option("--results", default=None, help=RESULTS_HELP)
@click.option("--quiet", "-q", is_flag=True, help="No live progress; the run log is still written.")
@metrics_options
def endurance(target, destroy_data, profile, workload, duration, poll, threads, iodepth, rated_tbw, dwpd,
              warranty_years, purge_method, size, results, quiet, metrics_port, metrics_address, metrics_textfile,
              metrics_linger):
    """Write to TARGET for a long time and watch it wear: wear per TB and per day, projected days to
    end of life at this load, TBW consumed vs rated, WAF over time, temperature.

    \b
    Example (seed 002, a SATA SSD for 3 days, SMART every 5 minutes):
      ssdpts endurance /dev/sdb --destroy-data --duration 72h --poll 5m --rated-tbw 360

    Health comes from smartctl / nvme-cli (or the simulator's counters for sim: targets); devices
    without it (loop, zram, files) still run the workload. Interrupted runs continue with
    'ssdpts resume RUN_ID'; the report has wear, WAF and temperature plots.
    """
    if dwpd is not None and warranty_years is None or warranty_years is not None and dwpd is None:
        raise SsdptsError("--dwpd needs --warranty-years (and the other way round)")
    if rated_tbw is not None and dwpd is not None:
        raise SsdptsError("give either --rated-tbw or --dwpd with --warranty-years, not both")
    for name, v in (("--duration", duration), ("--poll", poll)):
        if v is not None and parse_duration(v, name) <= 0:
            raise SsdptsError(f"{name} must be longer than 0")
    if threads is not None and threads < 1 or iodepth is not None and iodepth < 1:
        raise SsdptsError("--threads and --iodepth must be at least 1")
    base = load_profile(profile)                # a bad --profile fails before anything is written
    values = {"duration": duration, "poll": poll, "workload": workload, "threads": threads, "iodepth": iodepth,
              "rated_tbw": rated_tbw, "dwpd": dwpd, "warranty_years": warranty_years,
              "purge_first": True if purge_method else None}
    _check_options(values)
    # the options set [tests.endurance] of a profile that extends --profile, typed once here (no file: the run
    # stores the merged profile)
    merged = with_test_keys(base, "endurance", values, name=Path(profile).stem + "+endurance",
                            extends=profile if profile in shipped() else str(Path(profile).resolve()),
                            source="ssdpts endurance options")
    chosen = run_settings(merged, {"endurance": get_test("endurance").settings}).of("endurance")
    known = {**WORKLOADS, **chosen.workloads}
    if chosen.workload not in known:
        raise SsdptsError(f"unknown --workload {chosen.workload!r}; allowed: {', '.join(sorted(known))}")
    size_bytes = target_size(size)
    live = live_metrics(metrics_port, metrics_address, metrics_textfile)   # a port in use fails before any file
    try:
        created = not results_dir_of(results).exists()
        with run_results(results) as results_dir:
            run_id = _endure(target, results_dir, merged, size_bytes, destroy_data, purge_method, quiet, live,
                             created)
    finally:
        if live is not None:
            live.close(metrics_linger)
    if not quiet:
        spec = get_test("endurance")
        store = Store.in_dir(results_dir)
        stored = next((t["summary"] for t in store.tests(run_id) if t["name"] == "endurance"), None)
        clock = Clock.of_engine(store.run(run_id)["engine"])
        for line in spec.text(spec.decode(stored), clock) if stored else []:
            click.echo(line)
    click.echo(run_id)


def _endure(target, results_dir: Path, merged: dict, size_bytes, destroy_data, purge_method, quiet, live,
            created: bool) -> str:
    """The endurance run in `results_dir` with the profile its options merged: its id. A refusal before the run
    existed leaves no results directory it made."""
    def runs() -> set:
        return {r["id"] for r in Store.in_dir(results_dir).runs()} if (results_dir / "ssdpts.db").exists() else set()

    before = runs()
    try:
        return lifecycle.start(target, results_dir=results_dir, profile_name=merged, tests=["endurance"],
                               size=size_bytes, destroy_data=destroy_data,
                               purge_method=purge_method or "none", quiet=quiet, live=live)
    except SsdptsError:
        if not runs() - before and created:      # refused before a run existed: leave nothing behind
            _remove_if_empty(results_dir)
        raise
