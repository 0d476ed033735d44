"""The studies' sequential fill: one job writing a span (or a multiple of it) at a deep queue before the
measurements, so that reads meet mapped data and the drive is in a known state. Its block size and queue
depth are declared here, once, for every study that fills."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..settings import BLOCK_SIZE, key
from ..units import bs_label, parse_size
from ..workload import Workload

if TYPE_CHECKING:
    from .context import TestContext

FILL_BLOCK_SIZE = "128k"      # as a profile writes it (the studies' `fill_block_size` key)
FILL_IODEPTH = 32             # one job at QD32: how the seeds filled (and ran WIPC)


def fill_block_size_key(doc: str) -> Any:
    """A study's `fill_block_size` profile key, with the declared default."""
    return key(BLOCK_SIZE, FILL_BLOCK_SIZE, doc)


def default_fill_block_size() -> int:
    """The declared fill block size in bytes (studies without their own key)."""
    return parse_size(FILL_BLOCK_SIZE)


def fill(ctx: TestContext, bs: int, range_size: float, total_bytes: float, *, name: str | None = None,
         rw: str = "write", iodepth: int | None = None) -> Workload:
    """One job at the fill queue depth (unless `iodepth`) writing `total_bytes` - whole blocks of `bs`, one at
    least - over the first `range_size` (a fraction) of the target, with the test's data pattern."""
    return Workload(name=name or f"fill_seq_{bs_label(bs)}_write", rw=rw, bs=bs, threads=1,
                    iodepth=iodepth or FILL_IODEPTH, range_size=range_size,
                    io_size=max(bs, int(total_bytes) // bs * bs), data_pattern=ctx.settings.data_pattern)
