"""The fio process tree: how a fio process and everything it forks are started, found, signalled and killed.

fio's forked job processes (thread=0) call setsid(): neither fio's process group nor its session holds them,
only the parent links do, so they are found through /proc and killed as a tree (`kill_fio`); a reaper kills the
tree when ssdpts dies without telling it to go (`start_reaper`). What the tree was doing when it stopped making
progress is `stall_evidence`. fioprocess.py supervises one fio process with these; docs/testing.md "Stalls".
"""

from __future__ import annotations

import os
import signal
import subprocess
import time
from pathlib import Path
from typing import Sequence

from ..realtime import die_with_parent
from .blockidle import stat_path_for


def start_reaper() -> subprocess.Popen:
    """A shell that kills the fio process started next, and what it forked, when ssdpts ends without telling
    it to go: it reads a line from a pipe only ssdpts holds, and the pipe closes (end of file, `read` fails)
    however ssdpts dies, kill -9 included. fio is stopped first so that its job processes are still its
    children when they are looked for (see `kill_fio`). `stop_reaper` sends the line. Its own session: a
    Ctrl-C at the terminal does not reach it.

    It is started before fio, and learns fio's pid from fio itself: the first line on the pipe, written by
    the forked child before it execs fio (`fio_preexec`). Until that exec the child holds the pipe too, so
    the reaper cannot see the end of file before it has the pid: there is no moment at which fio runs
    without a reaper (started after fio, a kill -9 of ssdpts between the two left fio and its job
    processes writing on)."""
    script = ('read pid || exit 0; [ "$pid" = done ] && exit 0; '
              'read line || { kill -STOP $pid; jobs=$(pgrep -P $pid); kill -STOP $jobs; '
              'for j in $jobs; do hooks="$hooks $(pgrep -P $j)"; done; kill -KILL $pid $jobs $hooks; }')
    return subprocess.Popen(["sh", "-c", script], stdin=subprocess.PIPE, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL, start_new_session=True)


def stop_reaper(reaper: subprocess.Popen) -> None:
    try:
        reaper.stdin.write(b"done\n")
        reaper.stdin.close()
    except OSError:
        pass
    reaper.wait()



def fio_preexec(in_background: bool, reaper: subprocess.Popen | None = None):
    """Without `reaper`, fio dies with ssdpts (its jobs are threads); with one, the child tells it its pid
    before it execs fio (forked job processes do not die with ssdpts: the reaper kills them, fio included)."""
    parent = os.getpid()
    tell_fd = reaper.stdin.fileno() if reaper is not None else None

    def preexec() -> None:
        if tell_fd is not None:
            os.write(tell_fd, b"%d\n" % os.getpid())
        else:
            die_with_parent()
            if os.getppid() != parent:     # ssdpts ended before the death signal was asked for
                os._exit(1)
        if in_background:
            os.sched_setscheduler(0, os.SCHED_IDLE, os.sched_param(0))
    return preexec


def descendants(pid: int) -> list[int]:
    """Every process below `pid`. fio's forked job processes (thread=0) call setsid(): neither fio's process
    group nor its session holds them, only the parent links do (until fio ends and init adopts them)."""
    children: dict[int, list[int]] = {}
    for proc in Path("/proc").glob("[0-9]*"):
        try:
            ppid = int((proc / "stat").read_text().rsplit(") ", 1)[1].split()[1])
        except (OSError, IndexError, ValueError):
            continue   # ended meanwhile
        children.setdefault(ppid, []).append(int(proc.name))
    found, todo = [], [pid]
    while todo:
        kids = children.get(todo.pop(), [])
        found += kids
        todo += kids
    return found


def _fio_tasks(pid: int) -> list[Path]:
    """/proc/PID/task/TID of every thread of fio process `pid` and of the processes below it: its job
    processes (thread=0) and the hook shells its jobs started."""
    tasks = []
    for p in [pid, *descendants(pid)]:
        tasks += Path(f"/proc/{p}/task").glob("*")
    return sorted(tasks, key=lambda t: int(t.name))


def _signal(pids, sig: int) -> None:
    for p in pids:
        try:
            os.kill(p, sig)
        except (ProcessLookupError, PermissionError):
            continue


def kill_fio(pid: int) -> None:
    """SIGKILL fio process `pid` (leader of its process group), its job processes and their hook shells.
    Everything is stopped first: fio forks no more jobs and they stay its children while they are looked
    for (a killed fio's job processes go to init, and keep writing to the device)."""
    _signal([pid], signal.SIGSTOP)
    below = descendants(pid)
    _signal(below, signal.SIGSTOP)
    _signal({*below, *descendants(pid)}, signal.SIGKILL)
    try:
        os.killpg(pid, signal.SIGKILL)
    except ProcessLookupError:
        pass


def to_foreground(pid: int, nice: int) -> None:
    """Give every thread of fio process `pid` and of the processes below it (its job processes, the hook
    shells its jobs started) the normal policy at priority `nice` (the engine's own)."""
    for task in _fio_tasks(pid):
        try:
            os.sched_setscheduler(int(task.name), os.SCHED_OTHER, os.sched_param(0))
            os.setpriority(os.PRIO_PROCESS, int(task.name), nice)
        except (ProcessLookupError, PermissionError):
            continue



def _read(path: Path) -> str:
    try:
        return path.read_text(errors="replace").strip()
    except OSError as e:
        return f"(unreadable: {e.strerror})"


def stall_evidence(pid: int, members: Sequence) -> str:
    """Where a stalled fio process is: every thread's kernel stack and wait channel, its job processes'
    included (root reads the stacks),
    and the requests in flight on each device below it (0 in flight while fio waits: a completion was lost)."""
    lines = [f"fio pid {pid}, {time.strftime('%Y-%m-%d %H:%M:%S %z')}"]
    for m in members:
        stat = stat_path_for(m.path)
        if stat is not None:
            lines.append(f"{m.path}: in flight (read write) {_read(stat.parent / 'inflight')}; "
                         f"stat {_read(stat)}")
    for task in _fio_tasks(pid):
        lines.append(f"\n--- thread {task.name} of {task.parent.parent.name} ({_read(task / 'comm')}) state "
                     f"{_read(task / 'stat').split(') ')[-1][:1]} wchan {_read(task / 'wchan')}")
        lines.append(_read(task / "stack"))
    return "\n".join(lines)
