"""The simulated SSD as a target: `sim:client`, `sim:enterprise`, `sim:sata-mlc` or `sim:./drive.toml`.

The drive's whole state is checkpointed after every committed round, so a resumed run continues on
the same (simulated) drive.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

from ..capabilities import Capability
from ..errors import SsdptsError
from .base import Target


@dataclass
class SimTarget(Target):
    drive: object = field(default=None, repr=False, compare=False)
    state_path: Path | None = field(default=None, repr=False, compare=False)

    def to_dict(self) -> dict:
        return {"kind": self.kind, "spec": self.spec, "path": self.path, "size_bytes": self.size_bytes,
                "logical_block_size": self.logical_block_size, "physical_block_size": self.physical_block_size,
                "info": self.info}

    @property
    def capabilities(self):
        return frozenset({Capability.PURGE, Capability.HEALTH, Capability.CHECKPOINT, Capability.GATED_CHAINING,
                          Capability.TIMED_IDLE, Capability.STREAMING, Capability.BANDWIDTH_LOG})

    def counters(self) -> dict:
        return dict(self.drive.counters())

    # resumability ---------------------------------------------------------------------------
    def attach_state(self, results_dir: Path, run_id: str) -> None:
        """Use (and restore, if present) the checkpoint of this run's drive."""
        from .._sim import SimDrive

        self.state_path = Path(results_dir) / "sim" / f"{run_id}.state"
        if self.state_path.exists():
            self.drive = SimDrive.restore(self.state_path.read_bytes())

    CHECKPOINT_EVERY_S = 5.0   # a snapshot of a large drive costs milliseconds; rounds may be shorter

    def checkpoint(self, force: bool = False) -> None:
        """Save the drive's state (at most every few seconds of wall time unless forced)."""
        import time

        if self.state_path is None:
            return
        now = time.monotonic()
        if not force and now - getattr(self, "_last_checkpoint", -1e9) < self.CHECKPOINT_EVERY_S:
            return
        self._last_checkpoint = now
        self.state_path.parent.mkdir(parents=True, exist_ok=True)
        tmp = self.state_path.with_suffix(".tmp")
        tmp.write_bytes(self.drive.snapshot())
        os.replace(tmp, self.state_path)   # atomic: a crash leaves the previous checkpoint


def open_sim_target(spec: str) -> SimTarget:
    try:
        from .._sim import SimDrive
        from ..simdrive import load_params
    except ImportError as e:
        raise SsdptsError(f"the simulated SSD is not built ({e}); run 'make demo' or 'pip install -e .'") from None
    name = spec[len("sim:"):] or "client"
    try:
        params = load_params(name)
        drive = SimDrive(params)
    except (ValueError, FileNotFoundError) as e:
        raise SsdptsError(str(e)) from None
    label = Path(name).stem if name.endswith(".toml") else name
    info = {"model": f"ssdpts simulated SSD ({label})", "transport": "sim", "firmware": "ssdsim",
            "serial": None, "preset": name, "params": {k: v for k, v in params.items() if not isinstance(v, dict)}}
    return SimTarget(kind="sim", spec=spec, path=f"sim:{label}", size_bytes=int(drive.capacity_bytes),
                     logical_block_size=int(drive.logical_block_size), physical_block_size=4096, info=info,
                     drive=drive)
