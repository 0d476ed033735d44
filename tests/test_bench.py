"""The bench recorded with every run: identify parsers on nvme-cli/smartctl JSON (bench_fixtures/), the drive's
PCI controller and link from a sysfs tree built in tmp, DMI, the implied spare, --note, the temperature
trace and whole-host CPU per cell."""

from __future__ import annotations

import json
import os
import threading
from pathlib import Path

import pytest
from click.testing import CliRunner

from conftest import requires_devices

from ssdpts import sampling
from ssdpts.cli import main
from ssdpts.engines.fio import FioEngine
from ssdpts.engines.hostcpu import HostCpu, read_ticks
from ssdpts.targets.identify import (ata_trim, current_power_state, format_nvm, lba_formats, nvme_dsm, power_states,
                                    protection_place, protection_type, protection_types_supported, sata_link)
from ssdpts.health.parse import parse_nvme_cli
from ssdpts.health.record import HealthSnapshot
from ssdpts.hostinfo import dmi_facts
from ssdpts.report.bench import cell_cpu, throttle_text
from ssdpts.store import Store
from ssdpts.targets import open_target
from ssdpts.targets.facts import DeviceFacts, block_facts, implied_spare
from ssdpts.targets.sysfs import PciLink, SysRoots, pci_function
from ssdpts.workload import Workload

FIX = Path(__file__).parent / "bench_fixtures"
HEALTH = Path(__file__).parent / "health" / "fixtures"


def _json(name: str) -> dict:
    return json.loads((FIX / name).read_text())


def test_nvme_power_states_and_the_current_one():
    ps = power_states(_json("nvme-cli-id-ctrl-psds.json"))
    assert [(p.index, p.max_power_w, p.operational, p.entry_latency_us, p.exit_latency_us) for p in ps] == [
        (0, 40.0, True, 0, 0), (1, 25.0, True, 0, 0), (2, 0.04, False, 2000, 2000)]
    assert current_power_state((FIX / "nvme-cli-get-feature-2.txt").read_text()) == 1
    assert current_power_state({"value": 0x23}) == 3          # bits 4:0 only
    assert current_power_state("error: no such feature") is None
    # older nvme-cli: MPS and NOPS packed in `flags` (the health fixture's one state)
    assert power_states(json.loads((HEALTH / "nvme-cli-id-ctrl.json").read_text()))[0].max_power_w == 8.49


def test_lba_formats_protection_and_dsm():
    ns = _json("nvme-cli-id-ns-p3600.json")
    fmts = lba_formats(ns)
    assert [(f.data_bytes, f.metadata_bytes) for f in fmts] == [(512, 0), (512, 8), (512, 16), (4096, 0), (4096, 8),
                                                                (4096, 64), (4096, 128)]
    assert [f.index for f in fmts if f.in_use] == [3]
    assert protection_type(ns) == 0 and protection_types_supported(ns) == [1]
    # flbas 0x21: bits 3:0 = 1 and bits 6:5 = 01 -> format 17, beyond this namespace's 7: none is in use
    assert not any(f.in_use for f in lba_formats({**ns, "flbas": 0x21}))
    assert nvme_dsm({"oncs": 6}) is True and nvme_dsm({"oncs": 0x1}) is False and nvme_dsm({}) is None


def test_ata_trim_and_sata_link():
    doc = _json("smartctl-ata-info.json")
    assert ata_trim(doc) is True and ata_trim({}) is None
    assert sata_link(doc) == ("1.5 Gb/s", "3.0 Gb/s")


def test_nvme_thermal_counters_from_smart_log():
    log = json.loads((HEALTH / "nvme-cli-smart-log.json").read_text())
    before = parse_nvme_cli(log)
    after = parse_nvme_cli({**log, "thm_temp1_trans_count": 5, "thm_temp1_total_time": 120})
    assert (before["thermal_t1_transitions"], after["thermal_t1_seconds"]) == (0, 120)
    assert throttle_text(HealthSnapshot.from_dict(before), HealthSnapshot.from_dict(after)) == ("T1 (light throttling): +5 transitions, +120 s; "
                                            "T2 (heavy throttling): +0 transitions, +0 s")
    assert throttle_text(None, HealthSnapshot.from_dict(after)).startswith("not available")


def _pci_tree(tmp: Path, speed: str, width: str) -> SysRoots:
    """/sys with nvme0n1 under PCI function 0000:3d:00.0 (driver nvme) behind a bridge."""
    fn = tmp / "sys/devices/pci0000:00/0000:00:1d.0/0000:3d:00.0"
    ctrl = fn / "nvme/nvme0"
    (ctrl / "nvme0n1").mkdir(parents=True)
    for k, v in {"vendor": "0x1234", "device": "0x5678", "current_link_speed": speed, "current_link_width": width,
                 "max_link_speed": "8.0 GT/s PCIe", "max_link_width": "4"}.items():
        (fn / k).write_text(v + "\n")
    (fn.parent / "vendor").write_text("0x1234\n")          # the bridge above (a switch port): not the function
    (fn.parent / "device").write_text("0x5678\n")
    drivers = tmp / "sys/bus/pci/drivers/nvme"
    drivers.mkdir(parents=True)
    (fn / "driver").symlink_to(drivers)
    (ctrl / "nvme0n1" / "device").symlink_to(ctrl)
    (tmp / "sys/class/block").mkdir(parents=True)
    (tmp / "sys/class/block/nvme0n1").symlink_to(ctrl / "nvme0n1")
    return SysRoots(sys=tmp / "sys")


def test_pci_controller_and_link_limit(tmp_path):
    roots = _pci_tree(tmp_path, "8.0 GT/s PCIe", "4")
    f = pci_function("nvme0n1", roots, ids_files=[FIX / "pci.ids"])
    assert (f.address, f.vendor, f.device, f.driver) == ("0000:3d:00.0", "Test Vendor Inc.", "Test NVMe Controller",
                                                         "nvme")
    assert f.upstream == ["0000:00:1d.0 Test Vendor Inc. Test NVMe Controller"]
    assert f.label().endswith("driver nvme; behind 0000:00:1d.0 Test Vendor Inc. Test NVMe Controller")
    assert f.link == PciLink(8.0, 4) and round(f.link.mb_s, 1) == 3938.5        # 8 GT/s × 128/130 / 8 × 4
    assert round(PciLink(2.5, 1).mb_s, 1) == 250.0 and round(PciLink(16.0, 4).mb_s, 1) == 7876.9
    assert PciLink(None, 4).mb_s is None
    # no pci.ids: ids only
    assert pci_function("nvme0n1", roots, ids_files=[tmp_path / "none"]).label().startswith("[1234:5678] at")
    facts = block_facts("nvme0n1", roots, {"transport": "nvme", "discard_max_bytes": 2**31},
                        _json("nvme-cli-id-ctrl-psds.json"), _json("nvme-cli-id-ns-p3600.json"), None,
                        (FIX / "nvme-cli-get-feature-2.txt").read_text(), 1_600_321_314_816)
    again = DeviceFacts.from_dict(json.loads(json.dumps(facts.to_dict())))
    assert again == facts
    rows = dict(again.rows())
    assert rows["PCIe link"].startswith("8 GT/s x4 (3,938 MB/s raw link limit) now, 8 GT/s x4 (3,938 MB/s raw link "
                                        "limit) maximum")
    assert "PS0 40 W" in rows["Power states"] and "PS1* 25 W" in rows["Power states"]
    assert "current PS1" in rows["Power states"]
    assert "LBAF 3: 4096+0 (in use)" in rows["LBA formats"]
    assert rows["Protection (T10 PI)"] == "not enabled; supported: type 1"
    assert rows["TRIM / deallocate"].startswith("supported (NVMe ONCS bit 2")


def test_root_port_link_beside_the_drives(tmp_path):
    """A bridge with link registers (a root or switch port) shows what the slot could carry beside what the drive
    trained to (the QEMU test bed: a port of 8 GT/s x4 above an NVMe function of 2.5 GT/s x1)."""
    roots = _pci_tree(tmp_path, "2.5 GT/s PCIe", "1")
    port = tmp_path / "sys/devices/pci0000:00/0000:00:1d.0"
    for k, v in {"current_link_speed": "2.5 GT/s PCIe", "current_link_width": "1", "max_link_speed": "8.0 GT/s PCIe",
                 "max_link_width": "4"}.items():
        (port / k).write_text(v + "\n")
    f = pci_function("nvme0n1", roots, ids_files=[FIX / "pci.ids"])
    assert f.upstream == ["0000:00:1d.0 Test Vendor Inc. Test NVMe Controller (port link 2.5 GT/s x1 now, "
                          "8 GT/s x4 maximum)"]
    assert f.link == PciLink(2.5, 1) and PciLink(None, 1).rate() == "not available"


def test_format_nvm_offer_and_where_the_protection_sits():
    # NVMe base spec 2.0 Figure 275: OACS bit 1 Format NVM; FNA bit 0 all namespaces, bit 2 cryptographic erase
    assert format_nvm(None) == "" and format_nvm({"oacs": 0x8}) == "not supported (OACS bit 1 clear)"
    assert format_nvm({"oacs": 0x10A, "fna": 0}) == (      # QEMU 7.2's controller
        "supported (OACS bit 1), on one namespace at a time (FNA bit 0 clear): user-data erase (SES=1); "
        "cryptographic erase (SES=2) not offered (FNA bit 2 clear)")
    both = format_nvm({"oacs": "0x2", "fna": 5})
    assert "every namespace at once (FNA bit 0 set)" in both and both.endswith("(SES=2) offered (FNA bit 2 set)")
    # Identify Namespace DPS bit 3: PI in the first eight bytes; FLBAS bit 4: metadata extends the LBA
    assert protection_place({"dps": 0x9, "flbas": 0x11}) == ("PI in the first 8 bytes of the metadata, metadata at the "
                                                             "end of each LBA (extended LBA)")
    assert protection_place({"dps": 1, "flbas": 1}).startswith("PI in the last 8 bytes of the metadata, metadata in a")


def test_implied_spare_is_labelled_an_assumption():
    text = implied_spare(160_000_000_000, "block")
    assert text.startswith("11.0 GiB (7.4 % of the user capacity) implied, assuming raw NAND = the binary size")
    assert implied_spare(16 * 2**30, "sim").startswith("none implied")
    assert implied_spare(2**26, "loop").startswith("not applicable")


def test_dmi_board_and_bios(tmp_path):
    for k, v in {"board_vendor": "Supermicro", "board_name": "X10DRi-LN4+", "bios_vendor": "American Megatrends Inc.",
                 "bios_version": "3.1", "bios_date": "06/23/2018"}.items():
        (tmp_path / k).write_text(v + "\n")
    assert dmi_facts(tmp_path)["board_name"] == "X10DRi-LN4+"
    assert dmi_facts(tmp_path / "absent")["bios_vendor"].startswith("not available (")


def test_sampler_keeps_every_reading_with_its_time():
    target = open_target("sim:client")
    values = iter([41.0, 42.5, None, 44.0, 45.0, 46.0])
    lock = threading.Lock()

    def read():
        with lock:
            return next(values, 47.0)
    trace = sampling.TemperatureTrace(drive="d", interval_s=3600.0, source="test")
    s = sampling._Sampler(trace, read)
    s.start()
    s.stop.set()
    s.join()
    s.sample()
    assert trace.celsius == [41.0, 42.5] and trace.seconds[0] == 0.0 and trace.seconds[1] >= 0.0
    with sampling.temperature_trace(target, 10.0) as got:
        pass
    assert got[0].celsius == [] and got[0].note == "temperature not available: the simulator models no temperature"


def test_run_on_sim_keeps_notes_facts_and_the_temperature_step(tmp_path):
    res = CliRunner().invoke(main, ["run", "sim:client", "--profile", "quick", "--tests", "iops", "--results",
                                    str(tmp_path), "-q", "--note", "AOC-SLG3-2M2 adapter", "--note", "80 mm fan"])
    assert res.exit_code == 0, res.output
    run_id = res.output.strip().splitlines()[-1]
    store = Store.in_dir(tmp_path)
    run = store.run(run_id)
    assert run["options"].notes == ["AOC-SLG3-2M2 adapter", "80 mm fan"]
    assert run["host"].bios_vendor
    # the preset's own spare (presets/client.toml op_percent = 8.5), not one implied from the capacity
    assert DeviceFacts.from_dict(run["target"].info["facts"]).implied_spare.startswith("8.5 % of the user capacity")
    assert [t.note for t in sampling.traces(store, run_id, "iops")] == [
        "temperature not available: the simulator models no temperature"]
    shown = CliRunner().invoke(main, ["show", run_id, "--results", str(tmp_path)]).output
    assert "  note    AOC-SLG3-2M2 adapter\n  note    80 mm fan" in shown
    html = (tmp_path / "reports" / run_id / "report.html").read_text()
    assert "AOC-SLG3-2M2 adapter; 80 mm fan" in html and "the simulator models no temperature" in html


def test_a_note_with_a_control_character_is_refused(tmp_path):
    res = CliRunner().invoke(main, ["run", "sim:client", "--results", str(tmp_path), "--note", "fan\non"])
    assert res.exit_code != 0 and "control character" in res.output and "Traceback" not in res.output
    assert len(res.output.strip().splitlines()) == 1
    assert not (tmp_path / "results.db").exists() or not Store.in_dir(tmp_path).runs()


def test_host_cpu_between_two_readings():
    cpu = HostCpu.between((100, 0, 50, 800, 30, 5, 15, 0), (200, 0, 100, 1000, 60, 10, 30, 0), 2, 100)
    assert (cpu.user_pct, cpu.system_pct, cpu.idle_pct, cpu.iowait_pct, cpu.irq_pct) == (25.0, 12.5, 50.0, 7.5, 5.0)
    assert cpu.busy_pct == 42.5 and cpu.seconds == 2.0 and cpu.iops_per_busy_core(8500) == 10000
    assert HostCpu.between(None, (1,) * 8, 2) is None and read_ticks() is not None


@requires_devices
def test_host_cpu_is_measured_per_cell_on_a_loop_device(loopdev):
    target = open_target(loopdev, probe=False)
    cells = [Workload(f"c{i}", "randread", bs=4096, threads=1, iodepth=4, runtime_s=0.3) for i in range(2)]
    with FioEngine(measure_idle=False).session(target) as s:
        out = s.submit(cells).result()
    for c in out.cells:
        assert c.host_cpu is not None and 0 < c.host_cpu.busy_pct <= 100, c.host_cpu
        assert c.host_cpu.cpus == os.cpu_count()
    rows = cell_cpu([type("R", (), {"cells": out.cells})()])
    assert [r.cell for r in rows] == ["c0", "c1"] and all(r.iops_per_busy_core > 0 for r in rows)
