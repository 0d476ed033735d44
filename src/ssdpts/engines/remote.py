"""Remote fio engine: the same rounds, run by `fio --server` on other hosts through `fio --client`.

One client process per host and round, all started together (lock-step by round); a host that
fails or drops is marked failed for the rest of the run while the others continue. Within a round,
cells are separated by fio's `stonewall` (the local gates cannot reach a remote host), so expect
fio's usual 0.1-0.3 s between cells; the gap between rounds is measured and stored.
"""

from __future__ import annotations

import os
import signal
import subprocess
import tempfile
import threading
import time
from pathlib import Path
from typing import Sequence

from ..capabilities import Capability
from ..errors import SsdptsError
from ..targets.purge import PurgeRecord
from ..targets.remote import reachable, split_host
from ..workload import Workload
from ..workload.fio import filename_value, render_chosen
from ..workload.ioengine import IoChoice, IoRequest
from .blockidle import UNAVAILABLE_REMOTE
from .stimulus import not_available
from ..realtime import die_with_parent
from ..realtime.timing import PURGE_TIMEOUT_S, TOOL_TIMEOUT_S
from .fio_versions import fio_binary, fio_version
from .fiolog import intervals_from_logs
from .fiojson import parse_output
from .ioengine import engine_choice
from .results import RoundOutput, aggregate


NO_STREAMING = ("continuous (streaming) tests such as WSAT/XSR are not supported on remote hosts yet; run them "
                "with ssdpts on each host")


class RemoteFioEngine:
    name = "fio-remote"
    keep_dir = None      # job files stay with the remote session (failures name the host's answer)
    # cells are separated by fio's stonewall and rounds by a new client process: no gates, no timed idle,
    # no streaming; the remote side's health and block layer are out of reach
    capabilities = frozenset({Capability.PURGE, Capability.FIO_JOBS})
    last_io_at = None    # no block-layer sampler reaches the hosts: a stop's pause is measured from its time
    trace_stimulus = False   # refused up front (check_traceable): no block layer here to trace

    def __init__(self, binary: str | None = None, io_request: IoRequest = IoRequest()):
        self.binary = binary or fio_binary()
        self.version = fio_version(self.binary)
        self.io_request = io_request     # auto or libaio: a remote server's engines are not probed (ioengine.choose)
        self.io: IoChoice | None = None  # the choice every session renders (engines.engine_for sets it)
        self.failed: dict[str, str] = {}      # target label -> why it failed (kept for the whole run)

    def _client(self, host_port: str) -> str:
        host, port = split_host(host_port)
        return f"--client=ip6:{host},{port}" if ":" in host else f"--client=ip:{host},{port}"

    def preflight(self, members) -> None:
        """Before anything is written: every host reachable, same fio protocol, targets present."""
        for host in sorted({m.host for m in members}):
            why = reachable(host)
            if why:
                raise SsdptsError(f"fio server {host} is not reachable ({why}); start 'fio --server' there "
                                  "(see docs/scale.md) or drop the host")
        from concurrent.futures import ThreadPoolExecutor

        with tempfile.TemporaryDirectory(prefix="ssdpts-probe-") as tmp, ThreadPoolExecutor(16) as pool:
            for error in pool.map(lambda m: self._probe(m, Path(tmp)), members):   # all hosts at once
                if error:
                    raise SsdptsError(error)

    def _probe(self, m, tmp: Path) -> str | None:
        """A 4 KiB read at the end of the declared size: the target exists, is that big, and fio talks to us."""
        job = tmp / f"probe-{abs(hash(m.label_id))}.fio"
        job.write_text(f"[probe]\nfilename={filename_value(m.path)}\nrw=read\nbs=4096\nsize=4096\n"
                       f"offset={m.size_bytes - 4096}\nioengine=psync\n")
        p = subprocess.run([self.binary, self._client(m.host), "--output-format=json", str(job)],
                           capture_output=True, text=True, timeout=TOOL_TIMEOUT_S, cwd=tmp)
        text = (p.stdout + p.stderr).strip()
        if "version mismatch" in text:
            return (f"fio on {m.host} speaks another protocol than local {self.version}; "
                    "install the same fio version on every host")
        try:
            _, probe = parse_output(p.stdout)
            ok = p.returncode == 0 and any(c.read.ios > 0 for c in probe)
        except SsdptsError:
            ok = False
        if ok:
            self._probe_block_size(m, tmp)
            return None
        why = next((l.strip() for l in text.splitlines() if "fio:" in l or "error" in l.lower()), "")
        return (f"target {m.label_id} cannot be read at its declared size ({m.size_bytes} bytes)"
                f"{': ' + why if why else ''}; check the device path and --size/size on that host")

    def _reads(self, m, tmp: Path, bs: int) -> bool:
        """Whether an O_DIRECT read of `bs` bytes at offset 0 succeeds on the fio host."""
        job = tmp / f"lbs{bs}-{abs(hash(m.label_id))}.fio"
        job.write_text(f"[lbs]\nfilename={filename_value(m.path)}\nrw=read\nbs={bs}\nsize={bs}\noffset=0\ndirect=1\n"
                       "ioengine=psync\n")
        p = subprocess.run([self.binary, self._client(m.host), "--output-format=json", str(job)],
                           capture_output=True, text=True, timeout=TOOL_TIMEOUT_S, cwd=tmp)
        try:
            _, cells = parse_output(p.stdout)
        except SsdptsError:
            return False
        return p.returncode == 0 and any(c.read.ios > 0 and not c.read.bytes % bs for c in cells)

    def _probe_block_size(self, m, tmp: Path) -> None:
        """The logical block size is the smallest O_DIRECT read the device accepts (512 or 4096)."""
        for bs in (512, 4096):
            if self._reads(m, tmp, bs):
                m.logical_block_size = bs
                m.info["logical_block_size_source"] = f"probed on the fio host: O_DIRECT {bs}-byte read accepted"
                return
        m.info["logical_block_size_source"] = "probe failed: assumed 4096"

    def session(self, target) -> "RemoteSession":
        return RemoteSession(self, target)

    def purge(self, drive, method: str) -> PurgeRecord:
        """TRIM of the whole remote device through a fio trim job (not a SNIA purge): the only purge fio can do
        on another host, so any other method is refused there (recorded as no purge, saying why)."""
        if method not in ("auto", "trim"):
            return PurgeRecord("none", False, "", 0.0, f"{method} cannot run through fio on {drive.host}; "
                               "purge the drive there first, or use --purge trim")
        t0 = time.monotonic()
        with tempfile.TemporaryDirectory(prefix="ssdpts-trim-") as tmp:
            job = Path(tmp) / "trim.fio"
            job.write_text(f"[trim]\nfilename={filename_value(drive.path)}\nrw=trim\nbs=16m\nsize={drive.size_bytes}\n"
                           "ioengine=psync\n")
            cmd = [self.binary, self._client(drive.host), "--output-format=json", str(job)]
            p = subprocess.run(cmd, capture_output=True, text=True, timeout=PURGE_TIMEOUT_S, cwd=tmp)
            if p.returncode != 0:
                raise SsdptsError(f"remote TRIM of {drive.label_id} failed: {(p.stderr or p.stdout).strip()[-200:]}")
        return PurgeRecord("trim", False, " ".join(cmd), time.monotonic() - t0,
                           "TRIM of every LBA through a remote fio trim job: not a SNIA purge")


class RemoteRound:
    def __init__(self, session: "RemoteSession", cells: Sequence[Workload], tag: str):
        several = next((c.name for c in cells if c.jobs), None)
        if several:     # cells are chained by stonewall per target section (_start): one job per cell and target
            raise SsdptsError(f"cell {several} runs several fio jobs at once, which the remote engine does not; "
                              "run the test on a local target")
        self.session = session
        self.cells = list(cells)
        self.tag = tag
        self._result: RoundOutput | None = None
        self._started = False
        self.procs: dict[str, tuple[subprocess.Popen, list, str, list[str]]] = {}
        self.dirs: dict[str, Path] = {}       # host -> the folder its fio client ran in (its interval logs)

    def _start(self) -> None:
        """Start one client per live host, all together (called when the previous round is done)."""
        s = self.session
        self._started = True
        self.started_at = time.time()
        by_host: dict[str, list] = {}
        for m in s.members:
            if m.label_id not in s.engine.failed:
                by_host.setdefault(m.host, []).append(m)
        s.count += 1
        for host, members in by_host.items():
            job = render_chosen(self.cells, members, s.io)
            for i, (name, opts) in enumerate(job.sections):
                opts["new_group"] = ""
                if i >= len(members) and i % len(members) == 0:
                    opts["stonewall"] = ""   # wait for the previous cell; this cell's drives start together
            folder = s.dir / f"round-{s.count:05d}-{host.replace(':', '_')}"
            folder.mkdir()
            path = folder / "round.fio"
            path.write_text(job.text())
            cmd = [s.engine.binary, s.engine._client(host), "--output-format=json+", str(path)]
            # cwd: the fio client writes the jobs' interval logs (NAME_iops.N.log.HOST) into its current directory
            proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=folder,
                                    start_new_session=True, preexec_fn=die_with_parent)
            self.dirs[host] = folder
            self.procs[host] = (proc, members, job.text(), cmd)

    def cancel(self) -> None:
        for proc, *_ in self.procs.values():
            if proc.poll() is None:
                try:
                    os.killpg(proc.pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
                proc.wait()

    def intervals(self):
        """Not offered (no STREAMING capability): a remote session refuses a streaming round when it is submitted."""
        raise SsdptsError(NO_STREAMING)

    def interval_output(self, iv) -> RoundOutput:
        raise SsdptsError(NO_STREAMING)

    def result(self) -> RoundOutput:
        if self._result is not None:
            return self._result
        s = self.session
        for r in s.queue:                 # rounds run in submission order
            if r is self:
                break
            r.result()
        gap_from = s.last_end
        self._start()
        outputs: dict[str, tuple[str, str]] = {}
        threads = []
        for host, (proc, _, _, _) in self.procs.items():
            def wait(host=host, proc=proc):
                out, err = proc.communicate()
                outputs[host] = (out, err)
            t = threading.Thread(target=wait)
            t.start()
            threads.append(t)
        for t in threads:
            t.join()
        ended = time.time()
        s.last_end = ended
        parts: list[dict] = [dict() for _ in self.cells]
        texts, errs = [], []
        logs: dict[str, str] = {}      # the interval logs of the hosts that answered (names end in .HOST)
        for host, (proc, members, _, _) in self.procs.items():
            out, err = outputs[host]
            texts.append(out)
            errs.append(err)
            try:
                if proc.returncode != 0:
                    lines = [l.strip() for l in (err + "\n" + out).splitlines()
                             if "fio:" in l or "error" in l.lower() or "connect" in l.lower()]
                    raise SsdptsError(lines[0] if lines else f"fio client exited with code {proc.returncode}")
                _, cells = parse_output(out)
                if len(cells) != len(self.cells) * len(members):
                    raise SsdptsError(f"got {len(cells)} results for {len(self.cells) * len(members)} jobs")
            except SsdptsError as e:
                for m in members:
                    s.engine.failed[m.label_id] = f"{self.tag or 'round'}: {e}"
                continue
            for k in range(len(self.cells)):
                for j, m in enumerate(members):
                    parts[k][m.label_id] = cells[k * len(members) + j]
            logs.update({f.name: f.read_text(errors="replace") for f in sorted(self.dirs[host].glob("*.log.*"))})
        if not any(parts):
            raise SsdptsError("every remote host failed: " + "; ".join(f"{k}: {v}" for k, v in s.engine.failed.items()))
        cells = [aggregate(p, w.name) for p, w in zip(parts, self.cells)]
        for c in cells:
            c.stimulus = not_available(UNAVAILABLE_REMOTE)
        for w, c in zip(self.cells, cells):    # as the local engine: a cell that asked for interval logs
            if w.log_interval_ms and not c.intervals:
                c.intervals = intervals_from_logs(logs, w.name, w.log_interval_ms)
        self._result = RoundOutput(
            cells=cells, engine="fio-remote", logs=logs, job_text="\n".join(v[2] for v in self.procs.values()),
            command=[c for v in self.procs.values() for c in v[3] + [";"]][:-1],
            raw_output="\n".join(texts), stderr="".join(errs), started_at=self.started_at, ended_at=ended,
            gap_before_ms=(self.started_at - gap_from) * 1000 if gap_from else None,
            device_idle_note=UNAVAILABLE_REMOTE, fio_version=s.engine.version)
        return self._result


class RemoteSession:
    def __init__(self, engine: RemoteFioEngine, target):
        self.engine = engine
        self.target = target
        self.members = list(target.drives())
        self.io = engine_choice(engine, self.members)
        # under the run's own files (RESULTS/logs/RUN_ID) where the run gave them: whatever fio's client writes
        # stays with the results; the logs are stored with each round, the folder goes at close
        self.keep_dir = engine.keep_dir
        if self.keep_dir is not None:
            self.keep_dir.mkdir(parents=True, exist_ok=True)
        self.dir = Path(tempfile.mkdtemp(prefix="remote-" if self.keep_dir else "ssdpts-remote-", dir=self.keep_dir))
        self.queue: list[RemoteRound] = []
        self.count = 0
        self.last_end: float | None = None

    def submit(self, cells: Sequence[Workload], tag: str = "", interval_s: float | None = None,
               on_progress=None) -> RemoteRound:
        """`on_progress` is not called: a remote fio client prints its results only at the end of a round."""
        if interval_s:
            raise SsdptsError(NO_STREAMING)
        if any(w.idle_before_s for w in cells):
            raise SsdptsError("timed idle periods (HIR) cannot be scheduled on remote hosts; run HIR with ssdpts "
                              "on each host")
        r = RemoteRound(self, cells, tag)
        self.queue.append(r)
        return r

    def close(self) -> None:
        for r in self.queue:
            r.cancel()
        import shutil

        shutil.rmtree(self.dir, ignore_errors=True)
        if self.keep_dir is not None:
            try:
                self.keep_dir.rmdir()      # made for this session alone: nothing else was kept there
            except OSError:
                pass

    def __enter__(self) -> "RemoteSession":
        return self

    def __exit__(self, *exc) -> None:
        self.close()
