"""Which fio I/O engine a run uses: the profile's request checked against the fio in use (`fio --enghelp`),
the kernel (io_uring may be switched off) and the targets (polled completions need poll queues; io_uring_cmd
needs an NVMe generic character device), before anything is created. docs/bench.md "The I/O engine".

`auto` takes io_uring (by capability, not by a measurement on the target: on zram libaio did more I/Os per CPU
second, docs/bench.md) where all of it is usable,
else libaio, and says why. A named engine the bench cannot use is refused in one line naming what is missing.
"""

from __future__ import annotations

import functools
import os
import subprocess
from pathlib import Path
from typing import Sequence

from ..errors import SsdptsError
from ..realtime.timing import TOOL_TIMEOUT_S
from ..targets import sysfs
from ..targets.sysfs import SysRoots
from ..workload.ioengine import AUTO, IoChoice, IoRequest
from .blockidle import stat_path_for
from .fio_versions import parse_version

IO_URING_DISABLED = Path("/proc/sys/kernel/io_uring_disabled")
LOOP_NOTE = ("libaio loses completions on loop devices on this kernel when a job thread runs a hook "
             "(docs/testing.md, \"Stalls\")")
SEVERAL_ON_LOOP = ("several drives of which one is behind a loop device: fio 3.33's io_uring crashed there (heap "
                   "corruption, docs/testing.md \"Stalls\"), so libaio with a process per job")


@functools.cache
def fio_engines(binary: str) -> frozenset[str]:
    """The engines this fio was built with (asked once per binary)."""
    try:
        out = subprocess.run([binary, "--enghelp"], capture_output=True, text=True, timeout=TOOL_TIMEOUT_S).stdout
    except (OSError, subprocess.TimeoutExpired):
        return frozenset()
    return frozenset(out.split()[3:])     # after "Available IO engines:"


@functools.cache
def fio_engine_options(binary: str, engine: str) -> frozenset[str]:
    """The options of one of this fio's engines (`fio --enghelp=ENGINE`: one `name : help` a line)."""
    try:
        out = subprocess.run([binary, f"--enghelp={engine}"], capture_output=True, text=True,
                             timeout=TOOL_TIMEOUT_S).stdout
    except (OSError, subprocess.TimeoutExpired):
        return frozenset()
    return frozenset(line.split(":")[0].strip() for line in out.splitlines() if ":" in line)


def kernel_refusal(engine: str, disabled_file: Path = IO_URING_DISABLED) -> str | None:
    """Why the kernel will not give this process io_uring (io_uring_disabled: 0 all, 1 privileged only,
    2 none; absent before Linux 6.6), or None."""
    try:
        disabled = int(disabled_file.read_text())
    except (OSError, ValueError):
        return None
    if disabled == 2 or (disabled == 1 and os.geteuid() != 0):
        return (f"{engine} needs io_uring, which this kernel has switched off ({disabled_file} = {disabled}); "
                f"write 0 to it, or set ioengine = \"libaio\"")
    return None


def _queue_dir(path: str) -> Path | None:
    """The request queue's sysfs directory of the block device carrying `path` (a partition's is its disk's)."""
    st = stat_path_for(path)
    if st is None:
        return None
    for d in (st.parent, st.parent.parent):
        if (d / "queue").is_dir():
            return d / "queue"
    return None


def poll_refusal(path: str) -> str | None:
    """hipri (polled completions) needs a device with poll queues: queue/io_poll = 1 (NVMe: poll_queues > 0)."""
    q = _queue_dir(path)
    try:
        polled = q is not None and (q / "io_poll").read_text().strip() == "1"
    except OSError:
        polled = False
    if polled:
        return None
    where = f"{q}/io_poll = 0" if q is not None and (q / "io_poll").exists() else "no queue/io_poll"
    return (f"hipri needs polled completions, which {path} does not offer ({where}; an NVMe drive offers them "
            f"with the nvme module's poll_queues > 0); drop hipri, or load nvme with poll_queues=N")


PASSTHROUGH_ENGINE = "io_uring_cmd"
PASSTHROUGH_FIO = (3, 31)      # the first fio whose io_uring_cmd engine takes cmd_type=nvme
PASSTHROUGH_OPTIONS = {"cmd_type": "nvme"}   # io_uring_cmd sends NVMe commands (not SCSI/other passthrough)


def _passthrough(member) -> str | None:
    """The NVMe generic character device fio opens for this member, or None (a block device or a file)."""
    return getattr(member, "passthrough", None)


def _generic_node_hint(member) -> str:
    """Where io_uring_cmd was asked for a block device: the namespace's /dev/ngXnY to name instead, if it has one."""
    try:
        roots = SysRoots()
        ng = sysfs.nvme_generic_node(sysfs.device_name(member.path, roots), roots)
    except OSError:
        ng = None
    return f"name its NVMe generic device /dev/{ng} as the target, or " if ng else ""


def passthrough_refusals(engine: str, members: Sequence, version: str) -> list[str]:
    """An NVMe generic device takes io_uring_cmd only, and io_uring_cmd only an NVMe generic device."""
    if engine != PASSTHROUGH_ENGINE:
        return [f"{engine} cannot drive {ng}, an NVMe generic character device (it has no block-layer I/O path); "
                f"set ioengine = \"{PASSTHROUGH_ENGINE}\" or \"auto\", or name the block device {m.path}"
                for m in members if (ng := _passthrough(m))]
    return [f"io_uring_cmd needs an NVMe generic character device (/dev/ngXnY) as the target, {m.path} is not one; "
            f"{_generic_node_hint(m)}set ioengine = \"io_uring\" for a block device or file"
            for m in members if not _passthrough(m)]


def fio_too_old(version: str) -> str | None:
    """io_uring_cmd with cmd_type=nvme came with fio 3.31: an older fio is refused by its version."""
    got = parse_version(version)
    if got is None or got >= PASSTHROUGH_FIO:
        return None
    return (f"{version} cannot send NVMe commands (io_uring_cmd with cmd_type=nvme needs fio "
            f"{'.'.join(map(str, PASSTHROUGH_FIO))} or later); install a newer fio, or name the namespace's block "
            "device with ioengine = \"io_uring\"")


def refusals(engine: str, request: IoRequest, members: Sequence, binary: str, version: str) -> list[str]:
    """What keeps this bench from running `engine` with the request's options: one `problem; fix` each."""
    out = []
    if engine == PASSTHROUGH_ENGINE and (old := fio_too_old(version)):
        return [old]
    if engine not in fio_engines(binary):
        out.append(f"{version} ({binary}) was built without the {engine} engine (fio --enghelp); install a fio "
                   f"built with it, or set ioengine = \"auto\"")
        return out
    known = fio_engine_options(binary, engine)
    out += [f"{version}'s {engine} engine has no option {o} (fio --enghelp={engine}); drop {o}, or use an engine "
            f"that has it" for o in request.options if o not in known]
    if engine.startswith("io_uring") and (k := kernel_refusal(engine)):
        out.append(k)
    out += passthrough_refusals(engine, members, version)
    if "hipri" in request.options:
        out += [r for m in members if (r := poll_refusal(m.path))]
    return out


def _on_loop(members: Sequence) -> bool:
    stats = [stat_path_for(m.path) for m in members]
    return any(st is not None and st.parent.name.startswith("loop") for st in stats)


def choose(request: IoRequest, members: Sequence, binary: str, version: str) -> IoChoice:
    """The engine for a local fio session on `members`, or SsdptsError naming what the bench lacks."""
    asked = request.describe()
    if any(getattr(m, "kind", "") == "sim" for m in members):    # (a run on it has no fio engine: io_choice)
        return IoChoice(asked, "libaio", "a simulated drive in a fio session: libaio, as always there")
    if any(getattr(m, "host", None) for m in members):
        if request.ioengine not in (AUTO, "libaio") or request.options:
            raise SsdptsError(f"ioengine = {asked} cannot be checked on a remote fio server from here; set "
                              f"ioengine = \"auto\" or \"libaio\" (without io_uring options) for remote targets")
        return IoChoice(asked, "libaio", "a remote fio server: its engines and kernel are not probed from here")
    on_loop, several = _on_loop(members), len(members) > 1
    if request.ioengine == AUTO and any(_passthrough(m) for m in members):
        lacking = refusals(PASSTHROUGH_ENGINE, request, members, binary, version)
        if lacking:
            raise SsdptsError(lacking[0])
        return IoChoice(asked, PASSTHROUGH_ENGINE, "the target is an NVMe generic character device, which only "
                        "io_uring_cmd drives (NVMe commands past the block layer)", options=request.options,
                        fio_options=PASSTHROUGH_OPTIONS)
    if request.ioengine == "libaio":
        lacking = refusals("libaio", request, members, binary, version)
        if lacking:
            raise SsdptsError(lacking[0])
        if on_loop:
            return IoChoice(asked, "libaio", f"as asked, a process per job: {LOOP_NOTE}", threads=False)
        return IoChoice(asked, "libaio", "as asked")
    if request.ioengine != AUTO:
        lacking = refusals(request.ioengine, request, members, binary, version)
        if on_loop and several:
            lacking.append(f"{request.ioengine} with {SEVERAL_ON_LOOP}; set ioengine = \"auto\" or \"libaio\"")
        if lacking:
            raise SsdptsError(lacking[0])
        return IoChoice(asked, request.ioengine, "as asked", options=request.options,
                        fio_options=PASSTHROUGH_OPTIONS if request.ioengine == PASSTHROUGH_ENGINE else {})
    if on_loop and several:
        return IoChoice(asked, "libaio", SEVERAL_ON_LOOP, threads=False)
    lacking = refusals("io_uring", request, members, binary, version)
    if not lacking:
        why = "fio, the kernel and the target offer io_uring (chosen by capability, not measured on this target)"
        return IoChoice(asked, "io_uring", why + (f" ({LOOP_NOTE})" if on_loop else ""), options=request.options)
    why = "io_uring is not usable here: " + lacking[0].split(";")[0]
    if on_loop:
        return IoChoice(asked, "libaio", f"{why}; a process per job: {LOOP_NOTE}", threads=False)
    return IoChoice(asked, "libaio", why)


def engine_choice(engine, members: Sequence) -> IoChoice:
    """The engine's one I/O engine choice, as engines.engine_for made it (or a run recorded it). An engine made
    without one (a bench script, a test) makes it on its first session, from its own request, and keeps it."""
    if engine.io is None:
        engine.io = choose(engine.io_request, members, engine.binary, engine.version)
    return engine.io
