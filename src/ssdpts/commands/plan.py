"""`ssdpts plan`: a dry run — every phase of every test in order, durations and bytes, touching nothing."""

from __future__ import annotations

import json

import click

from ..errors import SsdptsError
from ..profiles import load_profile, profile_tests
from ..pts import registry
from ..pts.plan import TestPlan
from ..records import to_data
from ..runner import check_settings, plans_for
from ..targets import Target, open_target
from ..targets.purge import METHODS
from ..units import format_duration, parse_size


def build_plans(target: Target, profile_name: str, tests: list[str] | None, purge_method: str = "auto"
                ) -> tuple[dict, list[tuple[str, TestPlan]]]:
    """(the merged profile, [(test title, plan)]) — reads the target, writes nothing."""
    profile = load_profile(profile_name)
    names = tests or profile_tests(profile)
    for name in names:
        if registry.get(name).plan is None:
            raise SsdptsError(f"test {name} declares no plan; it cannot be dry-run yet")
    check_settings([registry.get(n) for n in names], profile, target)
    return profile, [(registry.get(p.test).title, p) for p in plans_for(target, profile, names, purge_method)]


def _span(lo: float | None, hi: float | None) -> str:
    if lo is None or hi is None:
        return "depends on the drive's speed"
    return format_duration(lo) if lo == hi else f"{format_duration(lo)} – {format_duration(hi)}"


def _gb(n: int) -> str:
    return f"{n / 1e9:,.2f} GB"


def _duration(plan: TestPlan) -> str:
    text = _span(plan.seconds_min, plan.seconds_max)
    if plan.size_bound_bytes:
        text += f" + writing {_gb(plan.size_bound_bytes)} at the drive's speed"
    return text


def _written(plan: TestPlan) -> str:
    known = plan.bytes_written_known
    return _gb(known) if plan.bytes_exact else f"{_gb(known)} + time-bound writes (their amount depends on the drive)"


def render_plan(target: Target, profile: dict, plans: list[tuple[str, TestPlan]]) -> str:
    lines = [f"plan for {target.label} ({target.size_bytes:,} B), profile {profile['profile']['name']}"
             f" — nothing is written by 'ssdpts plan'"]
    for title, plan in plans:
        lines += ["", f"{title} [{plan.test}]: {_duration(plan)}; writes {_written(plan)}"]
        for n in plan.notes:
            lines.append(f"  note: {n}")
        for i, ph in enumerate(plan.phases, start=1):
            lines.append(f"  {i}. {ph.what}")
            if ph.cells:
                rounds = f"{ph.rounds_min}" if ph.rounds_min == ph.rounds_max else f"{ph.rounds_min}–{ph.rounds_max}"
                lines.append(f"     {rounds} × {len(ph.cells)} cell{'s' if len(ph.cells) != 1 else ''}: "
                             f"{_span(ph.seconds_min, ph.seconds_max)}")
                for c in ph.cells[:12]:
                    mix = f" {c.read_pct}/{100 - c.read_pct}" if c.read_pct is not None and c.rw in ("randrw", "rw") else ""
                    amount = f"{c.runtime_s:g} s" if c.runtime_s is not None else f"{c.io_bytes:,} B"
                    idle = f" after {c.idle_before_s:g} s idle" if c.idle_before_s else ""
                    lines.append(f"       {c.name:26} {c.rw}{mix} {c.block_size} TC{c.threads}/QD{c.iodepth} "
                                 f"{amount}{idle}")
                if len(ph.cells) > 12:
                    lines.append(f"       … {len(ph.cells) - 12} more cells ('--json' lists them all)")
    lo, hi = sum(p.seconds_min for _, p in plans), sum(p.seconds_max for _, p in plans)
    size_bound = sum(p.size_bound_bytes for _, p in plans)
    lines += ["", f"total: {_span(lo, hi)}" + (f" + writing {_gb(size_bound)} at the drive's speed" if size_bound else "")
              + "; purge times not included"]
    return "\n".join(lines)


@click.command()
@click.argument("target", default="sim:client")
@click.option("--profile", "profile", default="pts-enterprise", show_default=True,
              help="Shipped profile name or a .toml file.")
@click.option("--tests", default=None, help="Comma-separated tests [default: the profile's list].")
@click.option("--size", default=None, help="Size of a file target (e.g. 8G), as 'run' would create it.")
@click.option("--purge", "purge_method", default="auto", show_default=True, type=click.Choice(list(METHODS)),
              help="The purge 'run' would be given.")
@click.option("--json", "as_json", is_flag=True, help="Machine-readable plan.")
def plan(target, profile, tests, size, purge_method, as_json):
    """Dry run: what 'ssdpts run' would do on TARGET — purge method, preconditioning bytes, rounds × cells
    with their fio parameters, idle periods — with minimum and maximum durations. Touches nothing.

    \b
    Example: ssdpts plan /dev/nvme0n1 --profile pts-enterprise --tests iops
    """
    t = open_target(target, size=parse_size(size, "--size") if size else None)
    names = registry.from_option(tests)
    prof, plans = build_plans(t, profile, names, purge_method)
    if as_json:
        click.echo(json.dumps({"schema": "ssdpts.plan/1", "target": t.label_id, "size_bytes": t.size_bytes,
                               "profile": prof["profile"]["name"],
                               "tests": [{"title": title, **to_data(p), "seconds_min": p.seconds_min,
                                          "seconds_max": p.seconds_max, "size_bound_bytes": p.size_bound_bytes,
                                          "bytes_written_known": p.bytes_written_known, "bytes_exact": p.bytes_exact}
                                         for title, p in plans]}, indent=2))
    else:
        click.echo(render_plan(t, prof, plans))
