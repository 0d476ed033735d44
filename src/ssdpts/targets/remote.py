"""Targets on other machines, driven through fio's client/server mode (`fio --server` there).

`--host HOST[:PORT]` (repeatable) with the same target path on every host, or `--hosts hosts.toml`:

    [[host]]
    address = "10.0.0.11"     # or "10.0.0.11:8765"
    port = 8765               # optional, fio's default
    targets = ["/dev/nvme0n1"]
    size = "3.84T"            # size of each target (fio cannot report it); checked by a probe read

fio's server has no authentication and its job options can run commands: bind it to a management
network or to 127.0.0.1 behind an SSH tunnel (docs/scale.md).
"""

from __future__ import annotations

import socket

from ..errors import SsdptsError
from ..inputs import read_toml
from ..units import parse_size
from ..workload.fio import filename_problem
from .base import Target

FIO_PORT = 8765
# what ssdpts cannot learn through fio's client/server protocol: said so, never filled in with local data
NOT_AVAILABLE = "not available from the remote host"


def split_host(text: str) -> tuple[str, int]:
    text = text.strip()
    if text.startswith("["):                      # [ipv6]:port
        host, _, rest = text[1:].partition("]")
        return host, int(rest.lstrip(":") or FIO_PORT)
    if text.count(":") == 1:
        host, port = text.split(":")
        try:
            return host, int(port)
        except ValueError:
            raise SsdptsError(f"bad host {text!r}: the port must be a number, e.g. {host}:8765") from None
    return text, FIO_PORT


def remote_target(host: str, port: int, path: str, size: int | None) -> Target:
    if not size:
        raise SsdptsError(f"remote target {host}:{path} needs its size (fio cannot report it): "
                          "add size = \"...\" in hosts.toml or pass --size")
    problem = filename_problem(path)
    if problem:
        raise SsdptsError(f"refusing {host}:{path}: {problem}; name the device by another path")
    # the logical block size is probed by the engine's preflight (O_DIRECT reads); 4096 until then
    return Target(kind="block", spec=f"{host}:{port}:{path}", path=path, size_bytes=size, logical_block_size=4096,
                  physical_block_size=4096, host=f"{host}:{port}",
                  info={"model": f"{path} on {host} (model {NOT_AVAILABLE})", "transport": "remote (fio client/server)",
                        "serial": NOT_AVAILABLE, "firmware": NOT_AVAILABLE, "write_cache": None,
                        "physical_block_size": NOT_AVAILABLE, "logical_block_size_source": "not probed yet"})


def from_hosts_file(path: str, default_size: int | None) -> list[Target]:
    data = read_toml(path, "hosts file")
    hosts = data.get("host")
    if not isinstance(hosts, list) or not hosts:
        raise SsdptsError(f"hosts file {path}: expected one or more [[host]] tables with address and targets")
    out = []
    for i, h in enumerate(hosts):
        unknown = set(h) - {"address", "port", "targets", "size"}
        if unknown:
            raise SsdptsError(f"hosts file {path}: host {i + 1}: unknown key {sorted(unknown)[0]}; "
                              "allowed: address, port, targets, size")
        if "address" not in h or not h.get("targets"):
            raise SsdptsError(f"hosts file {path}: host {i + 1} needs address and targets")
        host, port = split_host(str(h["address"]))
        port = int(h.get("port", port))
        size = parse_size(h["size"], f"size of host {host}") if "size" in h else default_size
        out += [remote_target(host, port, t, size) for t in h["targets"]]
    return out


def reachable(host_port: str, timeout: float = 3.0) -> str | None:
    """None if a TCP connection to the fio server succeeds, else the reason."""
    host, port = split_host(host_port)
    try:
        with socket.create_connection((host, port), timeout=timeout):
            return None
    except OSError as e:
        return str(e) or type(e).__name__
