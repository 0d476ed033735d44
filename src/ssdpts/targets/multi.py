"""Several targets tested at once, in lock-step: a TargetSet is one target to the tests.

Each workload cell runs on every member at the same time (one fio job group per member, started
together, and the next cell starts when all members have finished). Results are summed (IOPS,
bandwidth) into the aggregate, and every member's own result is kept with it.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..capabilities import Capability
from .base import Target


@dataclass
class TargetSet(Target):
    members: list[Target] = field(default_factory=list)

    @classmethod
    def of(cls, members: list[Target]) -> "TargetSet":
        # ranges and preconditioning sizes follow the smallest member: test identical drives together
        return cls(kind="set", spec=" ".join(m.spec for m in members), path=", ".join(m.label_id for m in members),
                   size_bytes=min(m.size_bytes for m in members),
                   logical_block_size=max(m.logical_block_size for m in members),
                   physical_block_size=max(m.physical_block_size for m in members),
                   info={"model": " + ".join(str(m.info.get("model") or m.path) for m in members),
                         "transport": "set", "members": [m.to_dict() for m in members]},
                   members=members)

    def drives(self) -> list[Target]:
        return list(self.members)

    @property
    def capabilities(self):
        caps = [m.capabilities for m in self.members]
        # a file-system study makes, mounts and trims one device at a time: not a set run in parallel
        return (frozenset.intersection(*caps) - {Capability.LOCAL_FILE_SYSTEM}) if caps else frozenset()

    def to_dict(self) -> dict:
        return {"kind": self.kind, "spec": self.spec, "path": self.path, "size_bytes": self.size_bytes,
                "logical_block_size": self.logical_block_size, "physical_block_size": self.physical_block_size,
                "info": self.info}
