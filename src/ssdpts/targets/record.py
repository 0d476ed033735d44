"""A run's target as stored with it (runs.target_json, written from `Target.to_dict`): what the report, the
exports, the verdict and resume read back. Decoded once, by the store (`Store.run`); encoded back to exactly
the stored data, so an export of an old run shows its target as it was stored."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any


@dataclass(frozen=True)
class TargetRecord:
    kind: str                     # block | file | sim | set | hypothetical
    spec: str                     # what the user typed
    path: str                     # resolved path (a set: its members' labels, comma-separated)
    size_bytes: int
    logical_block_size: int = 512
    physical_block_size: int = 4096
    # what identify found, by kind: model, serial, firmware, transport, write_cache, facts (DeviceFacts), a
    # simulated drive's preset and params; a set's members as stored targets (`members` decodes them)
    info: dict[str, Any] = field(default_factory=dict)
    host: str | None = None       # fio server "host[:port]" of a remote target
    passthrough: str | None = None
    members: tuple[TargetRecord, ...] = ()     # a set's drives, decoded from info["members"]
    stored: dict[str, Any] = field(default_factory=dict, repr=False, compare=False)   # the data as stored

    @classmethod
    def from_json(cls, data: dict | None) -> TargetRecord:
        """The stored target; keys an older ssdpts did not store take the defaults above."""
        data = data or {}
        info = data.get("info") or {}
        return cls(kind=data.get("kind") or "", spec=data.get("spec") or "", path=data.get("path") or "",
                   size_bytes=data.get("size_bytes") or 0,
                   logical_block_size=data.get("logical_block_size", cls.logical_block_size),
                   physical_block_size=data.get("physical_block_size", cls.physical_block_size),
                   info=info, host=data.get("host"), passthrough=data.get("passthrough"),
                   members=tuple(cls.from_json(m) for m in info.get("members") or []), stored=data)

    def to_json(self) -> dict:
        """The target as stored (the live simulated drive, which old runs stored beside it, left out)."""
        return {k: v for k, v in self.stored.items() if k != "drive"}

    @property
    def model(self) -> str | None:
        return self.info.get("model")

    @property
    def serial(self) -> str | None:
        return self.info.get("serial")

    @property
    def firmware(self) -> str | None:
        return self.info.get("firmware")

    @property
    def transport(self) -> str | None:
        return self.info.get("transport")

    @property
    def label_id(self) -> str:
        """How results name this drive: the path (the spec when none was stored), prefixed by the host when
        remote (`Target.label_id`)."""
        where = self.path or self.spec
        return f"{self.host}:{where}" if self.host else where

    def drives(self) -> list[TargetRecord]:
        """The drives this target stands for: a set's members, else itself (`Target.drives`)."""
        return list(self.members) or [self]

    @property
    def simulated_presets(self) -> list[str] | None:
        """The presets (or user files) of a simulated target, each once; None when any drive is real."""
        drives = self.drives()
        if any(d.kind != "sim" for d in drives):
            return None
        return list(dict.fromkeys(str(d.info.get("preset") or "") for d in drives))


@dataclass
class PurgeRecord:
    """How the target was purged (targets/purge.py does it): stored in tests' summaries, read without the purge."""

    method: str
    snia_purge: bool
    command: str
    seconds: float
    note: str = ""

    def to_dict(self) -> dict:
        return asdict(self)
