"""Reference workloads (issue 22): pgbench captured for real on a loop device, and the shipped workload files.

The capture test costs about 20 s (PostgreSQL start, pgbench -i, 2 s warm-up, 10 s captured); it is skipped with
one line where PostgreSQL or root is missing.
"""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest

from apps import APPS, WORKLOAD_SUFFIX, WORKLOADS_DIR, capture_app
from ssdpts.capture.model import load

ROOT = Path(__file__).resolve().parents[1]
KIB = 1024


@pytest.fixture(scope="module")
def pgbench_capture(tmp_path_factory):
    reason = APPS["pgbench"].missing()
    if reason:
        pytest.skip(f"pgbench capture: {reason}")
    out = tmp_path_factory.mktemp("pgbench") / "pgbench.workload.json"
    return capture_app("pgbench", 10, 2, out, recipe="tests/test_apps_capture.py")


@pytest.mark.device
@pytest.mark.slow
def test_pgbench_capture_is_plausible(pgbench_capture):
    # No time bound: it waits for pgbench's commits (each one a WAL write), a fixed 10 s capture in 2 s steps.
    # Beside four busy loops: 5,077 I/Os (1,000 asked) and 326 in the quietest step (the 16-client phase: more
    # clients than CPU), so a loaded host shrinks the counts, not the shape asserted below.
    c = pgbench_capture
    assert c.ios > 1000, "pgbench at 1-16 clients commits thousands of transactions in 10 s, each with a WAL write"
    writes = sum(s.ios for s in c.streams if s.stream.rw == "write")
    assert writes / c.ios > 0.9, "the tables fit in RAM: the device sees writes (WAL, checkpoints, journal)"
    # Each commit writes the WAL's current 8 KiB page again at the same offset (its new records appended inside
    # the page): those writes are random in the RWSW sense (not starting where the previous one ended).
    eight_k = sum(s.ios for s in c.streams if s.stream.bs == 8 * KIB and s.stream.rw == "write")
    assert eight_k / c.ios > 0.5, "PostgreSQL writes 8 KiB pages (WAL and data)"
    assert c.top(1)[0].stream.bs == 8 * KIB
    assert len(c.steps) == 5 and all(step.ios > 0 for step in c.steps)
    assert sum(step.ios for step in c.steps) == c.ios
    assert 0 <= c.lba_min_bytes < c.lba_max_bytes <= c.device_size_bytes == APPS["pgbench"].fs_size
    # PostgreSQL fsyncs at every commit: flushes (no sector; they complete at sector -1) must leave the depth
    # too, or it grows by one per commit. The loop device holds at most nr_requests (128) plus its flush.
    assert c.queue_depth.samples == c.ios and 1 <= c.queue_depth.mean and max(c.queue_depth.histogram) <= 129
    assert c.source.command == "tests/test_apps_capture.py" and "pgbench" in c.source.note


def test_reference_workloads_ship():
    files = {p.name.removesuffix(WORKLOAD_SUFFIX): p for p in WORKLOADS_DIR.glob(f"*{WORKLOAD_SUFFIX}")}
    assert set(files) == set(APPS), "bench/capture_apps.py makes one file per application"
    for name, path in files.items():
        c = load(path)
        assert c.streams and len(c.steps) >= 10 and c.ios == sum(s.ios for s in c.streams) > 10_000
        assert c.source.kind == "tracefs" and c.source.command.startswith(f"python bench/capture_apps.py {name}")
        assert APPS[name].note in c.source.note, f"{name}: the file says how it was captured"
        assert "lost" not in c.source.note, f"{name}: the capture kept up with the application"
        assert all(step.ios for step in c.steps), f"{name}: the application was busy in every step"


def test_shipped_workloads_differ_in_shape():
    """PostgreSQL's 8 KiB pages against ext4's 4 KiB journal blocks and small files allocated side by side."""
    top = {name: load(WORKLOADS_DIR / f"{name}{WORKLOAD_SUFFIX}").top(1)[0].stream.label for name in APPS}
    assert top == {"pgbench": "RND 8K W", "small-files": "SEQ 4K W"}


def test_workload_files_are_package_data():
    include = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["maturin"]["include"]
    assert {"path": f"{WORKLOADS_DIR.relative_to(ROOT)}/*.json", "format": "sdist"} in include
