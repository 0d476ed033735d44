"""`ssdpts sim serve`: the simulated SSD outside a run."""

from __future__ import annotations

import click

from ..errors import SsdptsError


@click.group()
def sim():
    """The simulated SSD outside a run."""


@sim.command("serve")
@click.argument("drive", default="sim:client")
@click.option("--socket", "socket_path", required=True, help="Unix socket to serve NBD on.")
def sim_serve(drive, socket_path):
    """Serve DRIVE (sim:client, sim:enterprise, sim:sata-mlc or sim:FILE.toml) over NBD in real time.

    Each request completes when the model says (data is not stored: reads return zeros). Test it with
    fio's nbd engine: fio --ioengine=nbd --uri='nbd+unix:///?socket=PATH' --rw=randwrite --bs=4k ...
    """
    from ..simdrive import load_params
    from ..simdrive.nbd import serve, socket_file

    socket_file(socket_path)
    name = drive[len("sim:"):] if drive.startswith("sim:") else drive
    try:
        params = load_params(name)
    except (ValueError, FileNotFoundError) as e:
        raise SsdptsError(str(e)) from None
    click.echo(f"serving {drive} on {socket_path} (Ctrl-C to stop)", err=True)
    serve(params, socket_path)
