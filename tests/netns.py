"""Test hosts on this machine: network namespaces with veth pairs, each running `fio --server` on its
own address with its own loop device. Everything is removed afterwards, also on failure."""

from __future__ import annotations

import subprocess
import time
import uuid
from dataclasses import dataclass
from pathlib import Path


@dataclass
class FioHost:
    ns: str
    address: str
    device: str
    backing: Path
    server: subprocess.Popen | None = None

    def start(self) -> None:
        self.server = subprocess.Popen(["ip", "netns", "exec", self.ns, "fio", f"--server=ip:{self.address},8765"],
                                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.time() + 10
        while time.time() < deadline:
            r = subprocess.run(["ip", "netns", "exec", self.ns, "ss", "-ltn"], capture_output=True, text=True)
            if f"{self.address}:8765" in r.stdout:
                return
            time.sleep(0.05)
        raise RuntimeError(f"fio server in {self.ns} did not start")

    def kill(self) -> None:
        if self.server and self.server.poll() is None:
            self.server.kill()
            self.server.wait()
        # fio's server forks a child per connection: make sure nothing of it survives
        subprocess.run(["pkill", "-9", "-f", f"--server=ip:{self.address},8765"], capture_output=True)


class FioHosts:
    def __init__(self, n: int, size: int = 64 * 2**20):
        self.tag = uuid.uuid4().hex[:4]
        self.hosts: list[FioHost] = []
        self.size = size
        try:
            for i in range(n):
                self._add(i)
        except BaseException:
            self.close()
            raise

    def _add(self, i: int) -> None:
        ns = f"ssdpts-{self.tag}-{i}"
        net = 200 + i
        host_if, ns_if = f"sp{self.tag}{i}", f"sn{self.tag}{i}"
        backing = Path("/dev/shm") / f"ssdpts-host-{self.tag}-{i}.img"
        with open(backing, "wb") as f:
            f.truncate(self.size)
        dev = subprocess.check_output(["losetup", "--direct-io=on", "-f", "--show", str(backing)], text=True).strip()
        h = FioHost(ns, f"10.{net}.{int(self.tag[:2], 16)}.2", dev, backing)
        self.hosts.append(h)
        base = f"10.{net}.{int(self.tag[:2], 16)}"
        for cmd in (["ip", "netns", "add", ns],
                    ["ip", "link", "add", host_if, "type", "veth", "peer", "name", ns_if],
                    ["ip", "link", "set", ns_if, "netns", ns],
                    ["ip", "addr", "add", f"{base}.1/24", "dev", host_if],
                    ["ip", "link", "set", host_if, "up"],
                    ["ip", "netns", "exec", ns, "ip", "addr", "add", f"{base}.2/24", "dev", ns_if],
                    ["ip", "netns", "exec", ns, "ip", "link", "set", ns_if, "up"],
                    ["ip", "netns", "exec", ns, "ip", "link", "set", "lo", "up"]):
            subprocess.run(cmd, check=True, capture_output=True)
        h.start()

    def hosts_toml(self, path: Path) -> Path:
        path.write_text("".join(f'[[host]]\naddress = "{h.address}"\ntargets = ["{h.device}"]\nsize = "{self.size}"\n\n'
                                for h in self.hosts))
        return path

    def close(self) -> None:
        for h in self.hosts:
            h.kill()
            subprocess.run(["ip", "netns", "del", h.ns], capture_output=True)   # removes the veth pair too
            subprocess.run(["losetup", "-d", h.device], capture_output=True)
            h.backing.unlink(missing_ok=True)
