"""The profile keys of `file-reuse`: declared apart from how it runs, so that validating a profile
(plan, check, show) imports no round loop."""

from __future__ import annotations

from dataclasses import dataclass

from ...settings import ACTIVE_RANGE, BLOCK_SIZE, BOOL, TestSettings, key


@dataclass(frozen=True)
class FileReuseSettings(TestSettings):
    sequential_block_size: int = key(BLOCK_SIZE, "128k", "block size of the SEQ write workload")
    random_block_size: int = key(BLOCK_SIZE, "4k", "block size of the RND write and RND read workloads")
    file_size_percent: float = key(ACTIVE_RANGE, 100, "the file fio creates (and the workloads span), in % of "
                                                      "the file target's size")
    overwrite: bool = key(BOOL, False, "fio overwrite=1: a created file is written out in full before the write "
                                       "workloads (seed 002 ran overwrite=0, fio's default)")
    recreate: bool = key(BOOL, False, "a third pass: the file deleted and created by fio again")
