from __future__ import annotations

from dataclasses import asdict, dataclass, field
from pathlib import Path

from ..capabilities import Capability


HYPOTHETICAL = "hypothetical"     # Target.kind of a drive planned by its capacity alone (`plan --capacity`)


@dataclass
class Target:
    """A device under test. `fio_filename` is what fio opens; sizes are in bytes."""

    kind: str                     # block | file | sim | set | hypothetical
    spec: str                     # what the user typed
    path: str                     # resolved path (or sim preset name)
    size_bytes: int
    logical_block_size: int = 512
    physical_block_size: int = 4096
    info: dict = field(default_factory=dict)

    host: str | None = None       # fio server "host[:port]" for remote targets; None = this machine
    # an NVMe namespace tested through its generic character device (/dev/ngXnY): what fio opens, while `path`
    # stays the namespace's block device (safety, identify, health and purge act on it); None: fio opens `path`
    passthrough: str | None = None

    @property
    def fio_filename(self) -> str:
        return self.passthrough or self.path

    @property
    def label_id(self) -> str:
        """How results name this target: the path, prefixed by the host when remote."""
        return f"{self.host}:{self.path}" if self.host else self.path

    @property
    def label(self) -> str:
        model = self.info.get("model")
        return f"{model} ({self.fio_filename})" if model else self.fio_filename

    def to_dict(self) -> dict:
        return asdict(self)

    def drives(self) -> list["Target"]:
        """The drives this target stands for: itself (a TargetSet: its members)."""
        return [self]

    @property
    def capabilities(self) -> frozenset[Capability]:
        """What this target offers the tests (a remote target: only what its fio server can do)."""
        if self.host is not None:
            return frozenset({Capability.PURGE})
        local = {Capability.PURGE, Capability.HEALTH}
        if self.kind == "block" and not self.passthrough:     # passthrough I/O bypasses the block layer
            local.add(Capability.LOCAL_BLOCK_LAYER)
        if self.kind in ("block", "file") and not self.passthrough:
            local.add(Capability.LOCAL_FILE_SYSTEM)
        return frozenset(local | _ENGINE_SIDE)

    def attach_state(self, results_dir: Path, run_id: str, checkpoint: dict | None) -> None:
        """Targets with state of their own (the simulated SSD) restore the committed checkpoint; others have none."""

    def prepare_checkpoint(self, force: bool = False) -> dict | None:
        """Targets with state of their own write it and name it here, to be committed with the data; others: None."""
        return None

    def checkpoint_committed(self, checkpoint: dict) -> None:
        """The database now names `checkpoint` (older state files may go)."""


# what a local target leaves entirely to the engine (the target does not limit these)
_ENGINE_SIDE = frozenset({Capability.GATED_CHAINING, Capability.TIMED_IDLE, Capability.STREAMING,
                          Capability.BANDWIDTH_LOG, Capability.CHECKPOINT})
