from __future__ import annotations

from dataclasses import asdict, dataclass, field


@dataclass
class Target:
    """A device under test. `fio_filename` is what fio opens; sizes are in bytes."""

    kind: str                     # block | file | sim
    spec: str                     # what the user typed
    path: str                     # resolved path (or sim preset name)
    size_bytes: int
    logical_block_size: int = 512
    physical_block_size: int = 4096
    info: dict = field(default_factory=dict)

    @property
    def fio_filename(self) -> str:
        return self.path

    host: str | None = None       # fio server "host[:port]" for remote targets; None = this machine

    @property
    def label_id(self) -> str:
        """How results name this target: the path, prefixed by the host when remote."""
        return f"{self.host}:{self.path}" if self.host else self.path

    @property
    def label(self) -> str:
        model = self.info.get("model")
        return f"{model} ({self.path})" if model else self.path

    def to_dict(self) -> dict:
        return asdict(self)
