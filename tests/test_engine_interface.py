"""One engine interface (engines/interface.py): every engine matches it, and the tests and runner use nothing else.

The match is structural (runtime_checkable isinstance / issubclass) and by signature: a method whose parameters
were renamed, reordered or lost a default fails here, not in a run on the engine nobody tried.
"""

from __future__ import annotations

import ast
import inspect
from pathlib import Path

import pytest

from ssdpts.engines.fio import FioEngine, FioRound, FioSession
from ssdpts.engines.interface import Engine, Round, Session
from ssdpts.engines.remote import RemoteFioEngine, RemoteRound, RemoteSession
from ssdpts.engines.sim import SimEngine, SimRound, SimSession, SimSetRound, SimSetSession
from ssdpts.errors import SsdptsError
from ssdpts.targets import Target
from ssdpts.targets.purge import purge

SRC = Path(__file__).resolve().parents[1] / "src" / "ssdpts"
ENGINES = [(FioEngine, FioSession, FioRound), (RemoteFioEngine, RemoteSession, RemoteRound),
           (SimEngine, SimSession, SimRound), (SimEngine, SimSetSession, SimSetRound)]


def _members(protocol: type) -> set[str]:
    """The Protocol's own members: annotated attributes and methods (typing's own machinery left out)."""
    own = set(protocol.__dict__.get("__annotations__", {}))
    own |= {k for k, v in protocol.__dict__.items() if callable(v) and (not k.startswith("_") or k in
                                                                      ("__enter__", "__exit__"))}
    return own


def _methods(protocol: type) -> list[str]:
    return sorted(m for m in _members(protocol) if callable(protocol.__dict__.get(m)))


def _shape(fn) -> list[tuple[str, object, bool]]:
    """Each parameter's name, kind and default (whether it has one, and which)."""
    return [(p.name, p.kind, p.default) for p in inspect.signature(fn).parameters.values()]


@pytest.mark.parametrize("engine, session, round_", ENGINES, ids=[e[1].__name__ for e in ENGINES])
def test_every_engine_matches_the_interface(engine, session, round_):
    assert isinstance(engine(), Engine)           # attributes set in __init__ included: needs an instance
    assert issubclass(session, Session) and issubclass(round_, Round)
    for protocol, cls in ((Engine, engine), (Session, session), (Round, round_)):
        for name in _methods(protocol):
            assert _shape(getattr(cls, name)) == _shape(getattr(protocol, name)), f"{cls.__name__}.{name}"


def test_the_recording_engine_of_the_procedure_tests_is_an_engine():
    from recording import RecordingEngine

    assert isinstance(RecordingEngine(), Engine)
    assert _shape(RecordingEngine.purge) == _shape(Engine.purge)
    assert _shape(RecordingEngine.submit) == _shape(Session.submit)


def test_the_capabilities_are_the_shared_flags():
    from ssdpts.capabilities import Capability

    for engine, _, _ in ENGINES:
        caps = engine().capabilities
        assert isinstance(caps, frozenset) and caps and all(isinstance(c, Capability) for c in caps)


def test_an_engine_refuses_what_its_capabilities_leave_out():
    """The remote engine declares no streaming and no timed idle: its sessions refuse both when submitted (before
    any host is contacted), and its rounds offer no intervals."""
    from ssdpts.capabilities import Capability
    from ssdpts.workload import Workload

    engine = RemoteFioEngine()
    assert not {Capability.STREAMING, Capability.TIMED_IDLE} & engine.capabilities
    cell = Workload(name="c", rw="randread", bs=4096, runtime_s=1.0)
    with engine.session(_remote()) as s:
        with pytest.raises(SsdptsError, match="streaming"):
            s.submit([cell], interval_s=1.0)
        with pytest.raises(SsdptsError, match="timed idle"):
            s.submit([cell.with_(idle_before_s=1.0)])
        with pytest.raises(SsdptsError, match="streaming"):
            next(iter(s.submit([cell]).intervals()))


def test_a_renamed_parameter_fails_the_signature_check():
    class Renamed(SimSession):
        def submit(self, cells, label="", interval_s=None, on_progress=None):   # tag -> label
            return super().submit(cells, label, interval_s, on_progress)

    assert issubclass(Renamed, Session)      # structurally still there: only the signature tells
    assert _shape(Renamed.submit) != _shape(Session.submit)


# --- what the tests and the runner use of an engine, a session and a round ---------------------------------------

def _users() -> list[Path]:
    return [*sorted((SRC / "pts").rglob("*.py")), *sorted((SRC / "commands").rglob("*.py")),
            *sorted((SRC / "runner").rglob("*.py")), SRC / "sampling.py", SRC / "cli.py"]


def _is_engine(node: ast.AST) -> bool:
    """`engine` or `<anything>.engine`: how pts/ and the runner hold an engine."""
    return (isinstance(node, ast.Name) and node.id == "engine") or (
        isinstance(node, ast.Attribute) and node.attr == "engine")


def _calls(node: ast.AST, receivers: set[str], method: str) -> bool:
    """Whether `node` contains a call `R.method(...)` with R one of `receivers`."""
    return any(isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr == method
               and isinstance(n.func.value, ast.Name) and n.func.value.id in receivers for n in ast.walk(node))


def _bind(target: ast.AST, value: ast.AST, rounds: set[str]) -> None:
    """Names that hold a round after `target = value` or `for target in value` (through zip and enumerate)."""
    if isinstance(target, ast.Name) and isinstance(value, ast.Name) and value.id in rounds:
        rounds.add(target.id)
    elif isinstance(target, ast.Tuple) and isinstance(value, ast.Tuple) and len(target.elts) == len(value.elts):
        for t, v in zip(target.elts, value.elts):
            _bind(t, v, rounds)
    elif isinstance(value, ast.Call) and isinstance(value.func, ast.Name) and isinstance(target, ast.Tuple):
        if value.func.id == "enumerate" and len(target.elts) == 2 and value.args:
            _bind(target.elts[1], value.args[0], rounds)
        elif value.func.id == "zip" and len(target.elts) == len(value.args):
            for t, v in zip(target.elts, value.args):
                _bind(t, v, rounds)


def _sessions_and_rounds(fn: ast.AST) -> tuple[set[str], set[str]]:
    """In one function: the names bound to sessions (`with X.engine.session(...) as s`) and to rounds."""
    sessions = {item.optional_vars.id for n in ast.walk(fn) if isinstance(n, ast.With) for item in n.items
                if isinstance(item.optional_vars, ast.Name) and isinstance(item.context_expr, ast.Call)
                and isinstance(item.context_expr.func, ast.Attribute) and item.context_expr.func.attr == "session"
                and _is_engine(item.context_expr.func.value)}
    rounds: set[str] = set()
    for _ in range(3):        # a round handed on (pending = nxt) is bound after the name it comes from
        for n in ast.walk(fn):
            if isinstance(n, ast.Assign):
                for t in n.targets:
                    if isinstance(t, ast.Name) and _calls(n.value, sessions, "submit"):
                        rounds.add(t.id)
                    _bind(t, n.value, rounds)
            elif isinstance(n, (ast.For, ast.comprehension)):
                _bind(n.target, n.iter, rounds)
    return sessions, rounds


def used_attributes() -> dict[str, set[tuple[str, str]]]:
    """(attribute, where) used on engines, sessions and rounds by pts/, commands/, the runner and the CLI."""
    used: dict[str, set[tuple[str, str]]] = {"engine": set(), "session": set(), "round": set()}
    for path in _users():
        tree = ast.parse(path.read_text(), str(path))
        where = str(path.relative_to(SRC))
        for n in ast.walk(tree):
            if isinstance(n, ast.Attribute) and _is_engine(n.value):
                used["engine"].add((n.attr, where))
            elif (isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id in ("getattr", "setattr")
                  and n.args and _is_engine(n.args[0]) and isinstance(n.args[1], ast.Constant)):
                used["engine"].add((n.args[1].value, where))
        for fn in ast.walk(tree):
            if not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
                continue
            sessions, rounds = _sessions_and_rounds(fn)   # names are per function: `r` is a round in one only
            for n in ast.walk(fn):
                if isinstance(n, ast.Attribute) and isinstance(n.value, ast.Name):
                    if n.value.id in sessions:
                        used["session"].add((n.attr, where))
                    elif n.value.id in rounds:
                        used["round"].add((n.attr, where))
    return used


def test_tests_and_runner_use_nothing_outside_the_interface():
    used = used_attributes()
    # the scan sees the uses it is there to judge (an empty scan would pass anything)
    assert {"session", "capabilities", "failed", "keep_dir", "purge"} <= {a for a, _ in used["engine"]}
    assert {"submit"} <= {a for a, _ in used["session"]}
    assert {"result", "cancel", "intervals", "interval_output"} <= {a for a, _ in used["round"]}
    for kind, protocol in (("engine", Engine), ("session", Session), ("round", Round)):
        outside = sorted(f"{where}: {kind}.{attr}" for attr, where in used[kind] if attr not in _members(protocol))
        assert not outside, "used outside engines/interface.py: " + "; ".join(outside)


# --- purge through the engine -------------------------------------------------------------------------------------

def _remote(host: str = "10.0.0.1:8765") -> Target:
    return Target(kind="block", spec=f"{host}:/dev/nvme0n1", path="/dev/nvme0n1", size_bytes=1 << 30, host=host)


def test_a_remote_drive_is_purged_only_through_its_engine():
    with pytest.raises(SsdptsError, match="only the remote engine can purge it"):
        purge(_remote(), "auto")
    asked = []
    rec = purge(_remote(), "nvme-format", through=lambda d, m: asked.append((d.host, m)) or RemoteFioEngine().purge(d, m))
    assert asked == [("10.0.0.1:8765", "nvme-format")]
    # only fio's trim reaches another host: the method is refused there, recorded as no purge (no I/O done)
    assert (rec.method, rec.snia_purge, rec.command) == ("none", False, "")
    assert "cannot run through fio on 10.0.0.1:8765" in rec.note


def test_a_local_engine_leaves_the_purge_to_the_drive(tmp_path):
    f = tmp_path / "t.img"
    f.write_bytes(b"x" * 4096)
    target = Target(kind="file", spec=str(f), path=str(f), size_bytes=1 << 20)
    for engine in (FioEngine(), SimEngine()):
        assert engine.purge(target, "auto") is None
    rec = purge(target, "auto", through=FioEngine().purge)
    assert rec.method == "file-recreate" and not rec.snia_purge
    assert f.stat().st_size == 1 << 20 and f.read_bytes() == bytes(1 << 20)     # emptied and reallocated
