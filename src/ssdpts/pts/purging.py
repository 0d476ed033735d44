"""Purge before a test or a phase, and the host page cache a buffered cell leaves behind."""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ..deviations import PURGE_SOURCE, Deviation
from ..records import from_data
from ..targets import Target
from ..targets.purge import PurgeRecord, purge
from ..targets.sim import SimTarget
from . import resume

if TYPE_CHECKING:
    from .context import TestContext


@dataclass(repr=False)
class Purger:
    """`ctx.purger`: the test's purges (each stored as a step, committed with the drive's checkpoint)."""
    ctx: TestContext

    def purge(self, phase: str = "") -> PurgeRecord:
        ctx = self.ctx
        key = f"purge:{ctx._ph(phase)}"
        done = ctx.store.step(ctx.run_id, ctx.test, key)
        if done is not None:
            return from_data(PurgeRecord, done)
        ctx.progress.message(f"{ctx.test}: purging {ctx.target.path} ({ctx.purge_method})")
        self.flush_page_cache()     # any test's direct=false cells may have left dirty pages behind
        resume.purged(ctx.store, ctx.run_id, ctx.test)
        rec = purge(ctx.target, ctx.purge_method, through=ctx.engine.purge)
        if not rec.snia_purge:
            # prominently: the test's results do not start from a purged (FOB) device
            ctx.progress.message(f"{ctx.test}: NOT CONFORMANT: {rec.method} is not a SNIA purge: {rec.note}")
            ctx.store.record_deviation(ctx.run_id, ctx.test, Deviation(
                "purge-not-snia", f"{ctx._ph(phase) or 'test'}: --purge {ctx.purge_method} used {rec.method} "
                f"({rec.note})", PURGE_SOURCE))
        # a purge recorded as done must never come back un-purged: its checkpoint is committed with it
        ctx.rounds.committed(lambda cp: ctx.store.record_step(ctx.run_id, ctx.test, key, "purge", rec.to_dict(),
                                                              checkpoint=cp), force=True)
        return rec

    def flush_page_cache(self) -> None:
        """Write back what buffered (direct=0) cells left dirty in the host's page cache (else a purge's
        BLKDISCARD fails with EBUSY and the dirty pages land in the next cells) and drop it."""
        for drive in self.ctx.target.drives():
            if _has_host_page_cache(drive):
                fd = os.open(drive.path, os.O_RDONLY)
                try:
                    os.fsync(fd)
                    os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
                finally:
                    os.close(fd)


def _has_host_page_cache(drive: Target) -> bool:
    """A block device or file on this machine that exists (a simulated drive has none, a remote one is not ours
    to flush, a file target not yet written has nothing cached)."""
    return drive.host is None and not isinstance(drive, SimTarget) and os.path.exists(drive.path)
