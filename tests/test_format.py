"""`ssdpts format DEV --lba-format N` (seed 003-6: ISDCT `nvmeformat LBAFormat=3 SecureEraseSetting=1`).

No NVMe namespace exists on this machine: the LBA-format choice is checked against a namespace's recorded
formats (the facts `ssdpts info` reads from nvme id-ns), and the refusals run through the real CLI."""

from __future__ import annotations

import pytest

from conftest import ssdpts
from ssdpts.errors import SsdptsError
from ssdpts.targets.base import Target
from ssdpts.targets.facts import DeviceFacts
from ssdpts.targets.identify import LbaFormat
from ssdpts.targets.purge import chosen_lba_format, nvme_format_command

FORMATS = [LbaFormat(0, 512, 0, 2, True), LbaFormat(1, 4096, 0, 0, False), LbaFormat(3, 4096, 8, 1, False)]


def namespace() -> Target:
    return Target("block", "/dev/nvme9n1", "/dev/nvme9n1", 2**30,
                  info={"facts": DeviceFacts(lba_formats=FORMATS).to_dict()})


def test_the_lba_format_is_one_the_namespace_has():
    assert chosen_lba_format(namespace(), 3) == FORMATS[2]
    assert nvme_format_command("/dev/nvme9n1", 3) == ["nvme", "format", "/dev/nvme9n1", "--ses=1", "--lbaf=3",
                                                      "--force"]
    assert nvme_format_command("/dev/nvme9n1") == ["nvme", "format", "/dev/nvme9n1", "--ses=1", "--force"]
    with pytest.raises(SsdptsError, match=r"no LBA format 2; it has LBAF 0: 512\+0 \(in use\), LBAF 1: 4096\+0, "
                                          r"LBAF 3: 4096\+8"):
        chosen_lba_format(namespace(), 2)


def test_a_target_without_lba_formats_is_refused_in_one_line(loopdev):
    for target in (loopdev, "sim:client"):
        p = ssdpts("format", target, "--lba-format", "1", "--destroy-data", check=False)
        assert p.returncode != 0 and "Traceback" not in p.stderr
        assert p.stderr.strip().count("\n") == 0 and "needs a local NVMe namespace" in p.stderr
