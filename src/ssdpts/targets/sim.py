"""The simulated SSD as a target: `sim:client`, `sim:enterprise`, `sim:sata-mlc` or `sim:./drive.toml`.

The drive's whole state is checkpointed with committed rounds (every CHECKPOINT_EVERY_S, and always at a
purge and at the end of every phase), so a resumed run continues on exactly the drive the database
describes: the state file is written first (under a new name), its name and digest are committed in the
same transaction as the round, and only then are older files removed; rounds committed after the last
checkpoint are rolled back on resume and run again (seeded, so identically). A crash between writing
and committing leaves an orphan newer file, never a database ahead of or behind its drive.
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass, field
from pathlib import Path

from ..capabilities import Capability
from ..errors import SsdptsError
from ..realtime.timing import CHECKPOINT_EVERY_S
from .base import Target


def _sha256(data: bytes) -> str:
    import hashlib     # here: opening a simulated drive (plan, info) checks no checkpoint
    return hashlib.sha256(data).hexdigest()


@dataclass
class SimTarget(Target):
    drive: object = field(default=None, repr=False, compare=False)
    state_path: Path | None = field(default=None, repr=False, compare=False)
    # a member of a set of simulated drives keeps its checkpoints apart from the others' ("d2." -> RUN.d2.*state)
    state_tag: str = field(default="", repr=False, compare=False)

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
    def attach_state(self, results_dir: Path, run_id: str, committed: dict | None = None) -> None:
        """Keep this run's checkpoints under results/sim/; restore the committed one, if any (the database's
        last committed round says which file; a newer file from an interrupted commit is ignored)."""
        from .._sim import SimDrive

        self.state_dir = Path(results_dir) / "sim"
        self.run_id = run_id
        self.state_path = None
        if committed:
            path = self.state_dir / committed["file"]
            if not path.exists():
                raise SsdptsError(f"the simulated drive's checkpoint {path} is missing: this run cannot be resumed "
                                  "on the same drive state; start a new run")
            data = path.read_bytes()
            if _sha256(data) != committed["sha256"]:
                raise SsdptsError(f"the simulated drive's checkpoint {path} does not match the database; "
                                  "start a new run")
            self.drive = SimDrive.restore(data)
            self.state_path = path
        elif not self.state_tag and (self.state_dir / f"{run_id}.state").exists():   # written by an older ssdpts
            self.state_path = self.state_dir / f"{run_id}.state"
            self.drive = SimDrive.restore(self.state_path.read_bytes())

    # a snapshot of a large drive is tens of MB: taken at most this often (and always when forced: purge, the
    # end of every phase); rounds committed after the last one are rolled back and re-run on resume
    CHECKPOINT_EVERY_S = CHECKPOINT_EVERY_S

    def prepare_checkpoint(self, force: bool = False) -> dict | None:
        """Write the drive's state to a new file when due; the caller commits the returned record with its data."""
        if getattr(self, "state_dir", None) is None:
            return None
        now = time.monotonic()
        if not force and now - getattr(self, "_last_checkpoint", -1e18) < self.CHECKPOINT_EVERY_S:
            return None
        self._last_checkpoint = now
        self.state_dir.mkdir(parents=True, exist_ok=True)
        self._seq = getattr(self, "_seq", 0) + 1
        data = self.drive.snapshot()
        name = f"{self.run_id}.{self.state_tag}{os.getpid()}.{self._seq:06d}.state"
        tmp = self.state_dir / (name + ".tmp")
        with open(tmp, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, self.state_dir / name)
        return {"file": name, "sha256": _sha256(data), "bytes": len(data)}

    def checkpoint_committed(self, checkpoint: dict) -> None:
        """The database now names `checkpoint`: the run's other state files are no longer needed."""
        self.state_path = self.state_dir / checkpoint["file"]
        for old in self.state_dir.glob(f"{self.run_id}.{self.state_tag}*state*"):
            if old.name != checkpoint["file"]:
                old.unlink(missing_ok=True)


def state_files(results_dir: Path, run_id: str) -> list[Path]:
    """The simulated drive's checkpoint files of a run (results/sim/RUN_ID.*state*)."""
    return sorted((Path(results_dir) / "sim").glob(f"{run_id}.*state*"))


def simulated(target: Target) -> bool:
    """Whether the target is simulated drives only (one, or a set of them): the simulator's engine runs it."""
    return all(isinstance(d, SimTarget) for d in target.drives())


def number_simulated(drives: list[SimTarget]) -> None:
    """Simulated drives tested together: each keeps its checkpoints apart (RUN.d1.*, RUN.d2.*), and the same
    preset given twice gets a name per drive (sim:enterprise#1, sim:enterprise#2), as two real drives have two."""
    if len(drives) < 2:
        return
    paths = [d.path for d in drives]
    for n, d in enumerate(drives, 1):
        d.state_tag = f"d{n}."
        if paths.count(d.path) > 1:
            d.path = f"{d.path}#{paths[:n].count(d.path)}"


def open_sim_target(spec: str) -> SimTarget:
    from .facts import sim_facts

    try:
        from .._sim import SimDrive
        from ..simdrive import load_params
    except ImportError as e:
        raise SsdptsError(f"the simulated SSD is not built ({e}); run 'make demo' or 'pip install -e .'") from None
    name = spec[len("sim:"):]
    if not name.strip():
        raise SsdptsError(f"{spec!r} names no simulated drive; give a preset or a file: sim:client, sim:enterprise, "
                          "sim:sata-mlc or sim:./drive.toml")
    try:
        params = load_params(name)
        drive = SimDrive(params)
    except (ValueError, FileNotFoundError) as e:
        raise SsdptsError(str(e)) from None
    label = Path(name).stem if name.endswith(".toml") else name
    info = {"model": f"ssdpts simulated SSD ({label})", "transport": "sim", "firmware": "ssdsim",
            "serial": None, "preset": name, "params": {k: v for k, v in params.items() if not isinstance(v, dict)}}
    info["facts"] = sim_facts(params).to_dict()
    return SimTarget(kind="sim", spec=spec, path=f"sim:{label}", size_bytes=int(drive.capacity_bytes),
                     logical_block_size=int(drive.logical_block_size), physical_block_size=4096, info=info,
                     drive=drive)
