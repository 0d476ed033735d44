"""The run's stored records (target, run options' seed and write-cache check, health snapshots) decode to typed records in one
place, the store, and encode back to the very data stored: an old database reads, and its exports show what
it stored."""

from __future__ import annotations

import json
from dataclasses import fields
from pathlib import Path

from ssdpts.conformance import check
from ssdpts.export.json import document
from ssdpts.health.parse import FIELDS, empty_record, from_sim_counters, loads, merge, parse_nvme_cli, parse_smartctl
from ssdpts.health.record import POLL_KIND, RECORD_KIND, HealthSnapshot
from ssdpts.runresult.model import load_run
from ssdpts.runoptions import RunOptions, SeedChoice, WriteCacheCheck
from ssdpts.store import Store
from ssdpts.targets import Target
from ssdpts.targets.multi import TargetSet
from ssdpts.targets.record import TargetRecord
from ssdpts.targets.resolve import reopen_specs

BLOCK = Target(kind="block", spec="/dev/disk/by-id/nvme-X", path="/dev/nvme0n1", size_bytes=3_840_755_982_336,
               logical_block_size=4096, info={"model": "Lab NVMe", "serial": "S1", "firmware": "F1",
                                              "transport": "nvme", "write_cache": "write through"})
REMOTE = Target(kind="block", spec="/dev/nvme0n1", path="/dev/nvme0n1", size_bytes=2**30, host="10.0.0.2:8765",
                info={"serial": "S2"})


def _stored(store: Store, run_id: str, column: str) -> str:
    return store.db.execute(f"SELECT {column} FROM runs WHERE id=?", (run_id,)).fetchone()[0]


def test_each_target_kind_reads_back_as_stored(tmp_path):
    store = Store.in_dir(tmp_path)
    sim_like = {"kind": "sim", "spec": "sim:client", "path": "client", "size_bytes": 2**30, "logical_block_size": 512,
                "physical_block_size": 4096, "info": {"model": "ssdsim client", "params": {"link_mb_s": 3500}}}
    for target in (BLOCK.to_dict(), TargetSet.of([BLOCK, REMOTE]).to_dict(), sim_like):
        rid = store.create_run(target_spec="x", target=target, host={}, profile_name="p", profile={}, tests=[],
                               options={}, engine="fio")
        record = store.run(rid)["target"]
        assert isinstance(record, TargetRecord)
        assert json.dumps(record.to_json()) == _stored(store, rid, "target_json")     # the same bytes back


def test_a_set_decodes_its_members_with_their_names_and_serials():
    record = TargetRecord.from_json(json.loads(json.dumps(TargetSet.of([BLOCK, REMOTE]).to_dict())))
    assert record.kind == "set" and [m.label_id for m in record.members] == ["/dev/nvme0n1", "10.0.0.2:8765:/dev/nvme0n1"]
    assert [m.serial for m in record.drives()] == ["S1", "S2"] and record.members[0].logical_block_size == 4096
    # resume reopens a local device by the name the user gave, a remote one with its stored size
    assert reopen_specs(record) == ["/dev/disk/by-id/nvme-X", f"/dev/nvme0n1#size={2**30}"]


def test_an_old_target_record_reads_with_defaults_and_drops_the_live_drive():
    old = {"kind": "sim", "spec": "sim:client", "path": "client", "size_bytes": 2**30, "info": {},
           "drive": "<ssdpts._sim.Drive object>"}      # what an early ssdpts stored beside a simulated drive
    record = TargetRecord.from_json(old)
    assert (record.logical_block_size, record.physical_block_size, record.host, record.model) == (512, 4096, None, None)
    assert record.to_json() == {k: v for k, v in old.items() if k != "drive"} and record.drives() == [record]


def test_seed_and_write_cache_check_are_typed_and_stored_as_before(tmp_path):
    store = Store.in_dir(tmp_path)
    options = RunOptions(seed=SeedChoice(77, "command line (--seed)"),
                         write_cache=WriteCacheCheck("disabled", {"/dev/nvme0n1": "write back"}, False, "mismatch"))
    rid = store.create_run(target_spec="x", target={}, host={}, profile_name="p", profile={}, tests=[],
                           options=options, engine="fio")
    stored = json.loads(_stored(store, rid, "options_json"))
    assert stored["seed"] == {"value": 77, "source": "command line (--seed)"}
    assert stored["write_cache"] == {"profile": "disabled", "device": {"/dev/nvme0n1": "write back"},
                                     "matches": False, "note": "mismatch"}
    assert store.run(rid)["options"] == options
    # a run stored before the seed was recorded, and one whose check had no note yet
    old = RunOptions.from_json({"write_cache": {"profile": "enabled", "device": {}, "matches": True}})
    assert old.seed is None and old.write_cache == WriteCacheCheck("enabled", {}, True, "")


HEALTH_FIXTURES = Path(__file__).parent / "health" / "fixtures"


def _recorded_health() -> dict:
    """smartctl's record merged with nvme-cli's (real-shaped outputs), with keys this ssdpts does not declare:
    a field a newer ssdpts would add and one a tool added (raw big counters beyond 2^53 included)."""
    doc = lambda name: loads((HEALTH_FIXTURES / name).read_text())  # noqa: E731
    rec = merge(parse_smartctl(doc("nvme-smartctl73.json"), "/dev/nvme0n1"),
                parse_nvme_cli(doc("nvme-cli-smart-log.json"), doc("nvme-cli-id-ctrl.json"), "/dev/nvme0n1"))
    rec["warnings"] = ["smartctl exit bit 6: the device error log contains errors"]
    return {**rec, "vendor_log_page_c0": {"physical_media_units_written_s": str(2**70 + 1)}, "zz_newer_field": [1, 2]}


def test_health_snapshots_read_back_typed_and_as_stored(tmp_path):
    """The runner's before/after snapshots (a drive's smartctl + nvme-cli record, the simulator's, a set's) and the
    endurance test's polls decode to HealthSnapshot in the store, keep the keys nobody declared, and encode back
    to the bytes stored: the exported JSON document carries them unchanged."""
    sim = Target(kind="sim", spec="sim:x", path="sim-x", size_bytes=2**30, info={"params": {"rated_pe_cycles": 3000}})
    sim_counters = {"host_write_bytes": 2**54 + 7, "host_read_bytes": 3, "nand_write_bytes": 2**55 + 1,
                    "wear_percent": 1.5, "erase_count_avg": 45.0, "power_on_ns": 7.2e12, "clock_ns": 9e9,
                    "total_blocks": 1000, "free_blocks": 250}
    simulated = from_sim_counters(sim_counters, device=sim.path, rated_pe=3000)
    drive = _recorded_health()
    set_of = {**empty_record("set", "a parallel run: each drive's health is under members"),
              "members": {"/dev/nvme0n1": drive, "sim-x": simulated}}
    store = Store.in_dir(tmp_path)
    rid = store.create_run(target_spec="x", target=BLOCK.to_dict(), host={}, profile_name="p", profile={},
                           tests=["iops"], options={}, engine="fio")
    store.set_test(rid, "iops", "running")
    poll = {**simulated, "t": 12.5, "round": 3}       # an endurance poll: the snapshot, its time and round
    for key, kind, data in (("health:before", RECORD_KIND, drive), ("health:after", RECORD_KIND, simulated),
                            ("health:set", RECORD_KIND, set_of), ("health:poll:000003", POLL_KIND, poll)):
        store.record_step(rid, "iops", key, kind, HealthSnapshot.from_dict(json.loads(json.dumps(data))))
        stored = store.db.execute("SELECT data_json FROM steps WHERE key=?", (key,)).fetchone()[0]
        assert stored == json.dumps(data)                        # written as the dict the snapshot gave
        record = store.step(rid, "iops", key)
        assert isinstance(record, HealthSnapshot)
        assert json.dumps(record.to_dict()) == stored            # the same bytes back
    before, after = store.step(rid, "iops", "health:before"), store.step(rid, "iops", "health:after")
    assert before.extra == {"vendor_log_page_c0": {"physical_media_units_written_s": str(2**70 + 1)},
                            "zz_newer_field": [1, 2]}
    assert before.available and before.source == "smartctl+nvme-cli" and before.warnings == tuple(drive["warnings"])
    assert (before.host_written_bytes, before.temperature_c, before.media_errors) == (
        drive["host_written_bytes"], drive["temperature_c"], drive["media_errors"])
    assert after.host_written_bytes == 2**54 + 7 and after.media_written_bytes == 2**55 + 1    # exact beyond 2^53
    assert (after.clock_s, after.free_blocks_percent, after.rated_pe_cycles, after.extra) == (9.0, 25.0, 3000, {})
    assert (store.step(rid, "iops", "health:poll:000003").t, store.step(rid, "iops", "health:poll:000003").round) == (
        12.5, 3)
    members = store.step(rid, "iops", "health:set").members
    assert members["/dev/nvme0n1"] == before and members["sim-x"] == after
    # every normalised counter the parsers fill is a declared field
    assert set(FIELDS) <= {f.name for f in fields(HealthSnapshot)}
    # the JSON results document carries the steps as stored
    run = load_run(store, rid)
    steps = document(run, check(run, store))["tests"][0]["steps"]
    assert [json.dumps(s["data"]) for s in steps] == [json.dumps(d) for d in (drive, simulated, set_of, poll)]


def test_a_health_record_made_here_encodes_its_declared_fields():
    record = HealthSnapshot(available=True, source="sim", host_written_bytes=5, failures=("x",), extra={"k": 1})
    assert record.to_dict() == {"available": True, "source": "sim", "record_version": 1, "host_written_bytes": 5,
                                "failures": ["x"], "k": 1}
    assert HealthSnapshot.from_dict(record.to_dict()) == record
