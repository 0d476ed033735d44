"""`ssdpts run` and `ssdpts resume`: a run on its targets, and continuing one from its last committed round."""

from __future__ import annotations

import sys

import click

from ..errors import SsdptsError
from ..targets.purge import METHODS as PURGE_METHODS
from .common import RESULTS_HELP, live_metrics, metrics_options, open_store, results_dir, run_results

STRICT_HELP = ("Exit 1 when a test of the run is not conformant (steady state not reached, deviations: the "
               "verdict of 'ssdpts check'). Without it a completed run exits 0 whatever its verdict.")


@click.command()
@click.argument("targets", nargs=-1)
@click.option("--parallel/--sequential", default=True, show_default=True,
              help="With several targets: test them all at once in lock-step (one fio process, results per "
                   "target and summed), or one run after another.")
@click.option("--host", "hosts", multiple=True, metavar="HOST[:PORT]",
              help="Run on a remote 'fio --server' (repeatable); TARGETS are device paths on every host; "
                   "--size gives their size. See docs/scale.md for the secure (SSH tunnel) set-up.")
@click.option("--hosts", "hosts_file", default=None, metavar="FILE",
              help="hosts.toml: [[host]] tables with address, port, targets, size.")
@click.option("--profile", "profile", default=None,
              help="Shipped profile (quick, pts-enterprise, pts-client, pts-e11, review, review-sata, review-dc, "
                   "review-consumer, review-endurance) or a .toml "
                   "file. [default: pts-enterprise; quick for the embedded target]")
@click.option("--tests", default=None, help="Comma-separated tests to run (see 'ssdpts tests') "
                                           "[default: the profile's list, else iops,throughput,latency].")
@click.option("--size", default=None, help="Size of a file target, created if missing (e.g. 8G).")
@click.option("--destroy-data", is_flag=True, help="Consent to overwrite the whole target device.")
@click.option("--purge", "purge_method", default="auto", show_default=True,
              type=click.Choice(PURGE_METHODS),
              help="How to return the device to fresh-out-of-box before each test; 'auto' picks the strongest "
                   "supported, falling back to TRIM (recorded as not a SNIA purge).")
@click.option("--seed", type=click.IntRange(0, 2**32 - 1), default=None,
              help="Seed of the random LBA streams (fio randseed): the same seed repeats the same I/O pattern. "
                   "[default: the profile's seed, else one drawn and stored with the run]")
@click.option("--set-write-cache", is_flag=True,
              help="Consent to set the drive's volatile write cache as the profile's spec requires (PTS-E: "
                   "disabled, PTS-C: enabled) and restore it at the end; without it a mismatch is a recorded "
                   "deviation.")
@click.option("--ignore-doctor", "ignore_doctor", default=None, metavar="CHECK[,CHECK]",
              help="Run although these bench checks fail ('all': every one); the checks still run and are "
                   "recorded with the run. See 'ssdpts doctor TARGET'.")
@click.option("--results", default=None, help=RESULTS_HELP)
@click.option("--quiet", "-q", is_flag=True, help="No live progress; the run log is still written.")
@click.option("--strict", is_flag=True, help=STRICT_HELP)
@click.option("--note", "notes", multiple=True, metavar="TEXT",
              help="A set-up fact kept with the run and shown in its report (adapter, cooling); repeatable.")
@click.option("--label", default=None, metavar="NAME",
              help="The run's name in comparisons and reports (e.g. 'partition', '27 % spare'); 'compare --label "
                   "RUN=NAME' overrides it there.")
@metrics_options
@click.option("--trace-stimulus", is_flag=True,
              help="Read the device's block completions (tracefs, root) while each cell runs and store the LBAs "
                   "it touched (docs/coverage.md); a local block device only. Kept for 'resume'.")
def run(targets, parallel, hosts, hosts_file, profile, tests, size, destroy_data, purge_method, seed, set_write_cache,
        ignore_doctor, results, quiet, strict, notes, label, trace_stimulus, metrics_port, metrics_address,
        metrics_textfile, metrics_linger):
    """Run the test suite on TARGETS: block devices, files, or sim:PRESET.

    Writing to a block device requires --destroy-data; mounted, swap, RAID/LVM member or otherwise
    busy devices are always refused. The bench checks of 'ssdpts doctor' run first and are recorded with
    the run; a failed one refuses the run (--ignore-doctor CHECK runs past it). Every round is committed to the results database as it ends;
    an interrupted run continues with 'ssdpts resume RUN_ID'. Several targets run in parallel
    (lock-step, one fio process; IOPS and MiB/s summed, latency kept per target) or --sequential.
    """
    from ..doctor import parse_ignored
    from ..pts import registry
    from ..runner.checks import checked_label, checked_notes
    from ..runner.lifecycle import start
    from ..units import target_size

    size_bytes = target_size(size)
    ignored = parse_ignored(ignore_doctor)
    notes = checked_notes(notes)
    label = checked_label(label)
    targets = list(targets)
    if hosts or hosts_file:
        targets = _remote_specs(targets, hosts, hosts_file, size_bytes)
    if not targets:
        targets = ["sim:client"]     # the embedded simulated SSD: it belongs to ssdpts
        profile = profile or "quick"
        destroy_data = True
    names = registry.from_option(tests)   # an unknown, repeated or empty name fails before anything is created
    groups = [targets] if parallel else [[t] for t in targets]
    run_ids = []
    live = live_metrics(metrics_port, metrics_address, metrics_textfile)   # a port in use fails before any run
    try:
        with run_results(results) as local:
            for group in groups:
                run_ids.append(start(group, results_dir=local, profile_name=profile or "pts-enterprise",
                                     tests=names, size=size_bytes, destroy_data=destroy_data,
                                     purge_method=purge_method, quiet=quiet, seed=seed,
                                     set_write_cache=set_write_cache, ignore_doctor=ignored, notes=notes,
                                     trace_stimulus=trace_stimulus, label=label, live=live))
                click.echo(run_ids[-1])
    finally:
        if live is not None:
            live.close(metrics_linger)
    if strict:
        exit_if_not_conformant(str(local), run_ids)


def exit_if_not_conformant(results: str | None, run_ids: list[str]) -> None:
    """--strict: exit 1 when a run is not conformant (its run id is still the last line on stdout)."""
    from ..conformance import check
    from ..runresult.model import load_run

    store = open_store(results)
    failing = [r for r in run_ids if not check(load_run(store, r), store).conformant]
    if failing:
        click.echo(f"ssdpts: not conformant: {', '.join(failing)} ('ssdpts check RUN_ID' lists why); "
                   "exit 1 (--strict)", err=True)
        sys.exit(1)


def _remote_specs(paths: list[str], hosts: tuple[str, ...], hosts_file: str | None, size: int | None) -> list[str]:
    from ..targets.remote import from_hosts_file, remote_target, split_host
    from ..targets.resolve import remote_spec

    remote = from_hosts_file(hosts_file, size) if hosts_file else []
    if hosts and not paths:
        raise SsdptsError("--host needs the target device path(s) on those hosts, e.g. --host h1 /dev/nvme0n1")
    for h in hosts:
        host, port = split_host(h)
        remote += [remote_target(host, port, p, size) for p in paths]
    return [remote_spec(t) for t in remote]


@click.command()
@click.argument("run_id")
@click.option("--results", default=None, help=RESULTS_HELP)
@click.option("--quiet", "-q", is_flag=True, help="No live progress.")
@click.option("--strict", is_flag=True, help=STRICT_HELP)
@metrics_options
def resume(run_id, results, quiet, strict, metrics_port, metrics_address, metrics_textfile, metrics_linger):
    """Continue an interrupted or failed run from its last committed round."""
    from ..runner import lifecycle

    local = results_dir(results)
    open_store(str(local)).close()
    live = live_metrics(metrics_port, metrics_address, metrics_textfile)
    try:
        with run_results(results) as local:
            run_id = lifecycle.resume(run_id, results_dir=local, quiet=quiet, live=live)
    finally:
        if live is not None:
            live.close(metrics_linger)
    click.echo(run_id)
    if strict:
        exit_if_not_conformant(results, [run_id])
