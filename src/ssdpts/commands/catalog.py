"""What ships: `ssdpts profiles` and `ssdpts tests`."""

from __future__ import annotations

import click


@click.command()
@click.option("--explain", is_flag=True, help="Every key a profile may set: unit, default, what it sets, allowed values.")
def profiles(explain):
    """List the shipped profiles."""
    from ..profiles import explained, load_profile, shipped

    if explain:
        click.echo(explained())
        return
    for name in shipped():
        p = load_profile(name)
        click.echo(f"{name:16} {p['profile'].get('description', '')}")


@click.command("tests")
def list_tests():
    """List the tests (PTS tests, reviewer studies, endurance) with what each needs."""
    from ..pts import registry

    for spec in registry.tests().values():
        needs = f"  [needs: {', '.join(c.name.lower() for c in sorted(spec.needs, key=lambda c: c.name))}]" \
            if spec.needs else ""
        click.echo(f"{spec.name:14} {spec.kind:9} {spec.title}{needs}")
