"""The profile keys of `surface-scan`: declared apart from how it runs, so that validating a profile
(plan, check, show) imports no round loop."""

from __future__ import annotations

from dataclasses import dataclass

from ...settings import BLOCK_SIZE, FRACTION, POS_INT, SIZE, TestSettings, choice, key


MODES = ("read", "write-verify")


@dataclass(frozen=True)
class SurfaceScanSettings(TestSettings):
    mode: str = key(choice(*MODES), "read", "read: read every block, nothing written; write-verify: write every "
                                            "block with a checksum and read it back (needs --destroy-data)")
    regions: int = key(POS_INT, 64, "the scanned range is cut into this many regions")
    region_size: int | None = key(SIZE, None, 'one region\'s size instead of a count, e.g. "1g"')
    block_size: int = key(BLOCK_SIZE, "1m", "block size of the pass")
    slow_threshold: float = key(FRACTION, 0.5, "a region below this share of the median MiB/s is listed as slow")
    verify: str = key(choice("crc32c", "md5", "sha256", "xxhash"), "crc32c", "fio verify checksum (write-verify)")
