"""Each default is declared once: the commands, `steady.evaluate` and the studies read the declaration, so a
copy that drifts (a second literal somewhere) fails here."""

from __future__ import annotations

import ast
import inspect
import json
import sqlite3
from pathlib import Path

import click

from conftest import ssdpts
from ssdpts import cli
from ssdpts.doctor import recorded_checks
from ssdpts.hostinfo import HostRecord, host_info
from ssdpts.report.bench import NOT_RECORDED, platform_rows
from ssdpts.runoptions import RunOptions, SeedChoice, WriteCacheCheck
from ssdpts.store import Store
from ssdpts.pts import fill as fill_module
from ssdpts.pts import registry
from ssdpts.settings import STEADY_RULES, SteadySettings, declarations
from ssdpts.steady import evaluate, first_steady_round
from ssdpts.targets.purge import METHODS

PTS = Path(__file__).resolve().parents[1] / "src" / "ssdpts" / "pts"
DECLARED = SteadySettings()


def _command(*path: str) -> click.Command:
    cmd: click.Command = cli.main
    with click.Context(cli.main) as ctx:
        for name in path:
            cmd = cmd.get_command(ctx, name)
    return cmd


def _option(cmd: click.Command, name: str) -> click.Option:
    return next(p for p in cmd.params if p.name == name)


def test_steady_state_command_defaults_are_the_declared_ones():
    cmd = _command("steady-state")
    assert _option(cmd, "window").default == DECLARED.window
    assert _option(cmd, "max_range").default / 100 == DECLARED.max_range     # the command takes percentages
    assert _option(cmd, "max_slope").default / 100 == DECLARED.max_slope
    assert _option(cmd, "rule").default == DECLARED.rule
    assert list(_option(cmd, "rule").type.choices) == list(STEADY_RULES)
    assert _option(cmd, "strict").default is (not DECLARED.inclusive)


def test_steady_state_help_shows_the_declared_defaults():
    out = ssdpts("steady-state", "--help").stdout
    flat = " ".join(out.split())
    for option, shown in (("--window", DECLARED.window), ("--max-range", DECLARED.max_range * 100),
                          ("--max-slope", DECLARED.max_slope * 100), ("--rule", DECLARED.rule)):
        after = flat[flat.index(option):]
        assert f"[default: {shown}]" in after[:after.find("--", 2)], option


def test_evaluate_defaults_are_the_declared_ones():
    params = inspect.signature(evaluate).parameters
    assert {k: params[k].default for k in ("window", "max_range", "max_slope", "rule", "inclusive")} == \
        {k: getattr(DECLARED, k) for k in ("window", "max_range", "max_slope", "rule", "inclusive")}
    assert inspect.signature(first_steady_round).parameters["window"].default == DECLARED.window
    assert set(declarations(SteadySettings)["rule"].kind.what.removeprefix("one of ").split(", ")) == set(STEADY_RULES)


def test_purge_choices_are_the_purge_methods():
    assert list(_option(_command("run"), "purge_method").type.choices) == list(METHODS)
    assert list(_option(_command("plan"), "purge_method").type.choices) == list(METHODS)
    # endurance: no --purge is no purge, so "none" is not offered
    assert list(_option(_command("endurance"), "purge_method").type.choices) == [m for m in METHODS if m != "none"]


def test_every_fill_block_size_key_has_the_declared_default():
    found = {name: decls["fill_block_size"] for name, spec in registry.tests().items()
             if "fill_block_size" in (decls := declarations(spec.settings))}
    assert set(found) >= {"fs-vs-raw", "trim-study", "span-sweep"}
    assert {name: d.default for name, d in found.items()} == {name: fill_module.FILL_BLOCK_SIZE for name in found}


def test_no_study_restates_the_fill_queue_depth_or_block_size():
    """Outside pts/fill.py, no test package writes a literal `iodepth=` for a workload, nor the fill block size:
    they come from the fill helper (or the profile)."""
    restated = []
    for path in PTS.rglob("*.py"):
        if path.name == "fill.py":
            continue
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.keyword) and node.arg == "iodepth" and isinstance(node.value, ast.Constant):
                restated.append(f"{path.relative_to(PTS)}:{node.value.lineno} iodepth={node.value.value!r}")
            if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id.endswith("_IODEPTH")
                                                    for t in node.targets):
                restated.append(f"{path.relative_to(PTS)}:{node.lineno} {ast.unparse(node)}")
            if (isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name)
                    and node.target.id == "fill_block_size" and "fill_block_size_key" not in ast.unparse(node)):
                restated.append(f"{path.relative_to(PTS)}:{node.lineno} {ast.unparse(node)}")
    assert not restated, "fill defaults restated (use ssdpts.pts.fill):\n" + "\n".join(restated)


# --- run options and host: typed records, decoded in one place, older stored JSON still loads -------------

# as a run of an older ssdpts stored them: no DMI fields, no bench checks, no notes / trace / write-cache keys
OLD_HOST = {"hostname": "bench1", "cpu_model": "Xeon", "cpu_cores": 8, "memory_bytes": 2**34, "kernel": "6.1",
            "os": "Debian 12", "python": "3.11.2", "fio_version": "fio-3.33", "ssdpts_version": "0.9"}
OLD_OPTIONS = {"destroy_data": True, "purge": "trim", "size": None, "results_dir": "results", "retired": 1}


def test_older_stored_run_options_and_host_load_with_the_declared_defaults(tmp_path):
    store = Store.in_dir(tmp_path / "results")
    rid = store.create_run(target_spec="x", target={}, host=HostRecord(), profile_name="p", profile={}, tests=[],
                           options=RunOptions(), engine="fio")
    store.close()
    with sqlite3.connect(tmp_path / "results" / "ssdpts.db") as db:     # the row an older ssdpts wrote
        db.execute("UPDATE runs SET host_json=?, options_json=? WHERE id=?",
                   (json.dumps(OLD_HOST), json.dumps(OLD_OPTIONS), rid))
    run = Store.in_dir(tmp_path / "results").run(rid)
    host, options = run["host"], run["options"]
    assert isinstance(host, HostRecord) and isinstance(options, RunOptions)
    assert (host.hostname, host.cpu_cores, host.board_vendor, host.doctor, host.controller) == \
        ("bench1", 8, None, None, None)
    assert host.to_json() == OLD_HOST                                   # written back as it was stored
    assert platform_rows(host) == [("Board", NOT_RECORDED), ("BIOS", NOT_RECORDED)]
    assert recorded_checks(host).startswith("not recorded")
    defaults = RunOptions()
    assert (options.destroy_data, options.purge, options.results_dir) == (True, "trim", "results")
    assert (options.notes, options.trace_stimulus, options.set_write_cache, options.seed) == \
        (defaults.notes, defaults.trace_stimulus, defaults.set_write_cache, defaults.seed)


def test_records_survive_their_json():
    here = host_info("fio-3.36").with_checks([{"check": "fio", "status": "pass", "detail": "fio-3.36"}])
    remote = HostRecord(hostname="fio1:8765", cpu_model="n/a", remote_hosts=["fio1:8765"], controller=here)
    options = RunOptions(destroy_data=True, purge="none", size="1g", notes=["a fan"], seed=SeedChoice(7, "profile"),
                         write_cache=WriteCacheCheck("enabled", {"/dev/sda": "write back"}, True))
    for record in (here, remote, options):
        assert type(record).from_json(json.loads(json.dumps(record.to_json()))) == record
    assert "controller" in remote.to_json() and None not in remote.to_json()["controller"].values()
