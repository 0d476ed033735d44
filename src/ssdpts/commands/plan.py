"""`ssdpts plan`: a dry run — every phase of every test in order, durations and bytes, touching nothing.

It plans a target you have (its size is read, nothing is written or created) or a drive you do not have
(`--capacity`); a write speed (`--write-speed`, or a claims file's sequential write) times the phases that
end when their bytes are written (purge-free preconditioning, WSAT, SLC fills)."""

from __future__ import annotations

import json
from dataclasses import dataclass

import click

from ..errors import SsdptsError
from ..profiles import load_profile, profile_tests
from ..pts import registry
from ..pts.plan import Estimate, Phase, TestPlan
from ..records import to_data
from ..targets import Target, open_target
from ..targets.base import HYPOTHETICAL
from ..targets.hypothetical import LOGICAL_BLOCK_SIZES, hypothetical_target
from ..targets.purge import METHODS
from ..units import MIN_RATE, format_long_duration, format_rate, parse_capacity, parse_rate, target_size

DEFAULT_TARGET = "sim:client"


@dataclass(frozen=True)
class WriteSpeed:
    bytes_per_s: float
    source: str                  # where the figure comes from, as the plan prints it


def build_plans(target: Target, profile_name: str, tests: list[str] | None, purge_method: str = "auto"
                ) -> tuple[dict, list[tuple[str, TestPlan]]]:
    """(the merged profile, [(test title, plan)]) — reads the target, writes nothing."""
    from ..runner.checks import check_settings, plans_for      # here: `plan --help` starts without the runner

    profile = load_profile(profile_name)
    names = tests or profile_tests(profile)
    for name in names:
        if registry.get(name).plan is None:
            raise SsdptsError(f"test {name} declares no plan; it cannot be dry-run yet")
    settings = registry.settings_for(profile, names)
    check_settings(settings, target)
    return profile, [(registry.get(p.test).title, p) for p in plans_for(target, settings, names, purge_method)]


def _bytes(n: float) -> str:
    return f"{n / 1e12:,.2f} TB" if n >= 1e12 else f"{n / 1e9:,.2f} GB"


def _span(lo: float, hi: float) -> str:
    return format_long_duration(lo) if round(lo) == round(hi) else \
        f"{format_long_duration(lo)} – {format_long_duration(hi)}"


UNTIMED = "not estimated: give --write-speed or --claims"


def _phase_duration(ph: Phase, speed: WriteSpeed | None) -> str:
    lo, hi = ph.seconds_at(speed.bytes_per_s if speed else None)
    if lo is not None and hi is not None:
        return _span(lo, hi)
    if hi is not None:
        return f"up to {format_long_duration(hi)}; at the least the time to write {_bytes(ph.bytes_written or 0)} ({UNTIMED})"
    if ph.bytes_written:
        return f"writing {_bytes(ph.bytes_written)} at the drive's speed ({UNTIMED})"
    return "depends on the drive's read speed (not estimated)"


def _estimate(est: Estimate) -> str:
    text = _span(est.seconds_min, est.seconds_max)
    if est.untimed_bytes:
        text += f" without the time to write {_bytes(est.untimed_bytes)} in size-bound phases ({UNTIMED})"
    return text


def _written(plan: TestPlan) -> str:
    known = plan.bytes_written_known
    if plan.bytes_exact:
        return _bytes(known)
    return ("" if known == 0 else f"{_bytes(known)} + ") + "time-bound writes (their amount depends on the drive)"


def render_plan(target: Target, profile: dict, plans: list[tuple[str, TestPlan]], speed: WriteSpeed | None = None
                ) -> str:
    write_bps = speed.bytes_per_s if speed else None
    lines = [f"plan for {target.label}, {target.size_bytes:,} B, profile {profile['profile']['name']}"
             f" — nothing is written by 'ssdpts plan'",
             f"size-bound writes timed at {format_rate(speed.bytes_per_s)} ({speed.source}); real drives write "
             "slower once their cache is full, so these times are the least" if speed else
             "size-bound writes (preconditioning, WSAT, fills) are not timed: give --write-speed or --claims"]
    for title, plan in plans:
        lines += ["", f"{title} [{plan.test}]: {_estimate(plan.estimate(write_bps))}; writes {_written(plan)}"]
        for n in plan.notes:
            lines.append(f"  note: {n}")
        for i, ph in enumerate(plan.phases, start=1):
            lines.append(f"  {i}. {ph.what}")
            if ph.cells:
                rounds = f"{ph.rounds_min}" if ph.rounds_min == ph.rounds_max else f"{ph.rounds_min}–{ph.rounds_max}"
                lines.append(f"     {rounds} × {len(ph.cells)} cell{'s' if len(ph.cells) != 1 else ''}: "
                             f"{_phase_duration(ph, speed)}")
                for c in ph.cells[:12]:
                    mix = f" {c.read_pct}/{100 - c.read_pct}" if c.read_pct is not None and c.rw in ("randrw", "rw") else ""
                    amount = f"{c.runtime_s:g} s" if c.runtime_s is not None else f"{c.io_bytes:,} B"
                    idle = f" after {c.idle_before_s:g} s idle" if c.idle_before_s else ""
                    lines.append(f"       {c.name:26} {c.rw}{mix} {c.block_size} TC{c.threads}/QD{c.iodepth} "
                                 f"{amount}{idle}")
                if len(ph.cells) > 12:
                    lines.append(f"       … {len(ph.cells) - 12} more cells ('--json' lists them all)")
    lines += ["", f"total: {_estimate(total(plans, write_bps))}; purge times not included"]
    return "\n".join(lines)


def total(plans: list[tuple[str, TestPlan]], write_bps: float | None) -> Estimate:
    return sum((p.estimate(write_bps) for _, p in plans), Estimate(write_bps, 0.0, 0.0, 0))


def plan_target(target: str | None, size: str | None, capacity: str | None, logical_block_size: int | None
                ) -> Target:
    """TARGET as 'run' would open it (a file is not created, so its --size need not fit), or the hypothetical
    drive --capacity describes."""
    if capacity is None:
        if logical_block_size is not None:
            raise SsdptsError("--logical-block-size describes a drive planned with --capacity; a real target has "
                              "its own: drop --logical-block-size or add --capacity")
        return open_target(target or DEFAULT_TARGET, size=target_size(size),
                           check_free_space=False)
    if target is not None or size is not None:
        raise SsdptsError(f"--capacity plans a drive you do not have: drop {'TARGET' if target else '--size'}, "
                          "or drop --capacity to plan the target itself")
    return hypothetical_target(parse_capacity(capacity, "--capacity"), logical_block_size or LOGICAL_BLOCK_SIZES[0])


def write_speed(rate: str | None, claims: str | None) -> WriteSpeed | None:
    if rate is not None and claims is not None:
        raise SsdptsError("give the write speed once: --write-speed or --claims (its sequential write_mb_s), not both")
    if rate is not None:
        return WriteSpeed(parse_rate(rate, "--write-speed"), f"--write-speed {rate}")
    if claims is None:
        return None
    from ..report.claimed import claimed_write_speed, load_claims    # its summaries import eight tests

    bps = claimed_write_speed(load_claims(claims))
    if bps is None:
        raise SsdptsError(f"claims file {claims} names no sequential write speed: add write_mb_s under [sequential], "
                          "or give --write-speed")
    if bps < MIN_RATE:
        raise SsdptsError(f"claims file {claims}: sequential write_mb_s {bps / 1e6:g} is below {MIN_RATE:g} B/s; "
                          "give the drive's speed in MB/s, e.g. write_mb_s = 2000")
    return WriteSpeed(bps, f"claims file {claims}: sequential write {bps / 1e6:g} MB/s")


@click.command()
@click.argument("target", required=False)
@click.option("--profile", "profile", default="pts-enterprise", show_default=True,
              help="Shipped profile name or a .toml file.")
@click.option("--tests", default=None, help="Comma-separated tests [default: the profile's list].")
@click.option("--size", default=None, help="Size of a file target (e.g. 8G = 8 GiB, fio's units), as 'run' would "
                                           "create it; plan creates nothing, so it need not fit on the disk.")
@click.option("--capacity", default=None,
              help="Plan a drive you do not have, by its capacity, instead of TARGET: decimal as vendors sell them "
                   "(3.84T = 3.84TB = 3.84 x 10^12 bytes) or binary (3.5TiB).")
@click.option("--logical-block-size", type=click.Choice([str(n) for n in LOGICAL_BLOCK_SIZES]), default=None,
              help="The --capacity drive's format [default: 512].")
@click.option("--write-speed", "rate", default=None,
              help="The drive's sequential write speed (2GB/s = 2 x 10^9 B/s, or 1.8GiB/s): times the phases that "
                   "end when their bytes are written.")
@click.option("--claims", default=None, type=click.Path(dir_okay=False),
              help="A vendor claims file (docs/report.md): its sequential write_mb_s is the write speed.")
@click.option("--purge", "purge_method", default="auto", show_default=True, type=click.Choice(list(METHODS)),
              help="The purge 'run' would be given.")
@click.option("--json", "as_json", is_flag=True, help="Machine-readable plan.")
def plan(target, profile, tests, size, capacity, logical_block_size, rate, claims, purge_method, as_json):
    """Dry run: what 'ssdpts run' would do on TARGET — purge method, preconditioning bytes, rounds × cells
    with their fio parameters, idle periods — with minimum and maximum durations. Touches nothing.

    TARGET is a device, a file (with --size) or sim:PRESET [default: sim:client]; with --capacity there is
    no TARGET: the plan is for a drive of that capacity. Phases that end when their bytes are written
    (preconditioning 2x the capacity, WSAT 4x) are timed only with a write speed.

    \b
    Examples:
      ssdpts plan /dev/nvme0n1 --profile pts-enterprise --tests iops
      ssdpts plan --capacity 3.84T --write-speed 2GB/s
      ssdpts plan --capacity 7.68T --logical-block-size 4096 --claims claimed.toml --tests iops,wsat
    """
    t = plan_target(target, size, capacity, int(logical_block_size) if logical_block_size else None)
    speed = write_speed(rate, claims)
    names = registry.from_option(tests)
    prof, plans = build_plans(t, profile, names, purge_method)
    if not as_json:
        click.echo(render_plan(t, prof, plans, speed))
        return
    write_bps = speed.bytes_per_s if speed else None
    click.echo(json.dumps({
        "schema": "ssdpts.plan/2", "target": t.label_id, "hypothetical": t.kind == HYPOTHETICAL,
        "size_bytes": t.size_bytes, "logical_block_size": t.logical_block_size, "profile": prof["profile"]["name"],
        "write_speed": to_data(speed), "total": to_data(total(plans, write_bps)),
        "tests": [{"title": title, **to_data(p), "seconds_min": p.seconds_min, "seconds_max": p.seconds_max,
                   "size_bound_bytes": p.size_bound_bytes, "bytes_written_known": p.bytes_written_known,
                   "bytes_exact": p.bytes_exact, "estimate": to_data(p.estimate(write_bps))}
                  for title, p in plans]}, indent=2))
