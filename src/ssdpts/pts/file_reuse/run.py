"""File create vs reuse (seed 002 ran a 2.5 GB fio file job twice and the numbers differed).

Pass `created`: the file is deleted, so fio creates it: for a write job fio allocates it without writing it
(fallocate; unless overwrite=1, then it writes it out in full), for a read job it writes it out in full, before
the job's clock starts. Pass `reused`: the same workloads on the file as it now is (fio lays nothing out: the file
exists and is large enough). Optional pass `recreated`: deleted and created by fio again (the file system may hand
it the blocks just freed, which the drive still holds as valid data: no TRIM unless mounted with discard).
The file's extent map before and after each pass (targets/extents.py) shows what fio did.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from ...errors import SsdptsError
from ...records import from_data, to_data
from ...settings import key
from ...targets.extents import FileState, file_state
from ...targets.hold import relock, remove_locked_file
from ...targets.resolve import prepare_file
from ...targets.safety import is_scratch_file, mark_scratch_file
from ...units import bs_label
from ...workload import Workload
from ..windows import window_summary
from ..plan import TestPlan, once
from .summary import CREATED, RECREATED, REUSED, FilePass, FileReuseSummary
from .settings import FileReuseSettings

if TYPE_CHECKING:     # annotations only: reading a stored run's settings imports no round loop
    from ..context import TestContext


def workloads(ctx: TestContext) -> list[Workload]:
    s = ctx.settings
    span = s.file_size_percent / 100
    seq, rnd = s.sequential_block_size, s.random_block_size
    return [ctx.cells.cell(f"seq_{bs_label(seq)}_write", "write", seq, 0, range_size=span, overwrite=s.overwrite),
            ctx.cells.cell(f"rnd_{bs_label(rnd)}_write", "randwrite", rnd, 0, range_size=span, overwrite=s.overwrite),
            ctx.cells.cell(f"rnd_{bs_label(rnd)}_read", "randread", rnd, 100, range_size=span, overwrite=s.overwrite)]


def label(w: Workload) -> str:
    return f"{'RND' if w.random else 'SEQ'} {bs_label(w.bs)} {'read' if w.reads == 100 else 'write'}"


def passes(ctx: TestContext) -> list[tuple[str, bool]]:
    """(pass, delete the file first) in run order."""
    return [(CREATED, True), (REUSED, False)] + ([(RECREATED, True)] if ctx.settings.recreate else [])


def plan(ctx: TestContext) -> TestPlan:
    w = workloads(ctx)
    return TestPlan("file-reuse", [
        once(name, ("file deleted, created by fio, then " if fresh else "the same file reused: ")
             + ", ".join(label(c) for c in w), w) for name, fresh in passes(ctx)])


def _check_target(ctx: TestContext) -> None:
    t = ctx.target
    if t.kind != "file" or t.host is not None:
        raise SsdptsError(f"file-reuse needs a file target (a path in a local file system, e.g. /mnt/ssd/test.img); "
                          f"{t.spec} is a {t.kind if t.host is None else 'remote'} target")


def _run_pass(ctx: TestContext, name: str, fresh: bool, cells: list[Workload]) -> FilePass:
    path = ctx.target.path
    key = f"file-before:{name}"
    done = ctx.store.rounds(ctx.run_id, ctx.test, ctx.scope + name, with_cells=False)
    stored = ctx.store.step(ctx.run_id, ctx.test, key)
    if done and stored is not None:
        before = from_data(FileState, stored)
    else:
        if fresh and os.path.exists(path):
            remove_locked_file(path)       # the run's lock let go: the deleted file's blocks are free for fio's
        before = file_state(path)
        ctx.store.record_step(ctx.run_id, ctx.test, key, "file-state", to_data(before))
    rounds = ctx.rounds.run_sequence(name, cells, chunk=len(cells))
    relock(path)                           # fio made a new file: the run holds it as it held the old one
    if not is_scratch_file(path):
        mark_scratch_file(path)            # fio made a new file: it is still ssdpts's scratch file
    return FilePass(name, fresh, before, file_state(path), window_summary(rounds, [rounds[-1].round]))


def run(ctx: TestContext) -> FileReuseSummary:
    _check_target(ctx)
    cells = workloads(ctx)
    done = [_run_pass(ctx, name, fresh, cells) for name, fresh in passes(ctx)]
    prepare_file(ctx.target)               # back to the target's full size for the tests after this one
    created = done[0]
    notes = [f"{p.name}: file before {p.before.describe()}; after {p.after.describe()}"
             + ("; fio created it (laid out)" if p.fio_laid_out else "; fio laid nothing out (file exists, large enough)")
             for p in done]
    if created.after.unwritten_bytes:
        notes.append("blocks left allocated but unwritten after a pass are read as zeros by the file system "
                     "without drive I/O: RND reads over them are not drive reads")
    return FileReuseSummary(target=ctx.target.path, placement=str(ctx.target.info.get("placement", "file")),
                            file_bytes=created.after.size_bytes, overwrite=ctx.settings.overwrite,
                            cell_runtime_s=ctx.settings.cell_runtime, workloads=[w.name for w in cells],
                            labels={w.name: label(w) for w in cells}, passes=done, notes=notes)
