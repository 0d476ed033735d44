"""The bench checked before it measures: each check one line, ok / warn / fail / n/a, with the fix.

Every check is declared once in CHECKS (name, why it matters, where that comes from). `ssdpts doctor`
prints them; `ssdpts run` runs the same checks before it creates a run, stores them in the run's
platform record and refuses on a `fail` unless the user names it in --ignore-doctor. docs/doctor.md.

`n/a` means the fact cannot be read here (no cpufreq in a VM, no SMART on a loop device): said so,
never guessed. A check that does not concern the target (the simulator's memory on a real drive) is
left out.
"""

from __future__ import annotations

import os
import shutil
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Callable

from .engines.fio_versions import MIN_FIO, fio_binary, fio_version
from .errors import SsdptsError
from .findings import Finding, Status, counts, recorded_checks, summary, worst  # noqa: F401  (doctor.NAME as before)
from .health import snapshot
from .targets import Target
from .targets import sysfs, writecache
from .targets.hold import open_by
from .targets.sysfs import SysRoots


@dataclass(frozen=True)
class Outcome:
    """A check function's answer; the registry adds the check's name."""

    status: Status
    found: str
    fix: str = ""


def ok(found: str) -> Outcome:
    return Outcome(Status.OK, found)


def warn(found: str, fix: str) -> Outcome:
    return Outcome(Status.WARN, found, fix)


def fail(found: str, fix: str) -> Outcome:
    return Outcome(Status.FAIL, found, fix)


def not_available(why: str, fix: str = "") -> Outcome:
    return Outcome(Status.NA, f"not available ({why})", fix)


@dataclass
class Bench:
    """What the checks look at: the target (None: the machine only), what the profile asks, and the roots of
    /sys and /proc (tests give fake trees)."""

    target: Target | None = None
    write_cache_required: str = "unchanged"     # the profile's [defaults] write_cache
    set_write_cache: bool = False               # --set-write-cache: ssdpts may set it for the run
    roots: SysRoots = field(default_factory=SysRoots)
    fio_binary: str | None = None                # None: $SSDPTS_FIO, else fio on the PATH

    def drives(self) -> list[Target]:
        return self.target.drives() if self.target is not None else []

    def local_block_drives(self) -> list[Target]:
        return [d for d in self.drives() if d.kind == "block" and d.host is None]

    @property
    def kinds(self) -> set[str]:
        return {d.kind for d in self.drives()}


@dataclass(frozen=True)
class Check:
    name: str
    why: str
    source: str
    run: Callable[[Bench], Outcome]
    applies: Callable[[Bench], bool] = lambda bench: True


# ------------------------------------------------------------------------------------------------
# the checks

def _fio(bench: Bench) -> Outcome:
    needed = bench.target is None or bench.kinds != {"sim"}
    try:
        binary = bench.fio_binary or fio_binary()
        version = fio_version(binary)
    except SsdptsError as e:
        if not needed:
            return ok(f"{e} — the simulated drive does not use fio")
        return fail(str(e), f"install fio >= {MIN_FIO[0]}.{MIN_FIO[1]} (apt-get install fio, dnf install fio)")
    return ok(f"{version} at {shutil.which(binary)} (needs >= {MIN_FIO[0]}.{MIN_FIO[1]})")


def _tool(name: str, package: str, used_for: str) -> Callable[[Bench], Outcome]:
    def check(bench: Bench) -> Outcome:
        path = shutil.which(name)
        if path:
            return ok(f"{path}")
        return warn(f"{name} is not installed: {used_for} is not available",
                    f"install {package} (apt-get install {package})")
    return check


def _needs_drive_tools(bench: Bench) -> bool:
    """smartctl / nvme-cli only matter for block devices (or the bench in general, without a target)."""
    return bench.target is None or bool(bench.local_block_drives())


# capability bits (linux/capability.h) a run on a block device uses
_CAPS = {21: "CAP_SYS_ADMIN (purge, NVMe admin commands, write cache)", 17: "CAP_SYS_RAWIO (SMART, ATA commands)"}


def _effective_caps(roots: SysRoots) -> int:
    for line in sysfs.read_text(roots.proc / "self" / "status").splitlines():
        if line.startswith("CapEff:"):
            return int(line.split()[1], 16)
    return 0


def _privileges(bench: Bench) -> Outcome:
    if os.geteuid() == 0:
        return ok("running as root")
    caps = _effective_caps(bench.roots)
    lacking = [what for bit, what in _CAPS.items() if not caps >> bit & 1]
    drives = bench.local_block_drives()
    unwritable = [d.path for d in drives if not os.access(d.path, os.R_OK | os.W_OK)]
    if unwritable:
        return fail(f"not root, and {', '.join(unwritable)} is not readable and writable by this user",
                    "run ssdpts as root (sudo), or give this user the device (e.g. the 'disk' group)")
    if lacking and (drives or bench.target is None):
        return warn(f"not root; lacking {', '.join(lacking)}",
                    "run as root (sudo) so purge, SMART and the write-cache setting work")
    return ok(f"not root (uid {os.geteuid()}); a {'/'.join(sorted(bench.kinds)) or 'file'} target needs no privilege")


def _cpu_dir(roots: SysRoots) -> Path:
    return roots.sys / "devices" / "system" / "cpu"


def _no_cpufreq(roots: SysRoots) -> str:
    vm = "hypervisor" in sysfs.read_text(roots.proc / "cpuinfo")
    return "no cpufreq in this VM" if vm else "no cpufreq driver in sysfs"


def _governor(bench: Bench) -> Outcome:
    governors: dict[str, list[str]] = {}
    for g in sorted(_cpu_dir(bench.roots).glob("cpu[0-9]*/cpufreq/scaling_governor")):
        governors.setdefault(sysfs.read_text(g) or "?", []).append(g.parent.parent.name)
    if not governors:
        return not_available(_no_cpufreq(bench.roots))
    listing = ", ".join(f"{g} on {len(cpus)} CPU(s)" for g, cpus in governors.items())
    if set(governors) == {"performance"}:
        return ok(listing)
    return warn(f"{listing}: clock changes with load shift latency and IOPS between rounds",
                "cpupower frequency-set -g performance (or echo performance > "
                "/sys/devices/system/cpu/cpu*/cpufreq/scaling_governor)")


def _boost(bench: Bench) -> Outcome:
    cpu = _cpu_dir(bench.roots)
    no_turbo = sysfs.read_text(cpu / "intel_pstate" / "no_turbo")
    if no_turbo in ("0", "1"):
        return ok(f"turbo {'off' if no_turbo == '1' else 'on'} (intel_pstate/no_turbo = {no_turbo})")
    boost = sysfs.read_text(cpu / "cpufreq" / "boost")
    if boost in ("0", "1"):
        return ok(f"boost {'on' if boost == '1' else 'off'} (cpufreq/boost = {boost})")
    return not_available(_no_cpufreq(bench.roots))


_GOOD_SCHEDULERS = ("none", "mq-deadline")


def _queue_of(drive: Target, roots: SysRoots) -> tuple[str, Path] | None:
    """(disk name, its queue directory): the drive's own disk, or for a file the disk its file system is on."""
    if drive.kind == "block":
        name = sysfs.whole_disk(sysfs.device_name(drive.path, roots), roots)
    else:
        try:
            dev = os.stat(drive.path if os.path.exists(drive.path) else os.path.dirname(drive.path)).st_dev
        except OSError:
            return None
        link = roots.sys / "dev" / "block" / f"{os.major(dev)}:{os.minor(dev)}"
        if not link.exists():
            return None
        name = sysfs.whole_disk(Path(os.path.realpath(link)).name, roots)
    queue = sysfs.block_dir(name, roots) / "queue"
    return (name, queue) if queue.is_dir() else None


def _scheduler(bench: Bench) -> Outcome:
    lines, bad = [], []
    for d in bench.drives():
        if d.kind not in ("block", "file") or d.host is not None:
            where = "the simulated drive has none" if d.kind == "sim" else f"on {d.host}, not visible from here"
            lines.append(f"{d.label_id}: not available ({where})")
            continue
        found = _queue_of(d, bench.roots)
        if found is None:
            lines.append(f"{d.path}: not available (on no block device, e.g. tmpfs)")
            continue
        name, queue = found
        text = sysfs.read_text(queue / "scheduler")
        active = text[text.find("[") + 1:text.find("]")] if "[" in text else text
        lines.append(f"{name}: scheduler {active or '?'}, nr_requests {sysfs.read_text(queue / 'nr_requests') or '?'}")
        if active and active not in _GOOD_SCHEDULERS:
            bad.append((name, active))
    found = "; ".join(lines)
    if bad:
        name, active = bad[0]
        return warn(f"{found} — {active} adds CPU work and idling per I/O that caps IOPS and shifts latency",
                    f"echo none > /sys/block/{name}/queue/scheduler (or mq-deadline)")
    if all("not available" in line for line in lines):
        return Outcome(Status.NA, found)
    return ok(found)


def _holders(bench: Bench) -> Outcome:
    busy = []
    for d in bench.drives():
        openers = open_by(d.path, bench.roots) if d.host is None and d.kind in ("block", "file") else []
        if openers:
            busy.append(f"{d.path} by {', '.join(map(str, openers))}")
    if busy:
        return fail(f"open {'; '.join(busy)}: its I/O would mix with the test's (and a write may destroy it)",
                    "stop those processes (fuser -v DEV lists them)")
    seen = "" if os.geteuid() == 0 else " (as far as this user can see)"
    return ok(f"no other process has the target open{seen}")


# the simulator's state: ~8 bytes per 4 KiB of capacity (forward and reverse map; measured: 33 MiB for the
# 16 GiB sim:client), held twice while a checkpoint is written
_SIM_STATE_BYTES_PER_4K = 8


def _meminfo(roots: SysRoots) -> dict[str, int]:
    out = {}
    for line in sysfs.read_text(roots.proc / "meminfo").splitlines():
        key, _, rest = line.partition(":")
        if rest.split():
            out[key] = int(rest.split()[0]) * 1024
    return out


def _memory(bench: Bench) -> Outcome:
    need = sum(2 * d.size_bytes // 4096 * _SIM_STATE_BYTES_PER_4K for d in bench.drives() if d.kind == "sim")
    mem = _meminfo(bench.roots)
    if "MemAvailable" not in mem:
        return not_available("no MemAvailable in /proc/meminfo")
    avail, swap = mem["MemAvailable"], mem.get("SwapFree", 0)
    found = (f"the simulated drive needs about {need / 2**20:.0f} MiB; {avail / 2**30:.1f} GiB available, "
             f"swap {swap / 2**30:.1f} GiB free of {mem.get('SwapTotal', 0) / 2**30:.1f} GiB")
    if need > avail + swap:
        return fail(found, "free memory, or simulate a smaller drive (capacity.user_gib in the drive's .toml)")
    if need > avail:
        return warn(found + ": it would swap, and run far slower", "free memory before the run")
    return ok(found)


def _temperature(bench: Bench) -> Outcome:
    lines, hot = [], []
    for d in bench.drives():
        rec = snapshot(d)
        temp = rec.get("temperature_c")
        if temp is None:
            why = (rec.get("missing") or {}).get("temperature_c") or rec.get("reason") or "not reported"
            lines.append(f"{d.label_id}: not available ({why})")
            continue
        wctemp = ((rec.get("raw") or {}).get("nvme_id_ctrl") or {}).get("wctemp")
        limit = wctemp - 273 if isinstance(wctemp, int) and wctemp > 0 else None
        crit = rec.get("critical_warning") or 0
        text = f"{d.label_id}: {temp:.0f} °C" + (f" (warning threshold {limit} °C)" if limit else "")
        if crit & 0x02:      # NVMe critical warning bit 1: over a temperature threshold
            hot.append(text + ", critical warning bit 1 set: over its temperature threshold, it may be throttling")
        elif limit is not None and temp >= limit:
            hot.append(text + ": at or over its warning threshold, it may be throttling")
        else:
            lines.append(text)
    if hot:
        return warn("; ".join(hot + lines), "cool the drive (airflow, heatsink) and wait before measuring")
    if all("not available" in line for line in lines):
        return Outcome(Status.NA, "; ".join(lines))
    return ok("; ".join(lines))


def _write_cache(bench: Bench) -> Outcome:
    want = bench.write_cache_required
    lines, off = [], []
    for d in bench.drives():
        if d.kind in ("sim", "file") or d.host is not None:
            where = "the simulated drive has none" if d.kind == "sim" else \
                "a file has none of its own" if d.kind == "file" else f"not readable on {d.host}"
            lines.append(f"{d.label_id}: not available ({where})")
            continue
        have = writecache.read_state(d)
        lines.append(f"{d.label_id}: {have or 'not available (the drive does not say)'}")
        if want in ("enabled", "disabled") and have is not None and have != want:
            off.append(d.label_id)
    found = f"profile asks {want}; " + "; ".join(lines)
    if off and bench.set_write_cache:
        return ok(found + " — --set-write-cache sets it for the run and restores it")
    if off:
        return warn(found + " — results would carry a recorded deviation",
                    "add --set-write-cache (ssdpts sets it for the run and restores it)")
    if all("not available" in line for line in lines):
        return Outcome(Status.NA, found)
    return ok(found)


def _has_sim(bench: Bench) -> bool:
    return "sim" in bench.kinds


def _has_local_io(bench: Bench) -> bool:
    """Local block devices and files: a block-layer queue and processes of this machine can touch them (the
    simulator's drive lives in ssdpts; a fio host's devices are not visible from here)."""
    return any(d.kind in ("block", "file") and d.host is None for d in bench.drives())


def _has_target(bench: Bench) -> bool:
    return bench.target is not None


CHECKS: tuple[Check, ...] = (
    Check("fio", "every test's I/O is fio's; its JSON changed across versions", "fio(1) HOWTO, engines/fio_versions.py MIN_FIO",
          _fio),
    Check("smartctl", "health, wear and temperature of SATA/SAS drives (and NVMe) come from it", "smartctl(8)",
          _tool("smartctl", "smartmontools", "drive health and temperature"), _needs_drive_tools),
    Check("nvme-cli", "NVMe health log, sanitize/format purge and the write-cache feature use it", "nvme(1)",
          _tool("nvme", "nvme-cli", "NVMe purge, health log and write cache"), _needs_drive_tools),
    Check("privileges", "purge, SMART and write-cache commands need root or CAP_SYS_ADMIN/CAP_SYS_RAWIO",
          "capabilities(7)", _privileges),
    Check("cpu-governor", "a governor other than performance changes the clock with load: latency and IOPS move",
          "kernel Documentation/admin-guide/pm/cpufreq.rst", lambda b: _here(b, _governor(b))),
    Check("cpu-boost", "turbo/boost makes results depend on temperature and load; recorded for comparison",
          "kernel Documentation/admin-guide/pm/intel_pstate.rst, cpufreq boost", lambda b: _here(b, _boost(b))),
    Check("io-scheduler", "bfq/kyber add per-I/O work and idling; nr_requests bounds what reaches the drive",
          "kernel Documentation/block/queue-sysfs.rst", _scheduler, _has_local_io),
    Check("open-by", "another process on the target mixes its I/O into the measurement or loses its data",
          "proc(5) /proc/PID/fd", _holders, _has_local_io),
    Check("memory", "the simulated drive's state lives in memory and is copied for every checkpoint",
          "proc(5) /proc/meminfo; measured state size (docs/doctor.md)", _memory, _has_sim),
    Check("temperature", "a hot drive throttles: its IOPS fall for reasons the test does not measure",
          "NVMe Base Spec SMART/Health log (critical warning bit 1), Identify Controller WCTEMP", _temperature,
          _has_target),
    Check("write-cache", "PTS-E requires the volatile write cache disabled, PTS-C enabled",
          "SNIA PTS-E 1.1 / PTS-C 1.2 (WCD / WCE)", _write_cache, _has_target),
)

NAMES = tuple(c.name for c in CHECKS)


def _here(bench: Bench, outcome: Outcome) -> Outcome:
    """This machine's CPU facts, said to be this machine's when the drives are on fio hosts."""
    if any(d.host for d in bench.drives()):
        return replace(outcome, found=f"this machine (the fio hosts' are not visible): {outcome.found}")
    return outcome


def examine(bench: Bench, only: frozenset[str] | None = None) -> list[Finding]:
    """Every check that concerns this bench (or the checks named in `only`), in order. A check that breaks
    is a `fail` naming the error."""
    out = []
    for c in CHECKS:
        if not c.applies(bench) or (only is not None and c.name not in only):
            continue
        try:
            o = c.run(bench)
        except Exception as e:    # one broken check must not hide the others
            o = fail(f"the check itself failed: {type(e).__name__}: {e}", "report it; --ignore-doctor skips it")
        out.append(Finding(c.name, o.status, o.found, o.fix))
    return out


def parse_ignored(value: str | None) -> frozenset[str]:
    """--ignore-doctor CHECK[,CHECK] (or 'all'): known names only."""
    names = frozenset(n.strip() for n in (value or "").split(",") if n.strip())
    unknown = sorted(names - set(NAMES) - {"all"})
    if unknown:
        raise SsdptsError(f"--ignore-doctor: unknown check {unknown[0]!r}; the checks are {', '.join(NAMES)} (or all)")
    return frozenset(NAMES) if "all" in names else names


def gate(bench: Bench, ignored: frozenset[str], target_spec: str) -> list[Finding]:
    """The checks before a run: refused (one line, naming the check and the override) on a `fail` not in
    `ignored`; the findings, ignored fails marked, for the run's platform record."""
    findings = [replace(f, ignored=True) if f.status is Status.FAIL and f.check in ignored else f
                for f in examine(bench)]
    failed = next((f for f in findings if f.status is Status.FAIL and not f.ignored), None)
    if failed is not None:
        raise SsdptsError(f"refusing to run: doctor check {failed.check} failed: {failed.found}; {failed.fix}; or "
                          f"add --ignore-doctor {failed.check} to run anyway ('ssdpts doctor {target_spec}' "
                          "lists every check)")
    return findings
