"""A fio process's job file and command line: the round's cells rendered with the run's I/O engine choice, each
job its own reporting group, held at its gate before its I/O and reporting its end after it (gates.py), and a
trace cell's iologs written for its target. The engine's session (fio.py) decides which cells go together and
behind which gates; this module only writes what fio is given."""

from __future__ import annotations

from pathlib import Path
from typing import Sequence

from ..workload import Workload
from ..workload.fio import render_chosen
from ..workload.ioengine import IoChoice
from ..workload.trace import write_iologs
from .gates import Gates

STATUS_INTERVAL_S = 1.0   # fio's status documents for a round submitted with on_progress
MAX_CELLS_PER_PROCESS = 32   # bounds the jobs (threads, buffers) one waiting fio process holds


def process_chunks(cells: Sequence[Workload], one_per_process: bool) -> list[list[Workload]]:
    """The round's cells cut into fio processes. One cell per process where fio prints status documents (a
    streamed round or progress reports): fio's status dump waits for every running job, so a job gated in
    exec_prerun behind another job of the same process would deadlock the dump."""
    if one_per_process:
        return [[c] for c in cells]
    return [list(cells[i:i + MAX_CELLS_PER_PROCESS]) for i in range(0, len(cells), MAX_CELLS_PER_PROCESS)]


def gated_job(cells: Sequence[Workload], members: Sequence, io: IoChoice, gates: Gates,
              waits: Sequence[int | None], gids: Sequence[int], folder: Path) -> str:
    """The job text of one fio process running `cells` on `members`: cell k's jobs wait at gate `waits[k]` and
    report to gate `gids[k]`; a trace cell's iologs are written into `folder`, where fio runs."""
    job = render_chosen(cells, members, io)
    at = 0
    for w, prev, gid in zip(cells, waits, gids):
        n = len(w.fio_jobs()) * len(members)
        for k, (name, opts) in enumerate(job.sections[at:at + n]):
            if "read_iolog" in opts:     # a trace cell: one job per target, its iologs made for that target
                t = members[k]
                write_iologs(w.trace, [folder / f for f in opts["read_iolog"].split(":")], t.fio_filename,
                             t.size_bytes, t.logical_block_size)
            opts["new_group"] = ""     # every job its own report: a several-job cell's jobs are merged when read
            opts["exec_prerun"] = gates.wait_hook(prev, gid)
            opts["exec_postrun"] = gates.fire_hook(gid)
        at += n
    return job.text()


def fio_command(binary: str, job_path: Path, out_path: Path, interval_s: float | None) -> list[str]:
    """fio's command line: with `interval_s`, periodic cumulative status documents on stdout, cut into intervals
    as they arrive (streaming) or read for progress, the last one fio's final result; else the result in
    `out_path`."""
    if interval_s:
        return [binary, "--output-format=json+", f"--status-interval={int(interval_s * 1000)}ms", str(job_path)]
    return [binary, "--output-format=json+", f"--output={out_path}", str(job_path)]
