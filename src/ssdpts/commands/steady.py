"""`ssdpts steady-state VALUES`: the SNIA steady-state judgement of per-round values, outside a run."""

from __future__ import annotations

import json
import sys

import click

from ..errors import SsdptsError
from ..inputs import FINITE
from ..settings import STEADY_RULES, SteadySettings

STEADY = SteadySettings()   # the steady-state command's defaults are the run's (declared once)


@click.command("steady-state")
@click.argument("values", nargs=-1, required=True)
@click.option("--window", default=STEADY.window, show_default=True, help="Rounds in the measurement window.")
@click.option("--max-range", type=FINITE, default=STEADY.max_range * 100, show_default=True,
              help="Allowed data excursion, % of the window average.")
@click.option("--max-slope", type=FINITE, default=STEADY.max_slope * 100, show_default=True,
              help="Allowed slope excursion, % of the window average.")
@click.option("--rule", type=click.Choice(STEADY_RULES), default=STEADY.rule, show_default=True,
              help="snia: PTS 2.0.2 §2.1.24; fit-band: the reviewers' fitted line within ±max-slope of the mean.")
@click.option("--strict", is_flag=True, default=not STEADY.inclusive,
              help="Require < instead of <= at the bounds.")
@click.option("--json", "as_json", is_flag=True)
def steady_state(values, window, max_range, max_slope, rule, strict, as_json):
    """Judge steady state for per-round VALUES (last WINDOW of them), the SNIA way.

    Example: ssdpts steady-state 11746 11690 11802 11650 11720
    """
    from ..inputs import finite
    from ..steady import evaluate

    numbers = []
    for v in values:
        try:
            numbers.append(finite(float(v), "each round's value"))
        except ValueError:
            raise SsdptsError(f"{v!r} is not a number; give one value per round, e.g. 11746 11690 11802") from None
    if window < 2:
        raise SsdptsError("--window must be at least 2")
    for name, pct in (("--max-range", max_range), ("--max-slope", max_slope)):
        if not 0 < pct < 100:
            raise SsdptsError(f"{name} is a percentage between 0 and 100, not {pct:g}")
    s = evaluate(numbers, window, max_range / 100, max_slope / 100, rule=rule, inclusive=not strict)
    if as_json:
        click.echo(json.dumps(s.to_dict(), indent=2))
    else:
        click.echo(f"steady state: {'REACHED' if s.reached else 'NOT REACHED'}" + (f" ({s.reason})" if s.reason else ""))
        if s.average is not None:
            click.echo(f"window rounds            {s.window_rounds[0]}..{s.window_rounds[-1]}")
            click.echo(f"average                  {s.average:.6g}")
            click.echo(f"range excursion          {s.range_measured:.6g} (allowed {s.range_allowed:.6g})")
            click.echo(f"slope excursion          {s.slope_excursion_measured:.6g} (allowed {s.slope_excursion_allowed:.6g})")
            click.echo(f"least-squares fit        y = {s.fit_formula}")
    sys.exit(0 if s.reached else 1)
