"""The profile keys of `span-sweep`: declared apart from how it runs, so that validating a profile
(plan, check, show) imports no round loop."""

from __future__ import annotations

from dataclasses import dataclass

from ...settings import BLOCK_SIZE, BOOL, Setting, TestSettings, key, list_of, size_ok
from ...units import parse_size
from ..fill import fill_block_size_key


def _span_ok(v) -> bool:
    if isinstance(v, str) and v.strip().endswith("%"):
        return 0 < float(v.strip()[:-1]) <= 100
    return size_ok(v)


def _span(v) -> tuple[str, float]:
    """("%", percent of the capacity) or ("bytes", n)."""
    if isinstance(v, str) and v.strip().endswith("%"):
        return "%", float(v.strip()[:-1])
    return "bytes", float(parse_size(v))


SPANS = list_of(Setting('a span like "4g" (bytes) or "25%" (of the capacity)', _span_ok, _span),
                'a list of spans like ["1g", "4g", "16g", "100%"]')


@dataclass(frozen=True)
class SpanSweepSettings(TestSettings):
    spans: tuple[tuple[str, float], ...] = key(SPANS, ["1g", "4g", "16g", "64g", "100%"],
                                               "LBA spans of the random I/O, from the target's start")
    block_size: int = key(BLOCK_SIZE, "4k", "block size of the random reads (and writes)")
    writes: bool = key(BOOL, False, "also RND writes at every span (after its reads)")
    fill_block_size: int = fill_block_size_key("block size of the SEQ fill of the largest span")
