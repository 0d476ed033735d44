"""Several targets tested at once, in lock-step: a TargetSet is one target to the tests.

Each workload cell runs on every member at the same time (one fio job group per member, started
together, and the next cell starts when all members have finished). Results are summed (IOPS,
bandwidth) into the aggregate, and every member's own result is kept with it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

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

    # members with state of their own (simulated drives) checkpoint together: one record names every member's
    # file, so a resume restores all of them to the same committed round
    def attach_state(self, results_dir: Path, run_id: str, checkpoint: dict | None) -> None:
        parts = (checkpoint or {}).get("members") or [None] * len(self.members)
        for m, part in zip(self.members, parts):
            m.attach_state(results_dir, run_id, part)

    def prepare_checkpoint(self, force: bool = False) -> dict | None:
        # the first member decides whether one is due; then every member writes its state, or none would match
        first = self.members[0].prepare_checkpoint(force)
        if first is None:
            return None
        parts = [first] + [m.prepare_checkpoint(force=True) for m in self.members[1:]]
        # the set's digest: of its members' digests, in order (each file is checked against its own on restore)
        import hashlib     # here: planning on a set checks no checkpoint
        digest = hashlib.sha256("".join(p["sha256"] for p in parts).encode()).hexdigest()
        return {"file": ", ".join(p["file"] for p in parts), "sha256": digest, "bytes": sum(p["bytes"] for p in parts),
                "members": parts}

    def checkpoint_committed(self, checkpoint: dict) -> None:
        for m, part in zip(self.members, checkpoint["members"]):
            m.checkpoint_committed(part)

    def to_dict(self) -> dict:
        return {"kind": self.kind, "spec": self.spec, "path": self.path, "size_bytes": self.size_bytes,
                "logical_block_size": self.logical_block_size, "physical_block_size": self.physical_block_size,
                "info": self.info}
