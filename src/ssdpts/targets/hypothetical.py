"""A drive you do not have, planned by its capacity and logical block alone (`ssdpts plan --capacity 3.84T`).

Nothing is opened or probed: the plan reads only the size, the logical block (which block sizes are allowed)
and the physical block (I/O alignment); the purge is the one the drive would choose at run time.
"""

from __future__ import annotations

from ..errors import SsdptsError
from ..units import format_capacity
from .base import HYPOTHETICAL, Target

LOGICAL_BLOCK_SIZES = (512, 4096)


def hypothetical_target(capacity_bytes: int, logical_block_size: int = 512) -> Target:
    """The drive's user capacity in whole logical blocks (a partial block is not addressable)."""
    if logical_block_size not in LOGICAL_BLOCK_SIZES:
        raise SsdptsError(f"--logical-block-size {logical_block_size} is not a drive format; use 512 or 4096")
    size = capacity_bytes // logical_block_size * logical_block_size
    if size == 0:
        raise SsdptsError(f"--capacity of {capacity_bytes} bytes is smaller than one {logical_block_size}-byte "
                          "logical block; give the drive's capacity, e.g. --capacity 3.84T")
    name = f"hypothetical drive of {format_capacity(size)} in {logical_block_size}-byte logical blocks"
    return Target(kind=HYPOTHETICAL, spec=f"hypothetical:{size}", path=name, size_bytes=size,
                  logical_block_size=logical_block_size, physical_block_size=max(4096, logical_block_size))
