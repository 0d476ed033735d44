"""The file-reuse study's typed summary: per pass (created, reused, recreated) the file's state before and after
and each workload's figures."""

from __future__ import annotations

from dataclasses import dataclass, field

from ...targets.extents import FileState
from ...results import CellWindow
from ..spec import Summary

CREATED, REUSED, RECREATED = "created", "reused", "recreated"


@dataclass
class FilePass:
    """One pass of the workloads over the file."""

    name: str                     # CREATED | REUSED | RECREATED
    removed_first: bool           # the file was deleted before the pass: fio created (laid out) it again
    before: FileState
    after: FileState
    cells: dict[str, CellWindow] = field(default_factory=dict)   # workload name -> its figures

    @property
    def fio_laid_out(self) -> bool:
        """fio had to create or extend the file: it was absent or smaller than the pass's workloads span."""
        return not self.before.exists or self.before.size_bytes < self.after.size_bytes


@dataclass
class FileReuseSummary(Summary):
    target: str
    placement: str                # "file on ext4 on /dev/..." (targets/placement.py)
    file_bytes: int               # the span of the workloads: the size fio gives a file it creates
    overwrite: bool               # fio overwrite=1: a created file written out in full before the write cells
    cell_runtime_s: float
    workloads: list[str] = field(default_factory=list)   # workload names, in run order
    labels: dict[str, str] = field(default_factory=dict)  # workload name -> "SEQ 128K write"
    passes: list[FilePass] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    def pass_(self, name: str) -> FilePass | None:
        return next((p for p in self.passes if p.name == name), None)

    def iops(self, pass_name: str, workload: str) -> float | None:
        p = self.pass_(pass_name)
        cell = p.cells.get(workload) if p else None
        return cell.iops if cell else None

    def ratio(self, pass_name: str, workload: str) -> float | None:
        """IOPS of `pass_name` over IOPS on the freshly created file."""
        base, other = self.iops(CREATED, workload), self.iops(pass_name, workload)
        return other / base if base and other is not None else None
