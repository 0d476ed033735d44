"""`report --claimed` of a run whose only measurement of a claim is the block-size sweep (seed 002's
`review-endurance`: no throughput or IOPS test, bs-sweep at 4K): every claim of docs/examples/claimed-mx300.toml
showed "not measured". The random claims are now the sweep's fresh 4K cells; the sequential ones (128K) say why
not. The truth is the simulator's own per-job counts in each fresh round's raw output."""

from __future__ import annotations

import json

import pytest

from conftest import HERE, run_completed, tiny_with
from ssdpts.report.claimed import claim_rows, load_claims

pytestmark = pytest.mark.no_end_report

CLAIMS = HERE.parent / "docs" / "examples" / "claimed-mx300.toml"


@pytest.fixture(scope="module")
def swept(tmp_path_factory):
    d = tmp_path_factory.mktemp("claims-sweep")
    profile = tiny_with(d / "sweep.toml", '[tests.bs-sweep]\nblock_sizes = ["4k"]\ncell_runtime = "200ms"\n')
    rid, store = run_completed(f"sim:{HERE / 'profiles' / 'sim-small.toml'}", d / "results", profile, "bs-sweep")
    return store, rid


def _simulator_job(store, rid, rw: str) -> tuple[float, str]:
    """The fresh 4K `rw` cell as the simulator ran it: IOPS from its own job result (I/Os over its runtime),
    and "TCn/QDm" from the workload the engine was given."""
    for r in store.rounds(rid, "bs-sweep", "fresh"):
        jobs = json.loads(store.raw_output(r.id))["jobs"]
        for workload, job in zip(r.workloads, jobs):
            if workload["rw"] == rw:
                d = job["read" if "read" in rw else "write"]
                return d["total_ios"] / (job["job_runtime"] / 1000), f"TC{workload['threads']}/QD{workload['iodepth']}"
    raise AssertionError(f"no fresh {rw} cell")


def test_seed_002_claims_are_matched_to_the_sweep_or_say_why_not(swept):
    store, rid = swept
    rows = {r["what"]: r for r in claim_rows(store, store.run(rid), load_claims(CLAIMS))}
    assert sorted(rows) == ["RND 4K 0/100", "RND 4K 100/0", "SEQ 128K read", "SEQ 128K write"]
    for what, rw, claimed in (("RND 4K 100/0", "randread", 92000), ("RND 4K 0/100", "randwrite", 83000)):
        r = rows[what]
        assert r["claimed"] == claimed and r["basis_key"] == "fob"
        iops, load = _simulator_job(store, rid, rw)
        assert r["measured"] == pytest.approx(iops, rel=0.01)
        assert r["basis"].startswith("fresh out of box: bs-sweep fresh state") and f"{rw} at {load}" in r["basis"]
    for d in ("read", "write"):
        r = rows[f"SEQ 128K {d}"]
        assert r["measured"] is None and r["basis_key"] is None
        assert r["basis"] == f"not measured (this run has no throughput test; its bs-sweep ran {d} at 4K only)"
