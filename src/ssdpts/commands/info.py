"""`ssdpts info TARGET`: what ssdpts knows about a target before touching it."""

from __future__ import annotations

import json
from pathlib import Path

import click

from ..errors import SsdptsError
from .common import RESULTS_HELP, results_dir


@click.command()
@click.argument("target")
@click.option("--profile", "profile", default="pts-enterprise", show_default=True,
              help="Whether TARGET is large enough is judged for this profile's tests.")
@click.option("--results", default=None, help=RESULTS_HELP)
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
def info(target, profile, results, as_json):
    """What ssdpts knows about TARGET before touching it (read-only)."""
    from ..targets import open_target
    from ..targets.facts import DeviceFacts
    from ..targets.purge import supported_methods

    t = open_target(target)
    doc = t.to_dict()
    doc.pop("drive", None)
    if t.kind == "block":
        doc["purge_methods"] = supported_methods(t)
    if t.kind in ("block", "file"):
        doc["safe_to_test"] = safe_to_test(t, profile, results_dir(results))
    if as_json:
        click.echo(json.dumps(doc, indent=2, default=str))
        return
    click.echo(f"target      {t.path} ({t.kind}{f', tested through {t.passthrough}' if t.passthrough else ''})")
    click.echo(f"capacity    {t.size_bytes} bytes ({t.size_bytes / 1e9:.1f} GB, {t.size_bytes / 2**30:.2f} GiB)")
    click.echo(f"blocks      logical {t.logical_block_size} B, physical {t.physical_block_size} B")
    for k, v in t.info.items():
        if v not in (None, "", {}) and not isinstance(v, dict):
            click.echo(f"{k:11} {v}")
    facts = DeviceFacts.from_dict(t.info.get("facts"))
    for k, v in facts.rows() if facts else []:
        click.echo(f"{k.lower():11} {v}")
    if "purge_methods" in doc:
        click.echo(f"purge       {', '.join(doc['purge_methods']) or 'none supported (results start from current state)'}")
    if "safe_to_test" in doc:
        click.echo(f"safe        {doc['safe_to_test']}")


def safe_to_test(target, profile_name: str, results: Path) -> str:
    """'yes, ...' or 'no: ' and the refusal a run would give (read-only, too small, busy, ...)."""
    from ..profiles import load_profile, profile_tests
    from ..pts.registry import settings_for
    from ..runner.checks import check_room_for
    from ..targets.safety import check_target

    try:
        check_target(target, destroy_data=True, results_dir=results)
        prof = load_profile(profile_name)
        names = profile_tests(prof)
        check_room_for(target, settings_for(prof, names), names)
    except SsdptsError as e:
        return f"no: {e}"
    return "yes, with --destroy-data" if target.kind == "block" else "yes"
