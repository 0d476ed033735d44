"""A throw-away QEMU guest with emulated NVMe, SATA and SCSI drives, driven by the real Linux drivers.

The guest boots the host's Debian kernel (/boot/vmlinuz-*) with a tiny initramfs (busybox-static and the
9p modules), mounts the host's root filesystem read-only over virtio-9p and runs `guest_init.sh`, which
starts `agent.py`: it runs the commands the host drops into a shared directory and writes back their exit
status and output. So the guest has the host's userland (nvme-cli, smartctl, fio, the worktree's .venv
with ssdpts) without an image to build, and one boot serves a whole test session.

Run by hand (docs/testing.md):
    .venv/bin/python tests/vm/testbed.py 'ssdpts info /dev/nvme0n1'
"""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import socket
import stat
import subprocess
import sys
import tempfile
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
# a boot takes about a minute at rest under TCG and took over 240 s beside two busy loops and the suite (then every
# VM test skipped: a suite that passed without its test bed)
BOOT_TIMEOUT_S = float(os.environ.get("SSDPTS_VM_BOOT_TIMEOUT", "900"))
INITRAMFS_MODULES = ("virtio_pci", "9pnet_virtio", "9p")
MiB = 2**20
GUEST_XFER = "/run/ssdpts-xfer"          # where guest_init.sh mounts the shared directory


@dataclass(frozen=True)
class Drive:
    """One emulated drive: how QEMU attaches it and the serial the guest finds it by."""

    name: str                 # our handle, e.g. "nvme" ; also the QEMU id prefix
    bus: str                  # nvme | sata | scsi
    serial: str
    sizes_mib: tuple[int, ...]  # one entry per namespace (NVMe) or a single disk
    model: str = ""
    ns_options: str = ""        # NVMe: QEMU nvme-ns options of every namespace (metadata, PI: "ms=8,pi=1")
    port_link: tuple[str, str] | None = None   # NVMe: behind its own pcie-root-port of this (x-speed, x-width)


# The drives every test session gets. Serials are how the guest maps them to /dev names (probe order varies).
DRIVES = (
    Drive("nvme", "nvme", "SSDPTSNVME1", (64,)),
    Drive("nvme2ns", "nvme", "SSDPTSNVME2", (64, 64)),
    Drive("sata", "sata", "SSDPTSSATA1", (128,), model="SSDPTS SATA DISK"),
    Drive("scsi", "scsi", "SSDPTSSCSI1", (64,)),
    Drive("spare", "sata", "SSDPTSSATA2", (32,), model="SSDPTS SAFETY DISK"),
    # LBA format 1 (512 B data + 8 B metadata) with T10 PI type 1, behind a root port of 8 GT/s x4
    # (tests/vm/test_vm_nvme_features.py)
    Drive("nvmepi", "nvme", "SSDPTSNVMEPI", (32,), ns_options="ms=8,pi=1", port_link=("8", "4")),
)


@dataclass
class Result:
    cmd: str
    rc: int
    out: str
    err: str
    seconds: float

    def check(self) -> "Result":
        if self.rc != 0:
            raise AssertionError(f"guest command failed ({self.rc}): {self.cmd}\n{self.out}\n{self.err}")
        return self

    def json(self):
        return json.loads(self.out)


class Unavailable(Exception):
    """QEMU or the kernel is missing, or the guest exited while booting: VM tests skip with this message."""


class BootTimeout(Exception):
    """The test bed is here but the guest did not come up in BOOT_TIMEOUT_S: VM tests fail, never skip (a loaded
    host must not turn them into a pass)."""


def kernel_image() -> Path:
    explicit = os.environ.get("SSDPTS_VM_KERNEL")
    if explicit:
        return Path(explicit)
    running = Path(f"/boot/vmlinuz-{os.uname().release}")
    if running.exists() and Path(f"/lib/modules/{os.uname().release}").is_dir():
        return running
    found = sorted(Path("/boot").glob("vmlinuz-*"), key=lambda p: [int(x) if x.isdigit() else x
                                                                      for x in re.split(r"(\d+)", p.name)])
    found = [k for k in found if Path(f"/lib/modules/{k.name[len('vmlinuz-'):]}").is_dir()]
    if not found:
        raise Unavailable("no kernel with modules in /boot (install linux-image-amd64: make system)")
    return found[-1]


def why_unavailable() -> str | None:
    """None when a guest can be started here, else why not (one line)."""
    if os.environ.get("SSDPTS_VM") == "0":
        return "VM tests disabled by SSDPTS_VM=0"
    if sys.platform != "linux" or os.uname().machine != "x86_64":
        return "the QEMU test bed needs an x86_64 Linux host"
    if not shutil.which("qemu-system-x86_64"):
        return "qemu-system-x86_64 is not installed (apt-get install qemu-system-x86, or make system)"
    if not Path("/bin/busybox").exists() or not _is_static(Path("/bin/busybox")):
        return "a static /bin/busybox is needed for the guest's initramfs (apt-get install busybox-static)"
    try:
        k = kernel_image()
    except Unavailable as e:
        return str(e)
    if not os.access(k, os.R_OK):
        return f"cannot read the kernel {k} (run as root)"
    return None


def _is_static(path: Path) -> bool:
    out = subprocess.run(["file", "-L", str(path)], capture_output=True, text=True).stdout if shutil.which("file") else ""
    return "statically linked" in out or not out


def accel() -> str:
    """KVM only where it really works (a CPU with vmx/svm); a nested kvm-pvm host hangs the guest: TCG."""
    forced = os.environ.get("SSDPTS_VM_ACCEL")
    if forced:
        return forced
    try:
        flags = Path("/proc/cpuinfo").read_text()
    except OSError:
        flags = ""
    if os.access("/dev/kvm", os.R_OK | os.W_OK) and re.search(r"\b(vmx|svm)\b", flags):
        return "kvm"
    return "tcg"


# ------------------------------------------------------------------------------------------------
# initramfs: busybox + the modules that mount the host's root over 9p

_INIT = r"""#!/bin/busybox sh
/bin/busybox --install -s /bin
export PATH=/bin
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev
for m in $(cat /modules.list); do insmod "/lib/$m" 2>/dev/null; done
mkdir -p /newroot
if ! mount -t 9p -o trans=virtio,version=9p2000.L,ro,cache=loose,msize=524288 hostroot /newroot; then
  echo "ssdpts-vm: cannot mount the host root over 9p"; echo o > /proc/sysrq-trigger
fi
mount --move /proc /newroot/proc
mount --move /sys /newroot/sys
mount --move /dev /newroot/dev
exec switch_root /newroot /bin/bash "$ssdpts_init"
"""


def _newc(entries: list[tuple[str, int, bytes]]) -> bytes:
    """A cpio 'newc' archive of (path, mode, data) entries (directories and symlinks included)."""
    out = bytearray()
    for ino, (name, mode, data) in enumerate(entries + [("TRAILER!!!", 0, b"")], start=1):
        nm = name.encode() + b"\0"
        hdr = b"070701" + b"".join(f"{v:08x}".encode() for v in (
            ino, mode, 0, 0, 1, 0, len(data), 0, 0, 0, 0, len(nm), 0))
        out += hdr + nm
        out += b"\0" * (-len(out) % 4)
        out += data
        out += b"\0" * (-len(out) % 4)
    return bytes(out)


def build_initramfs(kernel: Path, dest: Path) -> Path:
    release = kernel.name[len("vmlinuz-"):]
    modules: list[str] = []
    for mod in INITRAMFS_MODULES:
        deps = subprocess.run(["modprobe", "-S", release, "--show-depends", mod], capture_output=True, text=True)
        for line in deps.stdout.splitlines():
            parts = line.split()
            if parts[:1] == ["insmod"] and parts[1] not in modules:
                modules.append(parts[1])
    entries: list[tuple[str, int, bytes]] = [(d, stat.S_IFDIR | 0o755, b"") for d in
                                             ("bin", "dev", "proc", "sys", "lib", "newroot")]
    entries.append(("bin/busybox", stat.S_IFREG | 0o755, Path("/bin/busybox").read_bytes()))
    entries.append(("init", stat.S_IFREG | 0o755, _INIT.encode()))
    names = []
    for m in modules:
        data = Path(m).read_bytes()
        if m.endswith(".xz"):
            data = subprocess.run(["xz", "-dc", m], capture_output=True, check=True).stdout
        elif m.endswith(".zst"):
            data = subprocess.run(["zstd", "-dc", m], capture_output=True, check=True).stdout
        base = re.sub(r"\.(xz|zst)$", "", Path(m).name)
        names.append(base)
        entries.append((f"lib/{base}", stat.S_IFREG | 0o644, data))
    entries.append(("modules.list", stat.S_IFREG | 0o644, ("\n".join(names) + "\n").encode()))
    dest.write_bytes(_newc(entries))
    return dest


# ------------------------------------------------------------------------------------------------
# the guest


@dataclass
class Guest:
    workdir: Path
    drives: tuple[Drive, ...] = DRIVES
    memory_mib: int = 1536        # room for three ssdpts runs at once (tests/vm/fault_run.py)
    cpus: int = 2
    proc: subprocess.Popen | None = None
    boot_seconds: float = 0.0
    devices: dict = field(default_factory=dict)     # drive name -> {"ctrl": "/dev/nvme0", "disks": [...]}
    _seq: int = 0

    @property
    def xfer(self) -> Path:
        return self.workdir / "xfer"

    @property
    def console(self) -> Path:
        return self.workdir / "console.log"

    @property
    def qmp_socket(self) -> Path:
        return self.workdir / "qmp.sock"

    def image(self, drive: Drive, ns: int) -> Path:
        return self.workdir / f"{drive.name}-{ns}.img"

    def _drive_args(self) -> list[str]:
        args: list[str] = []
        have_ahci = have_scsi = False
        sata_port = 0
        chassis = 0
        for d in self.drives:
            for i, size in enumerate(d.sizes_mib):
                img = self.image(d, i + 1)
                with open(img, "wb") as f:
                    f.truncate(size * MiB)
                args += ["-drive", f"file={img},if=none,id=tb{d.name}{i + 1},format=raw,discard=unmap,cache=unsafe"]
            if d.bus == "nvme":
                bus = ""
                if d.port_link:
                    # a PCIe root port on the machine's PCI root bus (QEMU allows it; the guest reads its link
                    # registers through the first 256 bytes of config space, which is all the link needs)
                    chassis += 1
                    args += ["-device", f"pcie-root-port,id=tb{d.name}port,chassis={chassis},"
                                        f"x-speed={d.port_link[0]},x-width={d.port_link[1]}"]
                    bus = f",bus=tb{d.name}port"
                args += ["-device", f"nvme,id=tb{d.name},serial={d.serial}{bus}"]
                for i in range(len(d.sizes_mib)):
                    args += ["-device", f"nvme-ns,drive=tb{d.name}{i + 1},bus=tb{d.name},nsid={i + 1}"
                                        + (f",{d.ns_options}" if d.ns_options else "")]
            elif d.bus == "sata":
                if not have_ahci:
                    args += ["-device", "ahci,id=tbahci"]
                    have_ahci = True
                args += ["-device", f"ide-hd,drive=tb{d.name}1,bus=tbahci.{sata_port},serial={d.serial}"
                                    ",rotation_rate=1"
                                    + (f",model={d.model}" if d.model else "")]
                sata_port += 1
            elif d.bus == "scsi":
                if not have_scsi:
                    args += ["-device", "virtio-scsi-pci,id=tbscsi"]
                    have_scsi = True
                args += ["-device", f"scsi-hd,drive=tb{d.name}1,bus=tbscsi.0,serial={d.serial},rotation_rate=1"]
        return args

    def command(self, kernel: Path, initrd: Path) -> list[str]:
        mode = accel()
        cmd = ["qemu-system-x86_64", "-accel", mode, "-cpu", "host" if mode == "kvm" else "max",
               "-m", str(self.memory_mib), "-smp", str(self.cpus), "-nodefaults", "-no-user-config",
               "-display", "none", "-no-reboot", "-serial", f"file:{self.console}",
               "-qmp", f"unix:{self.qmp_socket},server=on,wait=off",
               "-kernel", str(kernel), "-initrd", str(initrd),
               "-append", f"console=ttyS0 panic=-1 loglevel=4 rdinit=/init ssdpts_init={HERE / 'guest_init.sh'}"
                          f" ssdpts_xfer=xfer",
               "-fsdev", "local,id=hostroot,path=/,security_model=none,readonly=on,multidevs=remap",
               "-device", "virtio-9p-pci,fsdev=hostroot,mount_tag=hostroot",
               "-fsdev", f"local,id=xfer,path={self.xfer},security_model=none,multidevs=remap",
               "-device", "virtio-9p-pci,fsdev=xfer,mount_tag=xfer"]
        return cmd + self._drive_args()

    def start(self) -> "Guest":
        why = why_unavailable()
        if why:
            raise Unavailable(why)
        self.workdir.mkdir(parents=True, exist_ok=True)
        self.xfer.mkdir(exist_ok=True)
        # the worktree's .venv first: the guest runs the ssdpts under test, from the shared read-only root
        env = {"PATH": f"{REPO / '.venv' / 'bin'}:{Path(sys.executable).parent}:/usr/local/sbin:/usr/local/bin:"
                       "/usr/sbin:/usr/bin:/sbin:/bin", "DM_DISABLE_UDEV": "1",
               "SSDPTS_REPO": str(REPO), "PYTHONPATH": str(REPO / "src")}   # (a shared .venv may import another checkout)
        (self.xfer / "env.json").write_text(json.dumps(env))
        (self.xfer / "drives.json").write_text(json.dumps([{"name": d.name, "bus": d.bus, "serial": d.serial,
                                                            "sizes_mib": list(d.sizes_mib)} for d in self.drives]))
        self._warm_python(env)
        kernel = kernel_image()
        initrd = build_initramfs(kernel, self.workdir / "initramfs.cpio")
        t0 = time.monotonic()
        self.proc = subprocess.Popen(self.command(kernel, initrd), stdin=subprocess.DEVNULL,
                                     stdout=open(self.workdir / "qemu.log", "wb"), stderr=subprocess.STDOUT)
        deadline = t0 + BOOT_TIMEOUT_S
        while not (self.xfer / "ready").exists():
            if self.proc.poll() is not None or time.monotonic() > deadline:
                exited, tail = self.proc.poll() is not None, self._tail()
                self.stop()
                if not exited:
                    raise BootTimeout(f"the QEMU guest did not come up in {BOOT_TIMEOUT_S:.0f} s "
                                      f"(SSDPTS_VM_BOOT_TIMEOUT); last console line: {tail}")
                raise Unavailable(f"the QEMU guest did not come up (exited); last console line: {tail}")
            time.sleep(0.2)
        self.boot_seconds = time.monotonic() - t0
        self.devices = json.loads((self.xfer / "ready").read_text())
        return self

    def _warm_python(self, env: dict) -> None:
        """Work the guest would repeat in every session at TCG speed, done natively here: byte-compile ssdpts
        (the root is read-only in the guest) and build matplotlib's font cache (same fonts: same root)."""
        python = REPO / ".venv" / "bin" / "python"
        if not python.exists():
            return
        subprocess.run([str(python), "-m", "compileall", "-q", str(REPO / "src")], capture_output=True)
        mpl = self.xfer / "matplotlib"
        mpl.mkdir(exist_ok=True)
        subprocess.run([str(python), "-c", "import matplotlib.font_manager"], capture_output=True,
                       env={**os.environ, "MPLCONFIGDIR": str(mpl)})
        env["MPLCONFIGDIR"] = f"{GUEST_XFER}/matplotlib"
        (self.xfer / "env.json").write_text(json.dumps(env))

    def _tail(self) -> str:
        text = ""
        for p in (self.workdir / "qemu.log", self.console):
            try:
                text += p.read_text(errors="replace")
            except OSError:
                pass
        lines = [l for l in text.splitlines() if l.strip()]
        return lines[-1].strip() if lines else "(none)"

    def run(self, cmd: str, timeout: float = 300, check: bool = False) -> Result:
        """Run `cmd` with bash in the guest (cwd: the repository); its exit status and output."""
        if self.proc is None or self.proc.poll() is not None:
            raise RuntimeError(f"the guest is not running (console: {self._tail()})")
        self._seq += 1
        name = f"{self._seq:05d}-{uuid.uuid4().hex[:6]}"
        tmp = self.xfer / f".{name}.tmp"
        tmp.write_text(json.dumps({"cmd": cmd, "timeout": timeout}))
        os.replace(tmp, self.xfer / f"req-{name}.json")
        resp = self.xfer / f"resp-{name}.json"
        deadline = time.monotonic() + timeout + 30
        while not resp.exists():
            if self.proc.poll() is not None:
                raise RuntimeError(f"the guest stopped while running {cmd!r} (console: {self._tail()})")
            if time.monotonic() > deadline:
                raise TimeoutError(f"guest command {cmd!r} gave no answer in {timeout + 30:.0f} s")
            time.sleep(0.05)
        doc = json.loads(resp.read_text())
        resp.unlink()
        r = Result(cmd, doc["rc"], doc["out"], doc["err"], doc["seconds"])
        return r.check() if check else r

    def py(self, code: str, *args: str, timeout: float = 300) -> object:
        """Run Python `code` with the worktree's ssdpts in the guest; what it prints last, as JSON.
        One process per call: under TCG, importing ssdpts costs seconds, so a call does a batch."""
        self._seq += 1
        script = self.xfer / f"snippet-{self._seq:05d}.py"
        script.write_text(code)
        r = self.run(" ".join(["python", shlex.quote(f"{GUEST_XFER}/{script.name}")] + [shlex.quote(a) for a in args]),
                     timeout=timeout, check=True)
        return json.loads(r.out.strip().splitlines()[-1])

    def ssdpts(self, *args: str, check: bool = True, timeout: float = 300) -> Result:
        return self.run("ssdpts " + " ".join(shlex.quote(a) for a in args), timeout=timeout, check=check)

    def qmp(self, command: str, **arguments) -> object:
        """One QEMU monitor (QMP) command, e.g. to plug a drive in or pull it out while the guest runs;
        its "return". Raises RuntimeError with QEMU's own words when QEMU refuses it."""
        with socket.socket(socket.AF_UNIX) as s:
            s.settimeout(60)
            s.connect(str(self.qmp_socket))
            stream = s.makefile("rw")
            json.loads(stream.readline())                  # the greeting
            for request in ({"execute": "qmp_capabilities"}, {"execute": command, "arguments": arguments}):
                stream.write(json.dumps(request) + "\n")
                stream.flush()
                reply = json.loads(stream.readline())
                while "event" in reply:                    # asynchronous events come in between
                    reply = json.loads(stream.readline())
                if "error" in reply:
                    raise RuntimeError(f"QEMU refused {request['execute']}: {reply['error'].get('desc')}")
            return reply["return"]

    def plug_nvme(self, drive: Drive) -> str:
        """Hot-plug an NVMe drive of one namespace (the guest's PCI hotplug finds it); its guest /dev path.
        Pull it out again with `qmp("device_del", id=f"tb{drive.name}")`."""
        img = self.image(drive, 1)
        with open(img, "wb") as f:
            f.truncate(drive.sizes_mib[0] * MiB)
        self.qmp("blockdev-add", driver="raw", **{"node-name": f"tb{drive.name}1"},
                 file={"driver": "file", "filename": str(img)}, cache={"no-flush": True})
        self.qmp("device_add", driver="nvme", id=f"tb{drive.name}", serial=drive.serial, drive=f"tb{drive.name}1")
        found = self.run(f"for i in $(seq 600); do grep -lsw {drive.serial} /sys/block/nvme*/device/serial && exit 0; "
                         "sleep 0.2; done; exit 1", timeout=150, check=True).out.split()[0]
        name = found.split("/")[3]          # /sys/block/NAME/device/serial
        return f"/dev/{name}"

    def disk(self, drive: str, ns: int = 1) -> str:
        """The guest's /dev path of `drive` (namespace `ns` for NVMe)."""
        return self.devices[drive]["disks"][ns - 1]

    def ctrl(self, drive: str) -> str:
        return self.devices[drive]["ctrl"]

    def stop(self) -> None:
        if self.proc is None or self.proc.poll() is not None:
            return
        try:
            (self.xfer / "stop").write_text("")
            self.proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


def main(argv: list[str]) -> int:
    """Boot a guest, run each argument as a command in it, print the output, stop it."""
    if not argv or argv[0] in ("-h", "--help"):
        print(__doc__)
        return 2
    why = why_unavailable()
    if why:
        print(f"cannot start the guest: {why}", file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory(prefix="ssdpts-vm-") as d:
        g = Guest(Path(d))
        try:
            g.start()
            print(f"# booted in {g.boot_seconds:.1f} s ({accel()}); drives: {json.dumps(g.devices)}", file=sys.stderr)
            rc = 0
            for cmd in argv:
                r = g.run(cmd, timeout=3600)
                sys.stdout.write(r.out)
                sys.stderr.write(r.err)
                print(f"# exit {r.rc} after {r.seconds:.1f} s: {cmd}", file=sys.stderr)
                rc = rc or r.rc
            return rc
        finally:
            g.stop()


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
