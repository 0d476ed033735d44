"""`ssdpts doctor [TARGET]`: the bench checked before it measures (the same checks `run` makes first)."""

from __future__ import annotations

import json
import sys

import click



@click.command()
@click.argument("target", required=False)
@click.option("--profile", "profile", default="pts-enterprise", show_default=True,
              help="The write cache is judged against this profile's [defaults] write_cache.")
@click.option("--set-write-cache", is_flag=True, help="As 'run --set-write-cache': a mismatch will be set, not warned.")
@click.option("--json", "as_json", is_flag=True, help="Machine-readable: every check with status, found and fix.")
def doctor(target, profile, set_write_cache, as_json):
    """Check the bench before measuring: fio, smartctl/nvme-cli, privileges, CPU governor and boost, the
    target's I/O scheduler and nr_requests, processes holding it, memory for the simulator, the drive's
    temperature and its write cache against the profile (read-only; docs/doctor.md).

    Each line is ok, warn, fail or n/a (cannot be read here), with the fix. Exit 1 when a check fails,
    else 0. 'ssdpts run' makes the same checks first and refuses on a fail (see its --ignore-doctor).
    """
    from ..doctor import Bench, Status, counts, examine    # here: `doctor --help` is light
    from ..profiles import load_profile
    from ..settings import run_settings
    from ..targets import open_target

    required = run_settings(load_profile(profile)).defaults.write_cache
    bench = Bench(target=open_target(target) if target else None, write_cache_required=required,
                  set_write_cache=set_write_cache)
    findings = examine(bench)
    failed = any(f.status is Status.FAIL for f in findings)
    if as_json:
        click.echo(json.dumps({"target": target, "ok": not failed, "checks": [f.to_dict() for f in findings]},
                              indent=2))
    else:
        for f in findings:
            click.echo(f.line())
        click.echo(counts(findings))
    sys.exit(1 if failed else 0)
