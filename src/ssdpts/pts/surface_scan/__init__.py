"""Surface scan (seed 001's "Full Diagnostic Scan"): every block read (or written and verified), per-region
MiB/s and max latency, slow regions and I/O errors."""

from __future__ import annotations

from ..spec import TestSpec, deferred

part = deferred(__name__)     # its summary, settings, run and renderers: each imported when first used

TEST = TestSpec(
    name="surface-scan", title="Surface Scan (read / write-verify pass)",
    kind="study", order=20, summary=part("summary", "SurfaceScanSummary"),
    run=part("run", "run"), plan=part("run", "plan"), renderers=part("render", "RENDERERS"),
    settings=part("settings", "SurfaceScanSettings"),
    description="SEQ reads (or writes with fio verify) over the active range in regions: MiB/s and max latency "
                "per region, slow regions, I/O errors",
)
