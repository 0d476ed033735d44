"""fio's I/O engine as a declared setting ([defaults] ioengine, docs/bench.md "The I/O engine"): io_uring runs on a loop
device and on zram, checked against fio's own job options and the block layer's counters, and the refusals of an
engine the bench cannot use (one line, exit 2, no run row)."""

import json
from pathlib import Path

import pytest

from conftest import TINY, requires_devices, run_completed, ssdpts
from ssdpts.engines.ioengine import kernel_refusal


def profile(tmp_path: Path, **defaults) -> str:
    """The tiny profile with these [defaults] keys, latency only and the fewest rounds a window allows."""
    keys = "".join(f"{k} = {json.dumps(v)}\n" for k, v in defaults.items())
    p = tmp_path / "engine.toml"
    p.write_text(f'[profile]\nextends = "{TINY}"\n[defaults]\n{keys}[steady_state]\nmax_rounds = 5\n')
    return str(p)


def block_stat(dev: str) -> list[int]:
    return [int(x) for x in Path(f"/sys/block/{Path(dev).name}/stat").read_text().split()]


def sectors_moved(dev: str) -> int:
    """Sectors read + written at the block layer (/sys/block/DEV/stat fields 3 and 7)."""
    f = block_stat(dev)
    return f[2] + f[6]


def fio_documents(text: str) -> list[dict]:
    """fio's JSON documents in a round's stored output."""
    docs, i, dec = [], text.find("{"), json.JSONDecoder()
    while i != -1:
        doc, end = dec.raw_decode(text, i)
        docs.append(doc)
        i = text.find("{", end)
    return docs


@requires_devices
@pytest.mark.parametrize("device, options", [("loop", {}), ("zram", {"fixedbufs": True, "registerfiles": True})])
def test_io_uring_runs_as_fio_reports_it_and_the_block_layer_sees_the_io(device, options, request, tmp_path, results):
    dev = request.getfixturevalue("loopdev" if device == "loop" else "zram_own")
    before = sectors_moved(dev)
    rid, store = run_completed(dev, results, profile(tmp_path, ioengine="io_uring", **options), "latency")
    moved = (sectors_moved(dev) - before) * 512
    rounds = store.rounds(rid, "latency") + store.rounds(rid, "latency", kind="precondition")
    fio_bytes = 0
    for r in rounds:
        docs = fio_documents(store.raw_output(r.id))
        assert docs and all(d["global options"]["ioengine"] == "io_uring" for d in docs)   # fio's own word
        for o in options:
            assert all(d["global options"][o] == "1" for d in docs)
        final = docs[-1]
        fio_bytes += sum(j["read"]["io_bytes"] + j["write"]["io_bytes"] for j in final["jobs"])
    assert fio_bytes > 0 and moved >= fio_bytes      # every byte fio moved reached the device
    recorded = store.run(rid)["options"].io_engine
    assert recorded.ioengine == "io_uring" and recorded.requested.split()[0] == "io_uring"
    assert recorded.options == tuple(options)
    text = ssdpts("show", rid, "--results", str(results)).stdout
    assert "  io      io_uring" in text and "the spec fixes no I/O engine (not a deviation)" in text
    assert "I/O engine</dt><dd>io_uring" in (results / "reports" / rid / "report.html").read_text()   # setup


@requires_devices
def test_auto_records_its_choice_and_why(zram_own, tmp_path, results):
    rid, store = run_completed(zram_own, results, profile(tmp_path), "latency")
    recorded = store.run(rid)["options"].io_engine
    assert recorded.requested == "auto" and recorded.ioengine in ("io_uring", "libaio") and recorded.reason
    assert f"ioengine={recorded.ioengine}" in store.rounds(rid, "latency")[0].job_text


@requires_devices
@pytest.mark.parametrize("device, defaults, missing", [
    ("loop", {"ioengine": "io_uring_cmd"}, "io_uring_cmd needs an NVMe generic character device"),
    ("zram", {"ioengine": "io_uring", "hipri": True}, "hipri needs polled completions"),
    ("loop", {"ioengine": "libaio", "sqthread_poll": True}, "libaio engine has no option sqthread_poll"),
])
def test_an_engine_the_bench_cannot_use_is_refused_before_any_work(device, defaults, missing, request, tmp_path,
                                                                   results):
    dev = request.getfixturevalue("loopdev" if device == "loop" else "zram_own")
    before = block_stat(dev)
    p = ssdpts("run", dev, "--profile", profile(tmp_path, **defaults), "--tests", "latency", "--destroy-data",
               "--results", str(results), "-q", check=False)
    assert p.returncode == 2 and p.stdout == ""
    lines = p.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("ssdpts: error: ") and missing in lines[0], p.stderr
    assert ";" in lines[0]                                  # the fix follows the problem
    after = block_stat(dev)
    assert after[6] == before[6] and after[11:14] == before[11:14]    # nothing written, nothing discarded
    runs = ssdpts("list", "--results", str(results), check=False).stdout if results.exists() else ""
    assert "latency" not in runs                            # no run row


def test_the_kernel_switch_is_read(tmp_path):
    switch = tmp_path / "io_uring_disabled"
    switch.write_text("2\n")
    assert "switched off" in kernel_refusal("io_uring", switch) and "libaio" in kernel_refusal("io_uring", switch)
    switch.write_text("0\n")
    assert kernel_refusal("io_uring", switch) is None
    assert kernel_refusal("io_uring", tmp_path / "absent") is None        # before Linux 6.6: no switch


def test_the_simulated_drive_ignores_the_engine_and_records_it_as_not_applicable(tmp_path, results):
    p = ssdpts("run", "sim:client", "--profile", profile(tmp_path, ioengine="io_uring", hipri=True), "--tests",
               "latency", "--results", str(results), "-q")
    rid = p.stdout.strip().splitlines()[-1]
    doc = json.loads(ssdpts("show", rid, "--json", "--results", str(results)).stdout)
    assert doc["run"]["status"] == "completed"
    recorded = doc["run"]["options"]["io_engine"]
    assert recorded["ioengine"] == "not applicable" and recorded["requested"] == "io_uring hipri"
    assert "I/O engine</dt><dd>not applicable" in (results / "reports" / rid / "report.html").read_text()
