"""The run's stored records (target, run options' seed and write-cache check) decode to typed records in one
place, the store, and encode back to the very data stored: an old database reads, and its exports show what
it stored."""

from __future__ import annotations

import json

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
