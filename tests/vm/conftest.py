"""The QEMU test bed: one guest per test session, shared by every test marked `vm` (tests/vm/testbed.py)."""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

import pytest

from vm.testbed import BootTimeout, Guest, Unavailable, why_unavailable


def pytest_collection_modifyitems(items):
    for item in items:
        if "tests/vm/" in item.nodeid:
            item.add_marker(pytest.mark.vm)


@pytest.fixture(scope="session")
def vm():
    """The running guest; the tests skip with one line naming why when it cannot be started."""
    why = why_unavailable()
    if why:
        pytest.skip(f"QEMU test bed unavailable: {why}")
    # not under pytest's basetemp: other pytest sessions on this machine prune old basetemps while it runs
    guest = Guest(Path(tempfile.mkdtemp(prefix="ssdpts-vm-")))
    try:
        guest.start()
    except (Unavailable, BootTimeout) as e:
        shutil.rmtree(guest.workdir, ignore_errors=True)     # start() stopped the guest; its folder goes too
        if isinstance(e, BootTimeout):
            pytest.fail(f"QEMU test bed: {e}")
        pytest.skip(f"QEMU test bed unavailable: {e}")
    print(f"\nQEMU guest booted in {guest.boot_seconds:.1f} s; drives {guest.devices}")
    try:
        yield guest
    finally:
        guest.stop()
        shutil.rmtree(guest.workdir, ignore_errors=True)
