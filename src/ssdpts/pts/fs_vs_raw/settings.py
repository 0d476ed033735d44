"""The profile keys of `fs-vs-raw`: declared apart from how it runs, so that validating a profile
(plan, check, show) imports no round loop."""

from __future__ import annotations

from dataclasses import dataclass

from ...settings import BLOCK_SIZES, BOOL, PCTS, ACTIVE_RANGE, TestSettings, choice, key
from ...targets.filesystem import FILESYSTEMS
from ..fill import fill_block_size_key


@dataclass(frozen=True)
class FsVsRawSettings(TestSettings):
    random_block_sizes: tuple[int, ...] = key(BLOCK_SIZES, ["4k"], "block sizes of the random workloads")
    sequential_block_sizes: tuple[int, ...] = key(BLOCK_SIZES, ["128k"], "block sizes of the sequential workloads")
    read_percents: tuple[int, ...] = key(PCTS, [100, 0], "R/W mixes of every workload, as read %")
    filesystem: str = key(choice(*FILESYSTEMS), "ext4", "file system made on the device for the file side")
    file_size_percent: float = key(ACTIVE_RANGE, 80, "the test file's size, in % of the device capacity")
    fill_first: bool = key(BOOL, True, "write the span once (SEQ) before the workloads: reads of never-written "
                                       "blocks measure no media (a file system answers them with zeros)")
    fill_block_size: int = fill_block_size_key("block size of the fill")
