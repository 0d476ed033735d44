"""fio versions: the binary is chosen with SSDPTS_FIO and checked (one line), and the recorded JSON of every
tested release (tests/fixtures/fio/<version>/, README there) parses to the same figures."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from conftest import TINY, ssdpts
from ssdpts.engines.fio_versions import FIO_ENV, MIN_FIO, TESTED, fio_binary, fio_version, parse_version
from ssdpts.errors import SsdptsError


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
