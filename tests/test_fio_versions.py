"""fio versions: the binary is chosen with SSDPTS_FIO and checked (one line), and the recorded JSON of every
tested release (tests/fixtures/fio/<version>/, README there) parses to the same figures."""

from __future__ import annotations

import gzip
import json
import os
from pathlib import Path

import pytest

from conftest import TINY, ssdpts
from ssdpts.engines.fiodiff import diff_job
from ssdpts.engines.fiojson import parse_job, parse_output
from ssdpts.engines.fio_versions import (FIO_ENV, MIN_FIO, TESTED, check_options, fio_binary, fio_version,
                                        parse_version)
from ssdpts.engines.results import merge_bins, percentile_from_bins
from ssdpts.errors import SsdptsError
from ssdpts.workload import Workload


def _script(tmp_path: Path, name: str, prints: str, mode: int = 0o755) -> Path:
    p = tmp_path / name
    p.write_text(f"#!/bin/sh\necho '{prints}'\n")
    p.chmod(mode)
    return p


@pytest.mark.parametrize("printed, found", [("fio-3.33\n", (3, 33)), ("fio-3.42-12-gabc123", (3, 42)),
                                            ("fio-3.19", (3, 19)), ("fio 2.1", None), ("echo", None)])
def test_parse_version(printed, found):
    assert parse_version(printed) == found


def test_tested_versions_are_supported_and_minimum_is_the_oldest_tested():
    assert min(parse_version(v) for v in TESTED) == MIN_FIO


def test_default_is_fio_on_the_path(monkeypatch):
    monkeypatch.delenv(FIO_ENV, raising=False)
    assert fio_binary() == "fio"


def test_env_names_the_binary(monkeypatch, tmp_path):
    fake = _script(tmp_path, "fio", "fio-3.36")
    monkeypatch.setenv(FIO_ENV, str(fake))
    assert fio_binary() == str(fake) and fio_version() == "fio-3.36"


def test_env_may_name_a_program_on_the_path(monkeypatch, tmp_path):
    fake = _script(tmp_path, "fio-3.28", "fio-3.28")
    monkeypatch.setenv("PATH", f"{tmp_path}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setenv(FIO_ENV, "fio-3.28")
    assert fio_binary() == str(fake) and fio_version() == "fio-3.28"


@pytest.mark.parametrize("make, message", [
    (lambda d: d / "missing", "is not an executable file"),
    (lambda d: d, "is not an executable file"),                                         # a directory
    (lambda d: _script(d, "fio", "fio-3.36", mode=0o644), "is not an executable file"),
    (lambda d: _script(d, "notfio", "hello 1.0"), "is not fio"),
    (lambda d: _script(d, "oldfio", "fio-3.18"),
     f"fio-3.18, older than the oldest supported fio-{MIN_FIO[0]}.{MIN_FIO[1]}"),
])
def test_bad_binary_is_one_clear_line(monkeypatch, tmp_path, make, message):
    monkeypatch.setenv(FIO_ENV, str(make(tmp_path)))
    with pytest.raises(SsdptsError, match=message) as e:
        fio_version()
    assert "\n" not in str(e.value) and FIO_ENV in str(e.value)


def test_cli_refuses_old_fio_before_anything_is_written(tmp_path):
    old = _script(tmp_path, "fio", "fio-3.16")
    results, img = tmp_path / "results", tmp_path / "x.img"
    p = ssdpts("run", str(img), "--size", "8M", "--profile", str(TINY), "--tests", "iops", "--results", str(results),
               check=False, env={**os.environ, FIO_ENV: str(old)})
    lines = p.stderr.strip().splitlines()
    assert p.returncode == 2 and len(lines) == 1 and "fio-3.16, older than" in lines[0], p.stderr
    assert not results.exists() and not img.exists()


# --- recorded output of every tested version (tests/fixtures/fio/README.md) ---

FIXTURES = Path(__file__).parent / "fixtures" / "fio"
PERCENTILES = {"99", "99.9", "99.99", "99.999"}
VERSIONS = sorted((d.name for d in FIXTURES.iterdir() if d.is_dir()), key=parse_version)


def _text(version: str, name: str) -> str:
    return gzip.decompress((FIXTURES / version / f"{name}.json.gz").read_bytes()).decode()


def _documents(text: str) -> list[dict]:
    decoder, docs, pos = json.JSONDecoder(), [], 0
    while (start := text.find("{", pos)) >= 0:
        doc, pos = decoder.raw_decode(text, start)
        docs.append(doc)
    return docs


def _bins_mean(bins: dict[int, int]) -> float:
    return sum(k * v for k, v in bins.items()) / sum(bins.values())


def test_every_tested_version_has_fixtures():
    assert VERSIONS == list(TESTED)


@pytest.mark.parametrize("version", VERSIONS)
def test_json_plus_parses_to_the_same_figures(version):
    doc, (cell,) = parse_output(_text(version, "randrw"))
    assert doc["fio version"] == version
    assert cell.name == "randrw_4K_65-35" and cell.latency_source == "lat"
    assert 0.55 < cell.read.ios / (cell.read.ios + cell.write.ios) < 0.75       # rwmixread=65
    assert 200 <= cell.runtime_ms <= 2000                                       # runtime=250ms
    for d in (cell.read, cell.write):
        assert d.ios > 100 and d.bytes == 4096 * d.ios
        assert d.iops == pytest.approx(d.ios / cell.runtime_ms * 1000, rel=0.02)
        assert d.bw_bytes == pytest.approx(d.iops * 4096, rel=0.02)
        # total latency (submit to completion): the bins are lat_ns's, the same I/Os and mean as its stats
        assert sum(d.bins.values()) == d.ios
        assert _bins_mean(d.bins) == pytest.approx(d.lat_mean_ns, rel=0.03)
        assert 0 < d.lat_min_ns <= d.lat_mean_ns <= d.lat_max_ns
        assert set(d.percentiles) == PERCENTILES
        values = [d.percentiles[p] for p in sorted(PERCENTILES, key=float)]
        assert values == sorted(values) and values[-1] <= d.lat_max_ns * 1.02
        assert percentile_from_bins(d.bins, 99) == pytest.approx(d.percentiles["99"], rel=0.02)


@pytest.mark.parametrize("version", VERSIONS)
def test_status_stream_cuts_into_intervals_that_add_up(version):
    docs = _documents(_text(version, "stream"))
    assert len(docs) >= 2 and all(d["fio version"] == version for d in docs)
    jobs = [d["jobs"][0] for d in docs]
    cuts = [diff_job(cur, prev) for prev, cur in zip([None, *jobs], jobs)]
    final = parse_job(jobs[-1])
    for direction in ("read", "write"):
        total = getattr(final, direction)
        parts = [getattr(c, direction) for c, _ in cuts]
        assert sum(p.ios for p in parts) == total.ios > 100
        assert sum(p.bytes for p in parts) == total.bytes == 4096 * total.ios
        assert merge_bins(p.bins for p in parts) == total.bins
        for p in parts:
            if p.ios:
                assert set(p.percentiles) == PERCENTILES and p.lat_min_ns <= p.lat_mean_ns <= p.lat_max_ns
    assert sum(ms for _, ms in cuts) == pytest.approx(final.runtime_ms, abs=1)


def test_a_cell_needing_a_newer_option_is_refused_up_front(tmp_path):
    """fio < 3.24 has no sync=dsync (fio-3.19 drops the job mid-run): the variants test is refused before the
    run starts, the others run."""
    fio319 = _script(tmp_path, "fio", "fio-3.19")
    results, img = tmp_path / "results", tmp_path / "x.img"
    p = ssdpts("run", str(img), "--size", "64M", "--profile", "quick", "--tests", "iops,variants",
               "--results", str(results), check=False, env={**os.environ, FIO_ENV: str(fio319)})
    lines = p.stderr.strip().splitlines()
    assert p.returncode == 2 and len(lines) == 1, p.stderr
    assert "fio-3.19 lacks sync=dsync" in lines[0] and "test variants" in lines[0] and "fio >= 3.24" in lines[0]
    assert not results.exists() and not img.exists()


def test_newer_options_are_checked_against_the_release():
    dsync = Workload(name="v_dsync", rw="randwrite", bs=4096, sync="dsync", runtime_s=1.0)
    check_options("fio-3.24", [("variants", dsync)])
    check_options("ssdsim-0.1.0", [("variants", dsync)])              # the simulated drive runs no fio
    with pytest.raises(SsdptsError, match="fio-3.23 lacks sync=dsync"):
        check_options("fio-3.23", [("variants", dsync)])
