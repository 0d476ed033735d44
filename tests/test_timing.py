"""Every absolute time the engine uses is declared in one place (realtime/timing.py), documented, and
tested where a round or process outlives it; nothing else in the engine writes a time of its own."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from ssdpts.errors import SsdptsError
from ssdpts.realtime import timing
from ssdpts.targets import purge

ROOT = Path(__file__).resolve().parents[1]
CONSTANTS = [n for n in vars(timing) if n.isupper()]


def test_every_constant_is_explained_in_the_module_and_in_the_docs():
    docs = (ROOT / "docs" / "testing.md").read_text()
    assert CONSTANTS
    for name in CONSTANTS:
        assert name in timing.__doc__, name
        assert f"`{name}`" in docs, f"docs/testing.md does not list {name}"


def test_every_test_named_for_a_constant_exists():
    for path in set(re.findall(r"tests/[\w/]+\.py", timing.__doc__)):
        assert (ROOT / path).exists(), path


def test_the_engine_writes_no_timeout_of_its_own():
    files = [*(ROOT / "src/ssdpts/engines").glob("*.py"), *(ROOT / "src/ssdpts/realtime").glob("*.py"),
             ROOT / "src/ssdpts/targets/purge.py", ROOT / "src/ssdpts/targets/sim.py"]
    for f in files:
        text = f.read_text()
        assert not re.search(r"timeout=\d|wait_for\([^)]*, \d", text), f"{f.name} has a time of its own"


def test_a_purge_command_that_outlives_its_timeout_stops_with_one_line(monkeypatch):
    monkeypatch.setattr(purge, "PURGE_TIMEOUT_S", 0.2)
    with pytest.raises(SsdptsError, match=r"did not finish in .* h; check the drive"):
        purge._run(["sleep", "5"])
