"""`ssdpts format DEV --lba-format N --destroy-data`: an NVMe namespace into another LBA format (sector size)."""

from __future__ import annotations

import click

from ..targets import open_target
from ..targets.purge import chosen_lba_format, format_namespace
from .common import RESULTS_HELP, results_dir


@click.command("format")
@click.argument("target")
@click.option("--lba-format", "lba_format", type=click.IntRange(0, 63), required=True,
              help="Index of the LBA format ('ssdpts info TARGET' lists them, e.g. 'LBAF 1: 4096+0').")
@click.option("--destroy-data", is_flag=True, help="Consent to erase the whole namespace.")
@click.option("--results", default=None, help=RESULTS_HELP)
def format_command(target, lba_format, destroy_data, results):
    """Format an NVMe namespace into another LBA format with user-data erase (nvme format --lbaf=N --ses=1),
    as seed 003 did with ISDCT before testing ("LBAFormat=3 SecureEraseSetting=1"): e.g. 512-byte to
    4096-byte sectors. Every byte of the namespace is erased; mounted or busy namespaces are refused.

    Run it before 'ssdpts run': a run records the sector size it finds, and changing it mid-run would
    make its results incomparable.
    """
    from ..runner.checks import check_safe
    from ..runner.lock import exclusive      # here: `format --help` starts without the runner

    tgt = open_target(target)
    chosen = chosen_lba_format(tgt, lba_format)
    check_safe(tgt, destroy_data, results_dir(results))
    with exclusive(tgt):
        record = format_namespace(tgt, lba_format)
    click.echo(f"{tgt.label_id}: {record.note} in {record.seconds:.1f} s ({record.command}); "
               f"logical block now {chosen.data_bytes} bytes")
