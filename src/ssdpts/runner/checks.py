"""The checks before a run starts or resumes: input, targets, settings, plans, room, capabilities, the same
drives and I/O engine on resume. Each refuses in one line before anything is created."""

from __future__ import annotations

from pathlib import Path

from ..capabilities import missing
from ..engines.interface import Engine
from ..errors import SsdptsError
from ..inputs import one_line
from ..pts import registry
from ..pts.context import TestContext
from ..pts.plan import TestPlan, planned_workloads, plans_write
from ..pts.spec import TestSpec
from ..runoptions import WriteCacheCheck
from ..settings import RunDefaults, RunSettings
from ..targets import Target, open_target
from ..targets.multi import TargetSet
from ..targets.record import TargetRecord
from ..targets.safety import check_room, check_target
from ..targets.sim import SimTarget, number_simulated
from ..workload.ioengine import IoChoice


def checked_notes(notes) -> tuple[str, ...]:
    """The operator's --note texts, stripped; empty ones dropped."""
    return tuple(t for n in notes or () if (t := one_line(n, "--note", "write it on one line, or give several "
                                                                        "--note options")))


def checked_label(label: str | None) -> str | None:
    """The run's --label (its name in comparisons): one line, not empty."""
    if label is None:
        return None
    text = one_line(label, "--label", "write the name on one line")
    if not text:
        raise SsdptsError("--label is empty; give the run a name, e.g. --label partition")
    return text


def check_safe(target: Target, destroy_data: bool, results_dir: Path) -> None:
    """Every refusal of the target (the same answer as 'ssdpts info'), before a run is created."""
    check_target(target, destroy_data, results_dir)


def open_targets(specs: list[str], size: int | None) -> Target:
    """One target, or several tested at once in lock-step (a TargetSet)."""
    targets = [open_target(s, size=size) for s in specs]
    if len(targets) == 1:
        return targets[0]
    sims = [t for t in targets if isinstance(t, SimTarget)]
    if sims and len(sims) != len(targets):
        raise SsdptsError("a simulated drive cannot be tested in parallel with real ones; test simulated drives "
                          "together (sim:client sim:enterprise) and real drives in another run")
    number_simulated(sims)
    paths = [t.label_id for t in targets]
    if len(set(paths)) != len(paths):
        raise SsdptsError(f"a target is named twice ({', '.join(paths)}); name each device once")
    return TargetSet.of(targets)


def same_drives(stored: TargetRecord, target: Target) -> None:
    """Device names change across reboots: a resume must write to the very drive(s) the run started on."""
    for old, new in zip(stored.drives(), target.drives()):
        for key in ("serial", "model", "backing_file"):
            a, b = old.info.get(key), new.info.get(key)
            if a and b and a != b:
                raise SsdptsError(f"{new.path} is not the drive this run started on ({key} was {a!r}, is {b!r}); "
                                  "start a new run on it, or find the original drive")


def write_cache_check(defaults: RunDefaults, target: Target) -> WriteCacheCheck:
    """PTS-E wants the volatile write cache disabled (WCD), PTS-C enabled (WCE): whether the drive matches the
    profile when the run starts (targets/writecache.py sets it with --set-write-cache, else records a deviation)."""
    want = defaults.write_cache
    members = target.drives()
    have = {m.label_id: m.info.get("write_cache") for m in members}
    states = {"write back": "enabled", "write through": "disabled"}
    mismatched = [k for k, v in have.items() if want in ("enabled", "disabled") and v in states and states[v] != want]
    note = ""
    if mismatched:
        note = (f"the profile asks for the write cache {want}, but it is {states[have[mismatched[0]]]} on "
                f"{', '.join(mismatched)}: results are labelled with the drive's real setting "
                f"(--set-write-cache lets ssdpts set it for the run and restore it; otherwise this is a "
                f"recorded deviation)")
    return WriteCacheCheck(want, have, not mismatched, note)


def same_io_engine(run: dict, io: IoChoice) -> None:
    """A resumed run goes on with the I/O engine its stored rounds used."""
    before = run["options"].io_engine
    if before is not None and before.ioengine != io.ioengine:
        raise SsdptsError(f"run {run['id']} ran with ioengine {before.ioengine}, this bench now gives {io.ioengine} "
                          f"({io.reason}); restore what it lacks, or start a new run")


def check_settings(settings: RunSettings, target: Target) -> None:
    """Every test's settings suit the target's logical block size and agree with each other (one line naming
    the test and key, before anything is created)."""
    for name, test in settings.tests.items():
        test.check(name, target.logical_block_size)


def writes(plans: list[TestPlan], specs: list) -> bool:
    """Whether the run writes to the target (then it needs --destroy-data)."""
    return plans_write(plans, sum(1 for s in specs if s.plan is None))


def plans_for(target: Target, settings: RunSettings, names: list[str], purge_method: str = "auto") -> list[TestPlan]:
    """The plans of the tests `names` that declare one, from the run's typed `settings` (checked apart:
    check_settings)."""
    plans = []
    for name in registry.checked_names(names, "the tests"):
        spec = registry.get(name)
        if spec.plan is not None:
            ctx = TestContext(run_id="plan", test=name, store=None, target=target, engine=None,
                              settings=settings.of(name), progress=None, purge_method=purge_method)
            plans.append(spec.plan(ctx))
    return plans


def check_room_for(target: Target, settings: RunSettings, names: list[str], purge_method: str = "auto") -> None:
    """Refuse a target too small for the cells these tests will run, as their plans list them."""
    check_room(target, planned_workloads(plans_for(target, settings, names, purge_method)))


def check_capabilities(specs: list[TestSpec], target: Target, engine: Engine) -> None:
    """Refuse up front a test whose needs the engine and target do not offer (one line naming both)."""
    offered = frozenset(engine.capabilities) & frozenset(target.capabilities)
    for spec in specs:
        lacking = missing(spec.needs, offered)
        if lacking:
            raise SsdptsError(f"test {spec.name} needs {', '.join(c.value for c in lacking)}, which {engine.name} on "
                              f"{target.label_id} does not offer; run it on a local target, or drop it from --tests")
