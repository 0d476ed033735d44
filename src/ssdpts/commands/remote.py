"""`ssdpts serve-fio`: fio's server on the machine that holds the drives, for remote runs."""

from __future__ import annotations

import os
import shutil

import click


@click.command("serve-fio")
@click.option("--bind", default="127.0.0.1", show_default=True,
              help="Address to listen on. fio's server has no authentication and its jobs can run commands: "
                   "keep it on 127.0.0.1 behind an SSH tunnel, or on an isolated management network.")
@click.option("--port", default=8765, show_default=True)
def serve_fio(bind, port):
    """Run fio's server for remote ssdpts runs (on the machine that holds the drives)."""
    from ..engines.fio_versions import fio_binary, fio_version

    if bind in ("0.0.0.0", "::", ""):
        click.echo("ssdpts: warning: listening on all interfaces; anyone who can reach this port can run "
                   "commands as this user", err=True)
    fio_version()                              # installed, a fio, new enough ($SSDPTS_FIO or the PATH's)
    fio = shutil.which(fio_binary())
    family = "ip6" if ":" in bind else "ip"
    os.execv(fio, [fio, f"--server={family}:{bind},{port}"])
