"""Real fio (ioengine=nbd) against the simulator's NBD server vs. the same job
run in simulated time: IOPS must agree within 10 %."""
import json
import shutil
import subprocess
import threading

import pytest

from ssdpts.simdrive import load_params

_sim = pytest.importorskip("ssdpts._sim")
SimDrive = _sim.SimDrive


def _fio_has_nbd() -> bool:
    if not shutil.which("fio"):
        return False
    out = subprocess.run(["fio", "--enghelp=nbd"], capture_output=True, text=True)
    return "uri" in out.stdout


pytestmark = [
    pytest.mark.skipif(not _fio_has_nbd(), reason="fio with the nbd engine (libnbd) not available"),
    pytest.mark.slow,
]


def _fio_json(stdout: str) -> dict:
    return json.loads(stdout[stdout.index("{"):])  # fio prints "connected to NBD server" first


@pytest.mark.parametrize("rw, qd, overrides, sim_key", [
    # controller-limited: 500 µs per command -> 2000 IOPS at QD 4
    ("randwrite", 4, {"timing.ctrl_cmd_ns": 500_000, "timing.ctrl_write_ns": 0}, "write"),
    # latency-bound QD 1 reads, ~5.2 ms per I/O (the NBD path adds ~0.2 ms)
    ("randread", 1, {"timing.host_overhead_us": 5000}, "read"),
])
def test_fio_over_nbd_matches_simulated_time(tmp_path, rw, qd, overrides, sim_key):
    from ssdpts.simdrive.nbd import serve

    params = load_params("sata-mlc", scale=0.25, overrides=overrides)
    sock = str(tmp_path / "sim.sock")
    ready, stop = threading.Event(), threading.Event()
    th = threading.Thread(target=serve, args=(params, sock), kwargs=dict(ready=ready, stop=stop), daemon=True)
    th.start()
    assert ready.wait(10)
    try:
        cmd = ["fio", "--name=nbdsim", "--ioengine=nbd", f"--uri=nbd+unix:///?socket={sock}", f"--rw={rw}",
               "--bs=4k", f"--iodepth={qd}", "--runtime=2", "--time_based", "--output-format=json"]
        out = subprocess.run(cmd, capture_output=True, text=True, timeout=60)
        assert out.returncode == 0, out.stderr
        real = _fio_json(out.stdout)["jobs"][0][sim_key]
    finally:
        stop.set()
        th.join(5)
    sim = SimDrive(params).run_job(dict(rw=rw, bs=4096, iodepth=qd, runtime_ns=2_000_000_000))[sim_key]
    print(f"{rw} QD{qd}: fio over NBD {real['iops']:.0f} IOPS, simulated {sim['iops']:.0f} IOPS")
    assert real["total_ios"] > 0
    assert abs(real["iops"] / sim["iops"] - 1) < 0.10, (real["iops"], sim["iops"])
