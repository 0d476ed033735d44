"""The metrics of a cell (`CellResult.metric`, tracker labels): the unit each is stored in and the unit it is shown in.

Stored values stay in the engine's units (IOPS, bytes/s, ns); people read IOPS, MiB/s and µs. This is the one
table of both, for `show`, the console, the report's plots and the exports.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class MetricUnit:
    stored: str          # unit of the stored value: "IOPS", "B/s", "ns"
    shown: str           # unit people read: "IOPS", "MiB/s", "µs"
    scale: float         # shown value = stored value * scale
    decimals: int        # decimals of the shown value

    def show(self, value: float) -> str:
        """A stored value in display units: '93,276 IOPS', '845.2 MiB/s', '93.3 µs'."""
        return f"{value * self.scale:,.{self.decimals}f}" + (f" {self.shown}" if self.shown else "")


IOPS = MetricUnit("IOPS", "IOPS", 1.0, 0)
BANDWIDTH = MetricUnit("B/s", "MiB/s", 1 / 2**20, 1)
LATENCY = MetricUnit("ns", "µs", 1e-3, 1)
UNKNOWN = MetricUnit("", "", 1.0, 6)

METRICS: dict[str, MetricUnit] = {
    "iops": IOPS, "read_iops": IOPS, "write_iops": IOPS,
    "read_bw": BANDWIDTH, "write_bw": BANDWIDTH, "bw": BANDWIDTH,
    "lat_mean": LATENCY, "lat_max": LATENCY,
}


def metric_of(label: str) -> str:
    """'rnd_4K_0-100 iops' -> 'iops'; a bare metric name stays as it is; a per-drive tracker of a parallel
    run ('rnd_4K_0-100 lat_mean @127.0.0.1:8765:/dev/loop0') has the metric before the drive."""
    return label.split(" @", 1)[0].rsplit(" ", 1)[-1]


def unit_of(label: str) -> MetricUnit:
    """The units of a metric or of a tracker label (UNKNOWN for a name this table does not know)."""
    return METRICS.get(metric_of(label), UNKNOWN)
